'use strict';
// In the SMC-D guest (bench/smcd/preload-compare.sh boots it): the same Node program (node-bench.cjs,
// server on CPU 1, client on CPU 0) under an LD_PRELOAD interposer of socket() (bench/c/socket-preload.c:
// what smc-tools' smc_run does, the zero-overhead baseline) and under `smc-run`, both ends SMC-D, rounds
// alternating the order. 1-byte ping-pong p50 and connection rate; every measured connection checked
// through sock_diag (getSmcInfo: SMC-D, no fallback) on both sides. Prints one JSON object.
//   node bench/smcd/preload-compare.cjs [--rounds N] [--dur S] [--warm S] [--out FILE]
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const NODE_BENCH = path.join(__dirname, 'node-bench.cjs');
const SO = path.join(ROOT, 'build', 'bench', 'socket-preload.so');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ROUNDS = Number(arg('rounds', '3'));
const DUR = arg('dur', '6');
const WARM = arg('warm', '2');
const OUT = arg('out', path.join(ROOT, 'bench', 'results', 'preload-compare.json'));
const hasTaskset = (() => { try { execFileSync('taskset', ['-c', '0', 'true']); return true; } catch { return false; } })();
const pin = (cpu, argv) => (hasTaskset ? ['taskset', '-c', cpu, ...argv] : argv);
const log = (...a) => console.error(`[preload-compare ${new Date().toISOString().slice(11, 19)}]`, ...a);

const base = { ...process.env };
delete base.NODE_OPTIONS;
delete base.SMC_RUN_SOCKET_FAMILY;
const MODES = {
  ldpreload: { env: { ...base, LD_PRELOAD: SO }, argv: (a) => [process.execPath, NODE_BENCH, ...a] },
  'smc-run': { env: base, argv: (a) => [BIN, process.execPath, NODE_BENCH, ...a] },
};

function startServer(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    readline.createInterface({ input: p.stdout }).once('line', (line) => { try { resolve({ proc: p, info: JSON.parse(line) }); } catch { reject(new Error(`server said ${line}`)); } });
    p.once('exit', (code) => reject(new Error(`server exited ${code} before listening`)));
  });
}
function runClient(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.once('exit', (code) => { if (code !== 0) return reject(new Error(`client exited ${code}`)); try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { reject(new Error(`client said ${out}`)); } });
  });
}

async function one(mode) {
  const m = MODES[mode];
  const { proc, info } = await startServer(pin('1', m.argv(['server'])), m.env);
  try {
    const out = await runClient(pin('0', m.argv(['client', '--port', String(info.port), '--http-port', String(info.httpPort), '--tests', 'pp,conn', '--sizes', '1', '--dur', DUR, '--warm', WARM, '--prewarm', '2'])), m.env);
    const checks = [...out.checks.map((c) => ({ side: 'client', ...c })), ...out.server.checks.map((c) => ({ side: 'server', ...c }))];
    const problems = checks.filter((c) => c.mode !== 'smcd' || c.fallback).map((c) => `${c.side} ${c.test}: ${c.mode}${c.fallback ? ` ${c.fallback}` : ''}${c.error ? ` ${c.error}` : ''}`);
    const pp = out.results.find((r) => r.test === 'pp');
    const conn = out.results.find((r) => r.test === 'conn');
    return { mode, p50us: pp.p50us, p99us: pp.p99us, connPerSec: conn.perSec, checked: checks.length, problems };
  } finally {
    proc.kill('SIGTERM');
  }
}

(async () => {
  if (!fs.existsSync(SO)) throw new Error(`${SO} missing: build it with cc (see bench/c/socket-preload.c)`);
  const runs = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 ? ['smc-run', 'ldpreload'] : ['ldpreload', 'smc-run']) {
      const x = await one(mode);
      log(`round ${r + 1} ${mode}: p50 ${x.p50us.toFixed(1)} us, ${x.connPerSec.toFixed(0)} conn/s, ${x.checked} connections checked, ${x.problems.length} problems`);
      runs.push({ round: r + 1, ...x });
    }
  }
  const med = (a) => { const s = [...a].sort((x, y) => x - y); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
  const sum = {};
  for (const mode of Object.keys(MODES)) {
    const rs = runs.filter((x) => x.mode === mode);
    sum[mode] = { p50us: med(rs.map((x) => x.p50us)), connPerSec: med(rs.map((x) => x.connPerSec)) };
  }
  const result = { kernel: require('node:os').release(), node: process.version, rounds: ROUNDS, durSeconds: Number(DUR), runs, medians: sum,
    ratios: { p50: sum['smc-run'].p50us / sum.ldpreload.p50us, connPerSec: sum['smc-run'].connPerSec / sum.ldpreload.connPerSec },
    problems: runs.flatMap((x) => x.problems) };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result));
  process.exitCode = result.problems.length ? 3 : 0;
})().catch((e) => { console.error(e); process.exitCode = 1; });
