'use strict';
// npm run bench:overhead — what smc-run costs, measured side by side in one run on this host. Each
// measure runs its A (plain node) and B (with the shim / through the launcher) side alternately, the
// order swapped every round so drift hits both, >= 21 runs per side; ratios are of medians (B/A).
// Test mode (SMC_RUN_SOCKET_FAMILY=inet): the addon makes plain inet sockets, so the hook does all its
// work on a kernel without SMC. Writes bench/results/overhead-host.json; --report rewrites the
// "overhead" section of bench/REPORT.md from that file. --smoke: 3 runs, small sizes, no files written.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { replaceSection } = require('./lib/report-section.cjs');

const ROOT = path.join(__dirname, '..');
const PRELOAD = path.join(ROOT, 'dist', 'preload.js');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const RESULT = path.join(__dirname, 'results', 'overhead-host.json');
const smoke = process.argv.includes('--smoke');
const RUNS = smoke ? 3 : Number(process.env.BENCH_RUNS || 21);
const CONNS = smoke ? 200 : 1000; // per run: 21,000 per side
const BULK = smoke ? 32 << 20 : 256 << 20; // per run
const node = process.execPath;
const plain = { ...process.env, NODE_OPTIONS: '' };
for (const k of Object.keys(plain)) if (k.startsWith('SMC_RUN_')) delete plain[k];
const hooked = { ...plain, SMC_RUN_SOCKET_FAMILY: 'inet', NODE_OPTIONS: `--require "${PRELOAD}"` };
const viaLauncher = { ...plain, SMC_RUN_SOCKET_FAMILY: 'inet' };

const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const runJson = (env, script, args) => JSON.parse(execFileSync(node, [path.join(__dirname, 'workloads', script), ...args], { env, encoding: 'utf8' }).trim());

function timeStart(env, argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Runs a() and b() alternately (order swapped each round), RUNS times each. */
function paired(a, b) {
  const A = [];
  const B = [];
  for (let r = 0; r < RUNS; r++) {
    if (r % 2) { B.push(b()); A.push(a()); } else { A.push(a()); B.push(b()); }
  }
  return { A, B, a: median(A), b: median(B), ratio: median(B) / median(A), runs: RUNS };
}

function measure() {
  const NET = "require('node:net')"; // a network program loads node:net (and its stream internals) anyway
  const startup = {
    shim: paired(() => timeStart(plain, [node, '-e', '0']), () => timeStart(hooked, [node, '-e', '0'])),
    shimNet: paired(() => timeStart(plain, [node, '-e', NET]), () => timeStart(hooked, [node, '-e', NET])),
    launcher: paired(() => timeStart(plain, [node, '-e', '0']), () => timeStart(viaLauncher, [BIN, node, '-e', '0'])),
  };
  const conn = paired(() => { const c = runJson(plain, 'conn.cjs', [String(CONNS)]); return (c.n / c.ms) * 1000; }, () => { const c = runJson(hooked, 'conn.cjs', [String(CONNS)]); return (c.n / c.ms) * 1000; });
  const bulk = paired(() => { const b = runJson(plain, 'bulk.cjs', [String(BULK)]); return b.bytes / 1048576 / (b.ms / 1000); }, () => { const b = runJson(hooked, 'bulk.cjs', [String(BULK)]); return b.bytes / 1048576 / (b.ms / 1000); });
  return {
    host: { node: process.version, kernel: os.release(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg() },
    date: new Date().toISOString(), smoke, runs: RUNS, connsPerRun: CONNS, bulkBytesPerRun: BULK,
    startupMs: {
      shim: { ...strip(startup.shim), target: 1.03 },
      shimNet: { ...strip(startup.shimNet), target: 1.03 },
      launcher: { ...strip(startup.launcher), target: 1.08 },
    },
    connPerSec: { ...strip(conn), target: 0.98 },
    bulkMiBps: { ...strip(bulk), target: 0.99 },
  };
}

const strip = (p) => ({ plain: p.a, smcRun: p.b, ratio: p.ratio, runs: p.runs });
const f = (x, d = 2) => x.toFixed(d);
const ok = (r, target, lower) => (lower ? r <= target : r >= target) ? 'met' : 'NOT met';

function table(r) {
  const s = r.startupMs;
  return [
    '| measure | plain node | with smc-run | ratio of medians | target |',
    '|---|---|---|---|---|',
    `| start-up, \`node -e 0\` with the preload | ${f(s.shim.plain, 1)} ms | ${f(s.shim.smcRun, 1)} ms | ${f(s.shim.ratio, 3)} | <= 1.03 (${ok(s.shim.ratio, 1.03, true)}) |`,
    `| start-up of a program that loads \`node:net\`, with the preload | ${f(s.shimNet.plain, 1)} ms | ${f(s.shimNet.smcRun, 1)} ms | ${f(s.shimNet.ratio, 3)} | <= 1.03 (${ok(s.shimNet.ratio, 1.03, true)}) |`,
    `| \`smc-run node -e 0\` against \`node -e 0\` | ${f(s.launcher.plain, 1)} ms | ${f(s.launcher.smcRun, 1)} ms | ${f(s.launcher.ratio, 3)} | <= 1.08 (${ok(s.launcher.ratio, 1.08, true)}) |`,
    `| sequential connect + 1 B echo + close (${r.connsPerRun.toLocaleString('en')} per run) | ${f(r.connPerSec.plain, 0)}/s | ${f(r.connPerSec.smcRun, 0)}/s | ${f(r.connPerSec.ratio, 3)} | >= 0.98 (${ok(r.connPerSec.ratio, 0.98)}) |`,
    `| bulk, ${r.bulkBytesPerRun >> 20} MiB per run, 64 KiB writes | ${f(r.bulkMiBps.plain, 0)} MiB/s | ${f(r.bulkMiBps.smcRun, 0)} MiB/s | ${f(r.bulkMiBps.ratio, 3)} | >= 0.99 (${ok(r.bulkMiBps.ratio, 0.99)}) |`,
  ].join('\n');
}

function report(r) {
  const body = [
    `Medians of ${r.runs} alternating runs per side (order swapped every round), ${r.date.slice(0, 10)}; machine: ${r.host.cpu}, ${r.host.cpus} vCPUs, node ${r.host.node}, kernel ${r.host.kernel}; load average at the end ${r.host.loadavg.map((x) => x.toFixed(1)).join(' ')}.`,
    '',
    table(r),
    '',
    'The preload arms a lazy hook and nothing else: five methods of the TCP handle prototype (taken from the binding, without loading `node:net`) are wrapped, and the first call of one in a thread loads `dist/preload-runtime.js`, the addon, reads the configuration and probes the kernel (worker threads reuse the process\'s probe). The launcher is a POSIX sh script that sets `NODE_OPTIONS` and `SMC_RUN_*` and execs the command: no Node process between the caller and the program.',
  ].join('\n');
  const file = path.join(__dirname, 'REPORT.md');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'overhead', body, 'bench/overhead.cjs --report'));
}

if (process.argv.includes('--report')) {
  report(JSON.parse(fs.readFileSync(RESULT, 'utf8')));
} else {
  const r = measure();
  console.log(`smc-run overhead on ${os.hostname()} (${r.host.cpu}, ${r.host.cpus} cpus, node ${process.version}); medians of ${RUNS} alternating runs per side`);
  console.log(table(r));
  if (!smoke) {
    fs.mkdirSync(path.dirname(RESULT), { recursive: true });
    fs.writeFileSync(RESULT, JSON.stringify(r, null, 2) + '\n');
  }
}
