#!/usr/bin/env node
'use strict';
// node bench/preload/instructions.cjs [--small N] [--large N] [--rounds R]: what the LD_PRELOAD library
// costs per connection, in user-space instructions (valgrind's callgrind, which host load does not move)
// and in system calls (strace -c), for a C client (bench/preload/conn-loop.c) against an smc-bench server
// outside the measure. Sides, each in test mode (SMC_RUN_SOCKET_FAMILY=inet: the library's sockets are
// inet, so the host needs no SMC): no library; the bare socket() interposer (bench/c/socket-preload.c,
// built with AF_INET: what smc_run does, reduced to its core); the library without rules; with a rule
// that includes the destination; with one that excludes it (decided in place); and, when --old FILE
// names a previous smc-preload.c, that library with the including rule (its swap at connect), as
// "today's". SMALL and LARGE connections per side: the difference over LARGE - SMALL is per connection,
// start-up cancelled. Each side twice per round (the second is the A/A control), rounds in rotated order.
// Writes bench/results/preload-instructions.json.
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const SMALL = Number(arg('--small', 50));
const LARGE = Number(arg('--large', 550));
const ROUNDS = Number(arg('--rounds', 3));
const OLD = arg('--old', undefined);
const ROOT = path.join(__dirname, '..', '..');
const LIB = path.join(ROOT, 'build', 'Release', 'smc-preload.so');
for (const tool of ['valgrind', 'strace', 'gcc']) {
  if (spawnSync(tool, ['--version']).status !== 0) {
    process.stderr.write(`preload-instructions: ${tool} is not installed\n`);
    process.exit(1);
  }
}
if (!fs.existsSync(LIB)) {
  process.stderr.write('preload-instructions: build/Release/smc-preload.so is missing: run npm run build\n');
  process.exit(1);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-preload-bench-'));
const cc = (out, args) => execFileSync('gcc', ['-O2', '-o', path.join(work, out), ...args], { stdio: 'inherit' });
cc('conn-loop', [path.join(__dirname, 'conn-loop.c')]);
cc('smc-bench', [path.join(ROOT, 'bench', 'c', 'smc-bench.c')]);
// the bare interposer, making inet sockets as the library does in test mode
const bare = fs.readFileSync(path.join(ROOT, 'bench', 'c', 'socket-preload.c'), 'utf8').replace('int fd = real(AF_SMC, type, domain == AF_INET ? 0 : 1);', 'int fd = real(domain, type, 0);');
fs.writeFileSync(path.join(work, 'bare.c'), bare);
cc('bare.so', ['-shared', '-fPIC', path.join(work, 'bare.c'), '-ldl']);
if (OLD) cc('old.so', ['-std=gnu11', '-shared', '-fPIC', '-fvisibility=hidden', OLD, '-ldl']);

const test = { SMC_RUN_SOCKET_FAMILY: 'inet', SMC_RUN_TCP_RETRY: '1' };
const SIDES = [
  { name: 'no library', env: {} },
  { name: 'bare socket() interposer', env: { LD_PRELOAD: path.join(work, 'bare.so') } },
  { name: 'library, no rules', env: { LD_PRELOAD: LIB, ...test } },
  { name: 'library, --include (SMC)', env: { LD_PRELOAD: LIB, ...test, SMC_RUN_INCLUDE: '127.0.0.0/8' } },
  { name: 'library, --exclude (TCP in place)', env: { LD_PRELOAD: LIB, ...test, SMC_RUN_EXCLUDE: '127.0.0.0/8' } },
  ...(OLD ? [{ name: "before: library, --include (swap at connect)", env: { LD_PRELOAD: path.join(work, 'old.so'), ...test, SMC_RUN_INCLUDE: '127.0.0.0/8' } }] : []),
];

async function main() {
  const server = spawn(path.join(work, 'smc-bench'), ['server'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => server.stdout.on('data', (d) => { const m = /"port":(\d+)/.exec(String(d)); if (m) resolve(Number(m[1])); }));
  const base = { ...process.env, LD_PRELOAD: '', SMC_RUN_INCLUDE: '', SMC_RUN_EXCLUDE: '' };
  const count = (env, n) => {
    const r = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', path.join(work, 'conn-loop'), String(port), String(n)], { env: { ...base, ...env }, encoding: 'utf8' });
    const m = /Collected : (\d+)/.exec(r.stderr);
    if (r.status !== 0 || !m) throw new Error(`valgrind: ${r.stderr.split('\n').slice(-4).join(' ')}`);
    return Number(m[1]);
  };
  const syscalls = (env, n) => {
    const r = spawnSync('strace', ['-f', '-c', '-o', path.join(work, 'strace.txt'), path.join(work, 'conn-loop'), String(port), String(n)], { env: { ...base, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`strace: ${r.stderr}`);
    // the summary's last line: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
    const total = /^\s*100\.00\s+\S+\s+\S+\s+(\d+)\s+(?:\d+\s+)?total\s*$/m.exec(fs.readFileSync(path.join(work, 'strace.txt'), 'utf8'));
    if (!total) throw new Error('strace: no summary line');
    return Number(total[1]);
  };
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = SIDES.map((_, i) => SIDES[(i + r) % SIDES.length]);
    const per = {};
    for (const s of order) {
      for (const pass of ['a', 'b']) {
        const small = count(s.env, SMALL), large = count(s.env, LARGE);
        per[`${s.name}|${pass}`] = (large - small) / (LARGE - SMALL);
      }
    }
    rounds.push(per);
    process.stderr.write(`round ${r + 1}: ${JSON.stringify(per)}\n`);
  }
  const sys = {};
  for (const s of SIDES) sys[s.name] = (syscalls(s.env, LARGE) - syscalls(s.env, SMALL)) / (LARGE - SMALL);
  spawnSync(path.join(work, 'smc-bench'), ['quit', '-p', String(port)]);
  server.kill();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bareName = 'bare socket() interposer';
  const rows = SIDES.map((s) => {
    const a = rounds.map((p) => p[`${s.name}|a`]);
    const aa = rounds.map((p) => p[`${s.name}|b`] / p[`${s.name}|a`]);
    const vsBare = rounds.map((p) => p[`${s.name}|a`] / p[`${bareName}|a`]);
    return { side: s.name, instructionsPerConnection: a.map(Math.round), median: Math.round(median(a)), perBare: { median: median(vsBare), min: Math.min(...vsBare), max: Math.max(...vsBare) }, aa: { min: Math.min(...aa), max: Math.max(...aa) }, syscallsPerConnection: sys[s.name] };
  });
  const out = { date: new Date().toISOString(), small: SMALL, large: LARGE, rounds: ROUNDS, unit: 'user-space instructions per connection (callgrind), system calls per connection (strace -f -c)', rows };
  fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'preload-instructions.json'), `${JSON.stringify(out, null, 2)}\n`);
  for (const r of rows) console.log(`${r.side.padEnd(48)} ${String(r.median).padStart(8)} instr/conn  x${r.perBare.median.toFixed(3)} of bare (${r.perBare.min.toFixed(3)}-${r.perBare.max.toFixed(3)})  A/A ${r.aa.min.toFixed(4)}-${r.aa.max.toFixed(4)}  ${r.syscallsPerConnection.toFixed(1)} syscalls/conn`);
  fs.rmSync(work, { recursive: true, force: true });
}
main().catch((e) => { console.error(`preload-instructions: ${e.message}`); process.exit(1); });
