'use strict';
// In the SMC-D guest (bench/smcd/preload-compare.sh boots it): the same Node program (node-bench.cjs,
// server on CPU 1, client on CPU 0) under an LD_PRELOAD interposer of socket() (bench/c/socket-preload.c:
// what smc-tools' smc_run does, the zero-overhead baseline) and under `smc-run`, both ends SMC-D, rounds
// alternating the order. 1-byte ping-pong p50 and connection rate; every measured connection checked
// through sock_diag (getSmcInfo: SMC-D, no fallback) on both sides. Then connection bursts (issue #23):
// test/scenarios/burst.cjs, BURST connections at once against backlog 511, under both modes with smc-run's
// TCP retry off (so both see what the kernel gives), alternating; failed connects and the kernel's client
// handshake error delta per run. Prints one JSON object.
//   node bench/smcd/preload-compare.cjs [--rounds N] [--dur S] [--warm S] [--burst N] [--burst-rounds N] [--out FILE]
//   node bench/smcd/preload-compare.cjs --report   (host: rewrites its bench/REPORT.md section from the JSON)
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startServer, runClient } = require('../lib/child-json.cjs');
const { guestClock, clockText } = require('../lib/guest-clock.cjs');
const { median, mediansByMode, perRoundRatios, rotated } = require('../lib/rounds.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const NODE_BENCH = path.join(__dirname, 'node-bench.cjs');
const SO = path.join(ROOT, 'build', 'bench', 'socket-preload.so');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ROUNDS = Number(arg('rounds', '3'));
const DUR = arg('dur', '6');
const WARM = arg('warm', '2');
const BURST = Number(arg('burst', '1000'));
const BURST_ROUNDS = Number(arg('burst-rounds', '3'));
const BURST_JS = path.join(ROOT, 'test', 'scenarios', 'burst.cjs');
const OUT = arg('out', path.join(ROOT, 'bench', 'results', 'preload-compare.json'));
const { pin } = require('../lib/pin.cjs');
const log = (...a) => console.error(`[preload-compare ${new Date().toISOString().slice(11, 19)}]`, ...a);

const base = { ...process.env };
delete base.NODE_OPTIONS;
delete base.SMC_RUN_SOCKET_FAMILY;
const MODES = {
  ldpreload: { env: { ...base, LD_PRELOAD: SO }, argv: (a) => [process.execPath, NODE_BENCH, ...a] },
  'smc-run': { env: base, argv: (a) => [BIN, process.execPath, NODE_BENCH, ...a] },
};
// the A/A control: smc-run a second time in every round, so the run's own noise shows in the same units
const ROUND_MODES = ['ldpreload', 'smc-run', 'smc-run-aa'];
const modeOf = (name) => MODES[name === 'smc-run-aa' ? 'smc-run' : name];


async function one(mode) {
  const m = modeOf(mode);
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

/** one burst in one process (client and server), as the program sees it without smc-run's TCP retry */
async function burst(mode) {
  const m = MODES[mode];
  const env = { ...m.env, SMC_RUN_TCP_RETRY: '0' };
  const argv = m.argv([]);
  argv.splice(argv.indexOf(NODE_BENCH), 1, BURST_JS, '--count', String(BURST), '--backlog', '511');
  const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  await new Promise((r) => p.once('exit', r));
  const line = out.split('\n').find((l) => l.startsWith('SCENARIO_RESULT '));
  if (!line) throw new Error(`burst under ${mode}: no result (${out.slice(-300)})`);
  const r = JSON.parse(line.slice('SCENARIO_RESULT '.length));
  return { mode, ms: r.ms, completed: r.completed, failed: r.failed, corrupt: r.corrupt, errors: r.errors, hsErrClient: r.delta.hsErrClient, smcdClient: r.delta.smcdClient };
}

function report() {
  const r = JSON.parse(fs.readFileSync(OUT, 'utf8'));
  const modes = r.medians['smc-run-aa'] ? ROUND_MODES : ['ldpreload', 'smc-run'];
  const burstModes = ['ldpreload', 'smc-run'];
  const name = { ldpreload: 'LD_PRELOAD socket() interposer', 'smc-run': '`smc-run node`', 'smc-run-aa': '`smc-run node` again (A/A)' };
  const range = (x) => `${x.median.toFixed(3)} (${x.min.toFixed(3)}-${x.max.toFixed(3)})`;
  const per = (mode, key, fmt) => r.runs.filter((x) => x.mode === mode).map((x) => fmt(x[key])).join(', ');
  const lines = [
    '## smc-run against an LD_PRELOAD interposer (SMC-D guest, `bash bench/smcd/preload-compare.sh`)',
    '',
    `The same Node program (bench/smcd/node-bench.cjs; server on vCPU 1, client on vCPU 0) under a minimal LD_PRELOAD library whose socket() makes every TCP socket AF_SMC (bench/c/socket-preload.c: what smc-tools' smc_run does, the zero-overhead baseline) and under the \`smc-run\` launcher; ${r.rounds} rounds ${r.perRound ? 'in a rotated order' : 'alternating the order'}, ${r.durSeconds} s per measure, kernel ${r.kernel}, node ${r.node}, ${clockText(r)}. Every measured connection was checked through sock_diag on both ends: ${r.problems.length ? `problems: ${r.problems.join('; ')}` : 'SMC-D, no fallback'}.`,
    '',
    '| | 1-byte round trip p50 (per round) | median | connections/s (per round) | median |',
    '|---|---|---|---|---|',
    ...modes.map((m) => `| ${name[m]} | ${per(m, 'p50us', (v) => v.toFixed(1))} us | ${r.medians[m].p50us.toFixed(1)} us | ${per(m, 'connPerSec', (v) => v.toFixed(0))} | ${r.medians[m].connPerSec.toFixed(0)} |`),
    '',
    ...(r.perRound
      ? ['Ratios within each round (median, and the range over the rounds):', '', '| | round trip p50 (lower is better) | connections/s (higher is better) |', '|---|---|---|',
        `| smc-run / LD_PRELOAD | ${range(r.perRound.smcRun.p50us)} | ${range(r.perRound.smcRun.connPerSec)} |`,
        `| A/A: smc-run again / smc-run | ${range(r.perRound.aa.p50us)} | ${range(r.perRound.aa.connPerSec)} |`]
      : [`Ratios smc-run / LD_PRELOAD of the medians: round trip p50 ${r.ratios.p50.toFixed(3)} (lower is better), connection rate ${r.ratios.connPerSec.toFixed(3)} (higher is better).`]),
    '',
    `Bursts: one process opens ${r.burst.count} connections at once to its own server (backlog ${r.burst.backlog}, 64 KiB echoed each, test/scenarios/burst.cjs), smc-run's TCP retry off so both see what the kernel gives:`,
    '',
    '| | connects lost per round | median | client handshake errors (kernel) |',
    '|---|---|---|---|',
    ...burstModes.map((m) => { const b = r.burst.runs.filter((x) => x.mode === m); return `| ${name[m]} | ${b.map((x) => x.failed).join(', ')} | ${r.burst.medianFailed[m]} | ${b.map((x) => x.hsErrClient).join(', ')} |`; }),
  ];
  const file = path.join(ROOT, 'bench', 'REPORT.md');
  const { replaceSection } = require('../lib/report-section.cjs');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'preload-compare', lines.join('\n'), 'bench/smcd/preload-compare.cjs --report'));
  console.log(`bench/REPORT.md: preload-compare section from ${path.relative(ROOT, OUT)}`);
}

if (process.argv.includes('--report')) {
  report();
  return;
}

(async () => {
  if (!fs.existsSync(SO)) throw new Error(`${SO} missing: build it with cc (see bench/c/socket-preload.c)`);
  const runs = [];
  // one unrecorded measure first: the first SMC-D connections of a boot also create the link group
  const warm = await one(ROUND_MODES[0]);
  log(`warm-up ${ROUND_MODES[0]}: ${warm.connPerSec.toFixed(0)} conn/s (not recorded)`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of rotated(ROUND_MODES, r)) {
      const x = await one(mode);
      log(`round ${r + 1} ${mode}: p50 ${x.p50us.toFixed(1)} us, ${x.connPerSec.toFixed(0)} conn/s, ${x.checked} connections checked, ${x.problems.length} problems`);
      runs.push({ round: r + 1, ...x });
    }
  }
  const bursts = [];
  for (let r = 0; r < BURST_ROUNDS; r++) {
    for (const mode of r % 2 ? ['smc-run', 'ldpreload'] : ['ldpreload', 'smc-run']) {
      const x = await burst(mode);
      log(`burst ${r + 1} ${mode}: ${x.failed} of ${BURST} failed (${JSON.stringify(x.errors)}), ${x.hsErrClient} client handshake errors, ${x.ms} ms`);
      bursts.push({ round: r + 1, ...x });
    }
  }
  const sum = mediansByMode(runs, ROUND_MODES, ['p50us', 'connPerSec']);
  const result = { kernel: require('node:os').release(), clock: guestClock().id, node: process.version, rounds: ROUNDS, durSeconds: Number(DUR), runs, medians: sum,
    ratios: { p50: sum['smc-run'].p50us / sum.ldpreload.p50us, connPerSec: sum['smc-run'].connPerSec / sum.ldpreload.connPerSec },
    perRound: { smcRun: perRoundRatios(runs, ROUNDS, 'smc-run', 'ldpreload', ['p50us', 'connPerSec']), aa: perRoundRatios(runs, ROUNDS, 'smc-run-aa', 'smc-run', ['p50us', 'connPerSec']) },
    burst: { count: BURST, backlog: 511, runs: bursts, medianFailed: Object.fromEntries(Object.keys(MODES).map((mode) => [mode, median(bursts.filter((x) => x.mode === mode).map((x) => x.failed))])) },
    problems: [...runs.flatMap((x) => x.problems), ...bursts.filter((x) => x.corrupt).map((x) => `burst ${x.mode}: ${x.corrupt} corrupt`)] };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result));
  process.exitCode = result.problems.length ? 3 : 0;
})().catch((e) => { console.error(e); process.exitCode = 1; });
