#!/usr/bin/env node
'use strict';
// Bundles the preload shim into two files (tsc emits it as small modules, and loading each small
// CommonJS module costs about 1 ms at start-up; the shim runs in every Node process):
//   dist/preload.js          what --require loads: arms the lazy hook, nothing else (a few KB)
//   dist/preload-runtime.js  loaded at the program's first TCP handle operation: config, addon, probe, hook
// Neither loads pino: the shim logs through src/log.ts's own writer.
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning', legalComments: 'none', external: ['pino', 'pino-pretty'] };
esbuild.buildSync({ ...common, entryPoints: [path.join(root, 'src', 'preload.ts')], outfile: path.join(root, 'dist', 'preload.js') });
esbuild.buildSync({ ...common, entryPoints: [path.join(root, 'src', 'hook', 'activate.ts')], outfile: path.join(root, 'dist', 'preload-runtime.js') });
