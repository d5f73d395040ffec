'use strict';
// Connection-burst benchmark (issue #23), run in the SMC-D guest: time for one process to complete a burst
// of N concurrent connections (64 KiB echoed each, sha256-checked) to its own server, per configuration:
//   tcp            plain Node, no smc-run
//   smc-retry      smc-run (SMC-D; connects whose SMC handshake fails are retried over TCP)
//   smc-noretry    smc-run --no-tcp-retry (what the kernel alone gives)
//   hs1-*          the same with net.smc.limit_smc_hs=1 (the server falls back to TCP under handshake load)
// each with the server's listen backlog 511 (Node's default) or 4096 (net.core.somaxconn in the guest),
// and the mix that resulted (SMC-D client connections, server fallbacks, client handshake errors, from the
// kernel's counters). Usage: node bench/burst/run.cjs OUT.json [--counts 2000,1000] [--reps 1]
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { setSmcSysctls } = require('../lib/smc-sysctl.cjs');

const REPO = path.join(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'smc-run');
const SCENARIO = path.join(REPO, 'test', 'scenarios', 'burst.cjs');
const out = process.argv[2];
const arg = (n, d) => { const i = process.argv.indexOf(`--${n}`); return i >= 0 ? process.argv[i + 1] : d; };
const COUNTS = arg('counts', '2000,1000').split(',').map(Number);
const REPS = Number(arg('reps', '1'));

const CONFIGS = [
  { name: 'tcp', smc: false, backlog: 4096 },
  { name: 'smc-noretry', smc: true, retry: false, backlog: 4096 },
  { name: 'smc-retry', smc: true, retry: true, backlog: 4096 },
  { name: 'tcp', smc: false, backlog: 511 },
  { name: 'smc-noretry', smc: true, retry: false, backlog: 511 },
  { name: 'smc-retry', smc: true, retry: true, backlog: 511 },
  { name: 'hs1-noretry', smc: true, retry: false, hs1: true, backlog: 511 },
  { name: 'hs1-retry', smc: true, retry: true, hs1: true, backlog: 511 },
];

function burst(config, count) {
  const args = ['--count', String(count), '--backlog', String(config.backlog)];
  const env = { ...process.env };
  const argv = config.smc ? [process.execPath, BIN, process.execPath, SCENARIO, ...args] : [process.execPath, SCENARIO, ...args];
  if (config.smc && !config.retry) env.SMC_RUN_TCP_RETRY = '0';
  const t0 = Date.now();
  const r = spawnSync(argv[0], argv.slice(1), { env, encoding: 'utf8', timeout: 300_000 });
  const base = { config: config.name, backlog: config.backlog, count };
  const line = (r.stdout || '').split('\n').find((l) => l.startsWith('SCENARIO_RESULT '));
  if (!line) return { ...base, error: `exit ${r.status} ${r.signal || ''}: ${(r.stderr || '').slice(-500)}`, wallMs: Date.now() - t0 };
  const res = JSON.parse(line.slice('SCENARIO_RESULT '.length));
  return { ...base, wallMs: Date.now() - t0, ms: res.ms, completed: res.completed, failed: res.failed, corrupt: res.corrupt, errors: res.errors, tcpRetries: res.tcpRetries, delta: res.delta };
}

async function main() {
  const rows = [];
  const save = () => fs.writeFileSync(out, JSON.stringify({ kernel: require('node:os').release(), cpus: require('node:os').cpus().length, node: process.version, somaxconn: Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8')), rows }, null, 2) + '\n');
  const one = (rep, config, count) => {
    rows.push({ rep, ...burst(config, count) });
    save();
    process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`);
  };
  for (let rep = 0; rep < REPS; rep++) {
    for (const count of COUNTS) {
      for (const config of CONFIGS.filter((c) => !c.hs1)) one(rep, config, count);
      const prev = await setSmcSysctls({ limit_smc_hs: 1 });
      try {
        for (const config of CONFIGS.filter((c) => c.hs1)) one(rep, config, count);
      } finally {
        await setSmcSysctls(prev);
      }
    }
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
