#!/usr/bin/env node
'use strict';
// node bench/conn-instructions.cjs [--small N] [--large N]: the hook's per-connection cost counted in
// instructions (valgrind's callgrind), which, unlike wall or CPU time, barely moves from run to run: on
// a 2-vCPU VM, CPU time per connection of bench/workloads/conn.cjs spread 224-340 us between runs of the
// same side, more than the 2% that the connection-rate target allows. Each side (plain node; node with the
// preload in test mode) runs the workload with SMALL and LARGE connections; the difference divided by
// LARGE - SMALL is per connection, start-up cancelled. User space only: the hook's one extra syscall per
// socket (uv_tcp_open's ioctl) is kernel time, which callgrind does not count.
// Writes bench/results/conn-instructions.json; needs valgrind (Debian package).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const SMALL = arg('--small', 200);
const LARGE = arg('--large', 1200);
const ROOT = path.join(__dirname, '..');
const WORKLOAD = path.join(__dirname, 'workloads', 'conn.cjs');
const PRELOAD = path.join(ROOT, 'dist', 'preload.js');
if (!fs.existsSync(PRELOAD)) {
  process.stderr.write('conn-instructions: dist/preload.js is missing: run npm run build:ts\n');
  process.exit(1);
}
if (spawnSync('valgrind', ['--version']).status !== 0) {
  process.stderr.write('conn-instructions: valgrind is not installed (Debian package valgrind)\n');
  process.exit(1);
}

const plain = { ...process.env, NODE_OPTIONS: '' };
const hooked = { ...process.env, NODE_OPTIONS: `--require "${PRELOAD}"`, SMC_RUN_SOCKET_FAMILY: 'inet' };

function instructions(env, n) {
  const r = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, WORKLOAD, String(n)], { env, encoding: 'utf8' });
  const m = /Collected : (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`valgrind run failed (status ${r.status}): ${r.stderr.split('\n').slice(-5).join(' ')}`);
  return Number(m[1]);
}

// alternate the sides so that anything drifting on the machine touches both alike
const runs = {};
for (const n of [SMALL, LARGE]) {
  runs[`plain${n}`] = instructions(plain, n);
  runs[`hooked${n}`] = instructions(hooked, n);
}
const per = (side) => (runs[`${side}${LARGE}`] - runs[`${side}${SMALL}`]) / (LARGE - SMALL);
const result = {
  date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model, small: SMALL, large: LARGE, runs,
  perConnection: { plain: per('plain'), hooked: per('hooked') },
};
// a rate ratio as bench:overhead reports it: connections per instruction, hooked over plain
result.rateRatio = result.perConnection.plain / result.perConnection.hooked;
fs.writeFileSync(path.join(__dirname, 'results', 'conn-instructions.json'), JSON.stringify(result, null, 2) + '\n');
const k = (x) => Math.round(x).toLocaleString('en');
process.stdout.write(
  `user-space instructions per connection (connect + 1 B echo + close, ${SMALL} and ${LARGE} connections per run):\n` +
    `  plain node ${k(result.perConnection.plain)}, with the hook ${k(result.perConnection.hooked)}: rate ratio ${result.rateRatio.toFixed(4)} (target >= 0.98)\n` +
    `  start-up and ${SMALL} connections: plain ${k(runs[`plain${SMALL}`])}, with the preload ${k(runs[`hooked${SMALL}`])}\n`,
);
