'use strict';
// In the SMC-D guest (`bash bench/smcd/preload-compare.sh --c` boots it): the same C program
// (bench/c/smc-bench.c, plain AF_INET sockets, blocking; server on vCPU 1, client on vCPU 0) under the
// launcher's LD_PRELOAD library (`smc-run smc-bench`: policy at connect()/listen(), the socket swapped
// under the same fd) and under the bare socket() interposer (bench/c/socket-preload.c, the zero-overhead
// baseline), both ends SMC-D. An A/A control beside them: the library a second time in the same round,
// so the noise of this machine shows in the same units. Each round runs the three in a rotated order.
// SMC-D checked from the kernel for every measure: during the round trips both ends of the connection in
// sock_diag; over the connection test the SMC-D handshake counters rise by at least the connections made,
// on the client and on the server, with no fallback and no handshake error.
//   node bench/smcd/preload-lib-compare.cjs [--rounds N] [--dur S] [--warm S] [--out FILE]
//   node bench/smcd/preload-lib-compare.cjs --report   (host: rewrites its bench/REPORT.md section)
const fs = require('node:fs');
const path = require('node:path');
const { startServer, runClient } = require('../lib/child-json.cjs');
const { guestClock, clockText } = require('../lib/guest-clock.cjs');
const { mediansByMode, perRoundRatios, rotated } = require('../lib/rounds.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const SMC_BENCH = path.join(ROOT, 'build', 'bench', 'smc-bench');
const SO = path.join(ROOT, 'build', 'bench', 'socket-preload.so');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ROUNDS = Number(arg('rounds', '5'));
const DUR = arg('dur', '4');
const WARM = arg('warm', '1');
const OUT = arg('out', path.join(ROOT, 'bench', 'results', 'preload-lib-compare.json'));
const { pin } = require('../lib/pin.cjs');
const log = (...a) => console.error(`[preload-lib-compare ${new Date().toISOString().slice(11, 19)}]`, ...a);

const base = { ...process.env };
for (const k of Object.keys(base)) if (k.startsWith('SMC_RUN_') || k === 'NODE_OPTIONS' || k === 'LD_PRELOAD') delete base[k];
const MODES = {
  bare: { env: { ...base, LD_PRELOAD: SO }, argv: (a) => [SMC_BENCH, ...a] },
  library: { env: base, argv: (a) => [BIN, SMC_BENCH, ...a] },
  'library-aa': { env: base, argv: (a) => [BIN, SMC_BENCH, ...a] },
};
const NAMES = Object.keys(MODES);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));


function counters(api) {
  const s = api.getSmcSystemStats();
  const c = s.smcd.connections;
  return { client: c.clientV1 + c.clientV2, server: c.serverV1 + c.serverV2, fallback: s.fallbacks.client.total + s.fallbacks.server.total, hsErr: s.handshakeErrors.client + s.handshakeErrors.server };
}

async function one(api, mode) {
  const m = MODES[mode];
  const { proc, info: { port } } = await startServer(pin('1', m.argv(['server'])), m.env);
  const problems = [];
  try {
    // round trips over one connection; both of its ends read from sock_diag while it runs
    const pp = runClient(pin('0', m.argv(['client', '-p', String(port), '-m', 'pp', '-s', '1', '-d', DUR, '-w', WARM])), m.env);
    let ends = { server: [], client: [] };
    for (let i = 0; i < 50 && !(ends.server.length && ends.client.length); i++) {
      const all = api.listSmcSockets().filter((s) => !s.listening);
      ends = { server: all.filter((s) => s.local.port === port).map((s) => s.mode), client: all.filter((s) => s.remote.port === port).map((s) => s.mode) };
      if (!(ends.server.length && ends.client.length)) await sleep(100);
    }
    const ppOut = await pp;
    if (ends.server.join() !== 'smcd' || ends.client.join() !== 'smcd') problems.push(`${mode} pp: server ${ends.server.join() || 'not seen'}, client ${ends.client.join() || 'not seen'}`);
    const before = counters(api);
    const conn = await runClient(pin('0', m.argv(['client', '-p', String(port), '-m', 'conn', '-s', '1', '-d', DUR, '-w', WARM])), m.env);
    const after = counters(api);
    const d = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
    if (d.client < conn.connections || d.server < conn.connections || d.fallback !== 0 || d.hsErr !== 0) problems.push(`${mode} conn: ${conn.connections} connections, SMC-D client +${d.client}, server +${d.server}, fallbacks +${d.fallback}, handshake errors +${d.hsErr}`);
    return { mode, p50us: ppOut.p50us, p99us: ppOut.p99us, connPerSec: conn.perSec, connections: conn.connections, problems };
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', r)));
  }
}

function report() {
  const r = JSON.parse(fs.readFileSync(OUT, 'utf8'));
  const name = { bare: 'bare socket() interposer', library: 'smc-run (the library)', 'library-aa': 'smc-run again (A/A)' };
  const per = (mode, key, fmt) => r.runs.filter((x) => x.mode === mode).map((x) => fmt(x[key])).join(', ');
  const ratioRow = (label, k) => `| ${label} | ${r.ratios[k].p50.median.toFixed(3)} (${r.ratios[k].p50.min.toFixed(3)}-${r.ratios[k].p50.max.toFixed(3)}) | ${r.ratios[k].connPerSec.median.toFixed(3)} (${r.ratios[k].connPerSec.min.toFixed(3)}-${r.ratios[k].connPerSec.max.toFixed(3)}) |`;
  const lines = [
    '## The LD_PRELOAD library against a bare socket() interposer (C program, SMC-D guest, `bash bench/smcd/preload-compare.sh --c`)',
    '',
    `The same C program (bench/c/smc-bench.c, blocking AF_INET sockets; server on vCPU 1, client on vCPU 0) under the launcher's LD_PRELOAD library (\`smc-run smc-bench\`) and under a library whose socket() makes every TCP socket AF_SMC (bench/c/socket-preload.c), with the library a second time in each round as the A/A control; ${r.rounds} rounds, the order rotated each round, ${r.durSeconds} s per measure, kernel ${r.kernel}, ${clockText(r)}. SMC-D checked from the kernel for every measure (sock_diag for the round-trip connection, SMC-D handshake counters for the connection test): ${r.problems.length ? `problems: ${r.problems.join('; ')}` : 'SMC-D on both ends, no fallback, no handshake error'}.`,
    '',
    '| | 1-byte round trip p50 (per round) | median | connections/s (per round) | median |',
    '|---|---|---|---|---|',
    ...NAMES.map((m) => `| ${name[m]} | ${per(m, 'p50us', (v) => v.toFixed(1))} us | ${r.medians[m].p50us.toFixed(1)} us | ${per(m, 'connPerSec', (v) => v.toFixed(0))} | ${r.medians[m].connPerSec.toFixed(0)} |`),
    '',
    'Ratios within each round (median, and the range over the rounds):',
    '',
    '| | round trip p50 (lower is better) | connections/s (higher is better) |',
    '|---|---|---|',
    ratioRow('library / bare', 'library'),
    ratioRow('A/A: library again / library', 'aa'),
  ];
  const file = path.join(ROOT, 'bench', 'REPORT.md');
  const { replaceSection } = require('../lib/report-section.cjs');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'preload-lib-compare', lines.join('\n'), 'bench/smcd/preload-lib-compare.cjs --report'));
  console.log(`bench/REPORT.md: preload-lib-compare section from ${path.relative(ROOT, OUT)}`);
}

if (process.argv.includes('--report')) {
  report();
  return;
}

(async () => {
  for (const f of [SO, SMC_BENCH]) if (!fs.existsSync(f)) throw new Error(`${f} missing: bench/smcd/preload-compare.sh builds it`);
  const api = require(path.join(ROOT, 'dist', 'index.js'));
  const runs = [];
  // one unrecorded measure first: the first SMC-D connections of a boot also create the link group and
  // its buffers, which read about 3 % low in whichever mode came first (2026-12-04)
  const warm = await one(api, NAMES[0]);
  log(`warm-up ${NAMES[0]}: ${warm.connPerSec.toFixed(0)} conn/s (not recorded)`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of rotated(NAMES, r)) {
      const x = await one(api, mode);
      log(`round ${r + 1} ${mode}: p50 ${x.p50us.toFixed(1)} us, ${x.connPerSec.toFixed(0)} conn/s, ${x.problems.length} problems`);
      runs.push({ round: r + 1, ...x });
    }
  }
  const medians = mediansByMode(runs, NAMES, ['p50us', 'connPerSec']);
  const ratiosOf = (a, b) => { const x = perRoundRatios(runs, ROUNDS, a, b, ['p50us', 'connPerSec']); return { p50: x.p50us, connPerSec: x.connPerSec }; };
  const result = { kernel: require('node:os').release(), clock: guestClock().id, rounds: ROUNDS, durSeconds: Number(DUR), runs, medians,
    ratios: { library: ratiosOf('library', 'bare'), aa: ratiosOf('library-aa', 'library') },
    problems: runs.flatMap((x) => x.problems) };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify({ ratios: result.ratios, problems: result.problems }));
  process.exitCode = result.problems.length ? 3 : 0;
})().catch((e) => { console.error(e); process.exitCode = 1; });
