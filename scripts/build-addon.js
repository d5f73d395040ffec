#!/usr/bin/env node
'use strict';
// Contributors' build of the native addon from source (npm run build, npm test): node-gyp rebuild into
// build/Release, skipped when build/Release/smc_run.node is newer than binding.gyp and native/addon/*. The npm
// tarball carries prebuilds/ instead (npm pack: prepack -> npm run build:prebuilds) and has no install or
// prepare script; `npm run build:native` forces a rebuild (and is the from-source command for consumers).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const out = path.join(root, 'build', 'Release', 'smc_run.node');
// the addon's sources (native/preload and native/bpf are the other two programs, with builds of their own)
const inputs = ['binding.gyp', ...fs.readdirSync(path.join(root, 'native', 'addon')).filter((f) => /\.(cc|h)$/.test(f)).map((f) => path.join('native', 'addon', f))];
const newest = Math.max(...inputs.map((f) => fs.statSync(path.join(root, f)).mtimeMs));
let built = 0;
try {
  built = fs.statSync(out).mtimeMs;
} catch {}
if (built > newest) process.exit(0);

let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] });
} catch {
  process.stderr.write('smc-run: node-gyp not found (npm install first); the native addon was not built\n');
  process.exit(1);
}
// The running Node's own headers when it has them (as scripts/build-prebuilds.sh): node-gyp then downloads
// nothing, and a flaky download (seen here: "gyp WARN install got an error") cannot fail the build
const nodedir = path.resolve(process.execPath, '..', '..');
const args = fs.existsSync(path.join(nodedir, 'include', 'node', 'node_api.h')) ? ['rebuild', `--nodedir=${nodedir}`] : ['rebuild'];
const r = spawnSync(process.execPath, [gyp, ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
if (r.status !== 0) {
  const detail = (r.stderr || '').split('\n').filter((l) => /error/i.test(l)).slice(0, 3).join(' | ');
  process.stderr.write(`smc-run: could not build the native addon (${detail || 'node-gyp failed'}); needs python3, make, g++\n`);
  process.exit(1);
}
