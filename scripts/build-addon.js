#!/usr/bin/env node
'use strict';
// npm "install" step: build the native addon with node-gyp. A failed build must not fail the install:
// programs still run (on TCP, with one notice saying why) and `npm rebuild smc-run` can retry later.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] });
} catch {
  process.stderr.write('smc-run: node-gyp not found; the native addon was not built (programs will run on TCP)\n');
  process.exit(0);
}
const r = spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
if (r.status !== 0) {
  const detail = (r.stderr || '').split('\n').filter((l) => /error/i.test(l)).slice(0, 3).join(' | ');
  process.stderr.write(`smc-run: could not build the native addon (${detail || 'node-gyp failed'}); programs will run on TCP until "npm rebuild smc-run" succeeds (needs python3, make, g++)\n`);
}
process.exit(0);
