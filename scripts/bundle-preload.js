#!/usr/bin/env node
'use strict';
// Bundles the preload shim (dist/preload.js, which tsc emits as ~10 small modules) into one file: the
// shim runs in every Node process, and loading each small CommonJS module costs about 1 ms at start-up.
// pino and pino-pretty stay outside: they load lazily, on the first log line only.
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
esbuild.buildSync({
  entryPoints: [path.join(root, 'src', 'preload.ts')],
  outfile: path.join(root, 'dist', 'preload.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['pino', 'pino-pretty'],
  logLevel: 'warning',
  legalComments: 'none',
});
