'use strict';
// npm run bench:overhead — what smc-run costs, measured side by side in one run on this host. Each
// measure runs its A (plain node) and B (with the shim / through the launcher) side alternately, the
// order swapped every round so drift hits both, >= 21 runs per side; ratios are of medians (B/A).
// Test mode (SMC_RUN_SOCKET_FAMILY=inet): the addon makes plain inet sockets, so the hook does all its
// work on a kernel without SMC. A/A controls (plain against plain) give the run's own noise. Writes
// bench/results/overhead-host.json; --report rewrites the "overhead" section of bench/REPORT.md from it.
// --smoke: 3 runs, small sizes, one callgrind round of start-up only, no files written. --instructions-only:
// the callgrind measures alone, merged into the results file.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { replaceSection } = require('./lib/report-section.cjs');
const instr = require('./lib/instructions.cjs');

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

// Start-up of one process: wall time and CPU time (user + system, from wait4's rusage: exact, and not
// stretched by other processes on a busy machine the way wall time is). python3 forks and waits; its own
// start-up is outside the measurement.
const RUSAGE = `import os, sys, time
t = time.perf_counter()
p = os.fork()
if p == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvpe(sys.argv[1], sys.argv[1:], os.environ)
_, st, ru = os.wait4(p, 0)
print((time.perf_counter() - t) * 1000, (ru.ru_utime + ru.ru_stime) * 1000, os.waitstatus_to_exitcode(st))`;

function timeStart(env, argv) {
  const r = spawnSync('python3', ['-c', RUSAGE, ...argv], { env, encoding: 'utf8' });
  const [wall, cpu, code] = (r.stdout || '').trim().split(' ').map(Number);
  if (r.status !== 0 || code !== 0) throw new Error(`${argv.join(' ')} exited ${code} (${r.stderr})`);
  return { wall, cpu };
}

/** Runs a() and b() alternately (order swapped each round), RUNS times each; each returns {wall, cpu}. */
function paired(a, b) {
  const A = [];
  const B = [];
  for (let r = 0; r < RUNS; r++) {
    if (r % 2) { B.push(b()); A.push(a()); } else { A.push(a()); B.push(b()); }
  }
  const side = (xs, k) => median(xs.map((x) => x[k]));
  return {
    wall: { a: side(A, 'wall'), b: side(B, 'wall'), ratio: side(B, 'wall') / side(A, 'wall') },
    cpu: { a: side(A, 'cpu'), b: side(B, 'cpu'), ratio: side(B, 'cpu') / side(A, 'cpu') },
    runs: RUNS,
  };
}

// Instruction counts (callgrind), which host load does not move: cost ratios B/A per process start, per
// connection and per MiB of bulk, each with its A/A control, over ROUNDS rounds (median, min-max).
// Connections and bulk cancel start-up: the difference between a small and a large run, per unit.
const ROUNDS = smoke ? 1 : Number(process.env.BENCH_INSTR_ROUNDS || 3);
function instructionMeasures() {
  if (!instr.haveValgrind()) return { skipped: 'valgrind is not installed (Debian package valgrind)' };
  const NET = "require('node:net')";
  // --predictable: V8 without its helper threads (concurrent compilation and GC), whose share of the
  // work varies from run to run; with it, repeated counts of one 16 MiB bulk run agreed to 0.003%,
  // without it to 0.3%, more than the differences measured here. Both sides run with it.
  const nodeP = [node, '--predictable'];
  const start = (env, argv, children) => () => instr.count(env, argv, { children });
  const workload = (script) => (n) => [...nodeP, path.join(__dirname, 'workloads', script), String(n)];
  const out = {
    startup: {
      shim: instr.pairedCounts(ROUNDS, start(plain, [...nodeP, '-e', '0']), start(hooked, [...nodeP, '-e', '0'])),
    },
  };
  if (smoke) return out;
  out.startup.shimNet = instr.pairedCounts(ROUNDS, start(plain, [...nodeP, '-e', NET]), start(hooked, [...nodeP, '-e', NET]));
  // the launcher's sh and the node it execs both count; plain node is traced the same way
  out.startup.launcher = instr.pairedCounts(ROUNDS, start(plain, [...nodeP, '-e', '0'], true), start(viaLauncher, [BIN, ...nodeP, '-e', '0'], true));
  out.conn = instr.pairedCounts(ROUNDS, () => instr.perUnit(plain, workload('conn.cjs'), 200, 1200), () => instr.perUnit(hooked, workload('conn.cjs'), 200, 1200));
  const MiB = (n) => n << 20;
  out.bulk = instr.pairedCounts(ROUNDS, () => instr.perUnit(plain, (m) => workload('bulk.cjs')(MiB(m)), 16, 80), () => instr.perUnit(hooked, (m) => workload('bulk.cjs')(MiB(m)), 16, 80));
  return out;
}

function measure() {
  const NET = "require('node:net')"; // a network program loads node:net (and its stream internals) anyway
  const startup = {
    shim: paired(() => timeStart(plain, [node, '-e', '0']), () => timeStart(hooked, [node, '-e', '0'])),
    shimNet: paired(() => timeStart(plain, [node, '-e', NET]), () => timeStart(hooked, [node, '-e', NET])),
    launcher: paired(() => timeStart(plain, [node, '-e', '0']), () => timeStart(viaLauncher, [BIN, node, '-e', '0'])),
  };
  // rates per second of wall time and per second of the process's CPU time
  const connRate = (env) => { const c = runJson(env, 'conn.cjs', [String(CONNS)]); return { wall: (c.n / c.ms) * 1000, cpu: (c.n / c.cpuMs) * 1000 }; };
  const bulkRate = (env) => { const b = runJson(env, 'bulk.cjs', [String(BULK)]); return { wall: b.bytes / 1048576 / (b.ms / 1000), cpu: b.bytes / 1048576 / (b.cpuMs / 1000) }; };
  const conn = paired(() => connRate(plain), () => connRate(hooked));
  const bulk = paired(() => bulkRate(plain), () => bulkRate(hooked));
  // A/A controls: plain node against itself, measured the same way. Their distance from 1 is this
  // machine's noise in this run; a B/A ratio closer to its target than that is not resolved by the run.
  const control = {
    startup: paired(() => timeStart(plain, [node, '-e', '0']), () => timeStart(plain, [node, '-e', '0'])),
    conn: paired(() => connRate(plain), () => connRate(plain)),
    bulk: paired(() => bulkRate(plain), () => bulkRate(plain)),
  };
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
    control: { startupMs: strip(control.startup), connPerSec: strip(control.conn), bulkMiBps: strip(control.bulk) },
    instructions: instructionMeasures(),
  };
}

const strip = (p) => ({ plain: p.wall.a, smcRun: p.wall.b, ratio: p.wall.ratio, cpu: { plain: p.cpu.a, smcRun: p.cpu.b, ratio: p.cpu.ratio }, runs: p.runs });
const f = (x, d = 2) => x.toFixed(d);
const ok = (r, target, lower) => (lower ? r <= target : r >= target) ? 'met' : 'NOT met';

function table(r) {
  const s = r.startupMs;
  const row = (name, m, unit, target, lower, d) =>
    `| ${name} | ${f(m.plain, d)} ${unit} | ${f(m.smcRun, d)} ${unit} | ${f(m.ratio, 3)} | ${f(m.cpu.plain, d)} ${unit} | ${f(m.cpu.smcRun, d)} ${unit} | ${f(m.cpu.ratio, 3)} | ${lower ? '<=' : '>='} ${target} (wall ${ok(m.ratio, target, lower)}, CPU ${ok(m.cpu.ratio, target, lower)}) |`;
  return [
    '| measure | plain node (wall) | with smc-run (wall) | ratio | plain node (CPU) | with smc-run (CPU) | ratio | target |',
    '|---|---|---|---|---|---|---|---|',
    row('start-up, `node -e 0` with the preload', s.shim, 'ms', 1.03, true, 1),
    row('start-up of a program that loads `node:net`, with the preload', s.shimNet, 'ms', 1.03, true, 1),
    row('`smc-run node -e 0` against `node -e 0`', s.launcher, 'ms', 1.08, true, 1),
    row(`sequential connect + 1 B echo + close (${r.connsPerRun.toLocaleString('en')} per run), per s`, r.connPerSec, '', 0.98, false, 0),
    row(`bulk, ${r.bulkBytesPerRun >> 20} MiB per run, 64 KiB writes, MiB/s`, r.bulkMiBps, '', 0.99, false, 0),
  ].join('\n') + (r.control ? '\n\n' + controlTable(r.control) : '') + (r.instructions ? '\n\n' + instructionTable(r.instructions) : '');
}

/**
 * Instruction ratios: start-up rows are cost ratios (smc-run over plain, lower is better); the connection
 * and bulk rows are rate ratios (plain's instructions per unit over smc-run's, higher is better), as the
 * wall and CPU rows are. Each with its min-max over the rounds and its A/A control.
 */
function instructionTable(i) {
  if (i.skipped) return `Instruction counts: not measured (${i.skipped}).`;
  const range = ([lo, hi], inv) => (inv ? `${f(1 / hi, 4)}-${f(1 / lo, 4)}` : `${f(lo, 4)}-${f(hi, 4)}`);
  const k = (x) => Math.round(x).toLocaleString('en');
  const row = (name, m, unit, target, inv) => {
    if (!m) return undefined;
    const ratio = inv ? 1 / m.ratio : m.ratio;
    const met = inv ? ratio >= target : ratio <= target;
    const control = inv ? 1 / m.control.ratio : m.control.ratio;
    return `| ${name} | ${k(m.a)} ${unit} | ${k(m.b)} ${unit} | ${f(ratio, 4)} (${range(m.spread, inv)}) | ${f(control, 4)} (${range(m.control.spread, inv)}) | ${inv ? '>=' : '<='} ${target} (${met ? 'met' : 'NOT met'}) |`;
  };
  const rounds = i.startup.shim.rounds;
  return [
    `| user-space instructions (callgrind, node --predictable; median of ${rounds} round${rounds > 1 ? 's' : ''}, min-max) | plain node | with smc-run | ratio | A/A control | target |`,
    '|---|---|---|---|---|---|',
    row('start-up, `node -e 0` with the preload (cost)', i.startup.shim, 'per start', 1.03, false),
    row('start-up of a program that loads `node:net`, with the preload (cost)', i.startup.shimNet, 'per start', 1.03, false),
    row('`smc-run node -e 0` against `node -e 0` (cost; sh included)', i.startup.launcher, 'per start', 1.08, false),
    row('sequential connect + 1 B echo + close (rate)', i.conn, 'per connection', 0.99, true),
    row('bulk, 64 KiB writes (rate)', i.bulk, 'per MiB', 0.99, true),
  ].filter(Boolean).join('\n');
}

/** The A/A rows: plain node against plain node; a ratio's distance from 1 is the noise of this run. */
function controlTable(c) {
  const row = (name, m, unit, d) => `| ${name} | ${f(m.plain, d)} ${unit} | ${f(m.smcRun, d)} ${unit} | ${f(m.ratio, 3)} | ${f(m.cpu.plain, d)} ${unit} | ${f(m.cpu.smcRun, d)} ${unit} | ${f(m.cpu.ratio, 3)} |`;
  return [
    '| A/A control (plain node against itself) | A (wall) | A again (wall) | ratio | A (CPU) | A again (CPU) | ratio |',
    '|---|---|---|---|---|---|---|',
    row('start-up, `node -e 0`', c.startupMs, 'ms', 1),
    row('sequential connect + 1 B echo + close, per s', c.connPerSec, '', 0),
    row('bulk, MiB/s', c.bulkMiBps, '', 0),
  ].join('\n');
}

function report(r) {
  const body = [
    `Medians of ${r.runs} alternating runs per side (order swapped every round), ${r.date.slice(0, 10)}; machine: ${r.host.cpu}, ${r.host.cpus} vCPUs, node ${r.host.node}, kernel ${r.host.kernel}; load average at the end ${r.host.loadavg.map((x) => x.toFixed(1)).join(' ')}. Wall time is what a user waits; CPU time (user + system of the measured process, from wait4 or process.cpuUsage) is what smc-run adds regardless of other load on the machine: on a busy machine only the CPU ratios are stable.`,
    '',
    table(r),
    '',
    ...(r.control ? ['The A/A rows run plain node against itself, the same way: their distance from 1 is the noise of this run, and a B/A ratio nearer its target than that is not resolved by it.', ''] : []),
    ...(r.host.loadavg[0] > r.host.cpus ? [`The machine was busy while this ran (load average above its ${r.host.cpus} vCPUs: other jobs): wall-time ratios moved by up to ±10% from one run of this benchmark to the next, CPU-time ratios by about ±2-3%; a target missed by less than that is not resolved by this run.`, ''] : []),
    'The preload arms a lazy hook and nothing else: five methods of the TCP handle prototype (taken from the binding, without loading `node:net`) are wrapped, and the first call of one in a thread loads `dist/preload-runtime.js`, the addon, reads the configuration and probes the kernel (worker threads reuse the process\'s probe). The launcher is a POSIX sh script that sets `NODE_OPTIONS` and `SMC_RUN_*` and execs the command: no Node process between the caller and the program.',
  ].join('\n');
  const soakFile = path.join(__dirname, 'results', 'soak-host.json');
  let soak = '';
  if (fs.existsSync(soakFile)) {
    const k = JSON.parse(fs.readFileSync(soakFile, 'utf8'));
    const first = k.samples[1] ?? k.samples[0];
    const last = k.samples[k.samples.length - 1];
    soak = [
      '',
      '',
      `Soak (\`node bench/soak.cjs\`): ${k.n.toLocaleString('en')} sequential connections through the hook in one process (test mode), ${k.seconds.toFixed(0)} s; the hook adopted ${k.hook.smc.toLocaleString('en')} sockets (every connect and the listener), ${k.hook.errors} errors. Sampled after a full GC every ${(k.n / 10).toLocaleString('en')} connections:`,
      '',
      '| connections | open fds | RSS | JS heap used |',
      '|---|---|---|---|',
      ...k.samples.map((x) => `| ${x.conns.toLocaleString('en')} | ${x.fds} | ${x.rssMiB} MiB | ${x.heapMiB} MiB |`),
      '',
      `From ${first.conns.toLocaleString('en')} to ${last.conns.toLocaleString('en')} connections: fds ${k.growth.fds >= 0 ? '+' : ''}${k.growth.fds}, RSS ${k.growth.rssMiB >= 0 ? '+' : ''}${k.growth.rssMiB} MiB, heap ${k.growth.heapMiB >= 0 ? '+' : ''}${k.growth.heapMiB} MiB` +
        (k.plain ? `; the same program without the shim: fds ${k.plain.growth.fds >= 0 ? '+' : ''}${k.plain.growth.fds}, RSS ${k.plain.growth.rssMiB >= 0 ? '+' : ''}${k.plain.growth.rssMiB} MiB (RSS samples ${k.plain.samples.map((x) => x.rssMiB).join(', ')}), heap ${k.plain.growth.heapMiB >= 0 ? '+' : ''}${k.plain.growth.heapMiB} MiB.` : '.'),
    ].join('\n');
  }
  const file = path.join(__dirname, 'REPORT.md');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'overhead', body + soak, 'bench/overhead.cjs --report'));
}

if (process.argv.includes('--report')) {
  report(JSON.parse(fs.readFileSync(RESULT, 'utf8')));
} else if (process.argv.includes('--instructions-only')) {
  // the callgrind measures alone (they take minutes per round; wall and CPU ratios are left as they are)
  const i = instructionMeasures();
  console.log(instructionTable(i));
  if (!smoke && fs.existsSync(RESULT)) {
    const r = JSON.parse(fs.readFileSync(RESULT, 'utf8'));
    fs.writeFileSync(RESULT, JSON.stringify({ ...r, instructions: { ...i, date: new Date().toISOString(), node: process.version } }, null, 2) + '\n');
  }
} else {
  const r = measure();
  console.log(`smc-run overhead on ${os.hostname()} (${r.host.cpu}, ${r.host.cpus} cpus, node ${process.version}); medians of ${RUNS} alternating runs per side`);
  console.log(table(r));
  if (!smoke) {
    fs.mkdirSync(path.dirname(RESULT), { recursive: true });
    fs.writeFileSync(RESULT, JSON.stringify(r, null, 2) + '\n');
  }
}
