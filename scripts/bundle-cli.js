#!/usr/bin/env node
'use strict';
// Bundles the CLI (src/cli/bin.ts, yargs included) into one ES module, dist/cli.mjs, which bin/smc-run
// execs for the tool commands. From tsc's output the CLI loads about 150 files (its own modules, yargs and
// yargs' dependencies, mostly through the ES module loader); one file costs less at every start, and most
// where file access is slow (a guest whose root is a 9p share, an emulated CPU). dist/cli/*.js stays for
// reading and for the tests that import modules.
// The bundle sits directly in dist/ so that src/package-root.ts's dist/.. holds; the banner gives the
// CommonJS parts their require, __filename and __dirname (the bundle's own).
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
esbuild.buildSync({
  entryPoints: [path.join(root, 'src', 'cli', 'bin.ts')],
  outfile: path.join(root, 'dist', 'cli.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
  // string-width's module builds an Intl.Segmenter when loaded: see scripts/string-width-lite.mjs
  alias: { 'string-width': path.join(root, 'scripts', 'string-width-lite.mjs') },
  // only `stats serve` logs through pino, and loads it when it starts: the other commands never read it
  external: ['pino'],
  banner: {
    js: [
      "import { createRequire as smcRunCreateRequire } from 'node:module';",
      "import { fileURLToPath as smcRunFileURLToPath } from 'node:url';",
      'const require = smcRunCreateRequire(import.meta.url);',
      'const __filename = smcRunFileURLToPath(import.meta.url);',
      "const __dirname = smcRunFileURLToPath(new URL('.', import.meta.url)).replace(/\\/$/, '');",
    ].join('\n'),
  },
});
