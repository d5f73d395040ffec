'use strict';
// In the SMC-D guest on the newest kernel (bash bench/smcd/in-guest.sh --newest bench/smcd/bpf-switch.cjs): what the BPF switch
// and its destination policy cost at connection setup. The C reference program (bench/c/smc-bench, plain
// AF_INET sockets, no launcher) makes sequential connections (connect, 8-byte header, 1-byte reply, close)
// to its server in a network namespace of its own, in seven modes per round, the order rotated:
//   tcp          the namespace not switched: plain TCP
//   tcp-aa       the same again (A/A control)
//   excluded     switched, with `--exclude 127.0.0.1` (smc_hs_ctrl): SMC sockets whose handshake carries no
//                SMC option, so plain TCP inside SMC sockets, no CLC exchange
//   excl-client  only the client is an SMC socket held back by the policy: the server's listener was made
//                before the switch was enabled, so it is a plain TCP listener (a peer that is not switched)
//   excl-own     as excl-client, but the client makes its AF_SMC socket itself (smc-bench -f smc) and the
//                switch leaves it alone: excl-client / excl-own is what switching adds to an SMC socket the
//                program makes itself (the BPF program, and an AF_INET IPPROTO_SMC socket against AF_SMC)
//   excl-server  only the server is: its listener was made while the switch (with the policy) was enabled,
//                the client after it was disabled again (an SMC listener serving a TCP client)
//   smcd         switched, no policy: SMC-D on both ends
// The two one-sided modes say which end the excluded connection's cost sits on. The switch decides when
// socket() is called, so a listener keeps the protocol it was made with, and accepted sockets never pass it.
// Each run is checked: the switch's counter (sockets switched: the listener when the server's side is switched,
// every client socket when the client's is), the policy's (connections held back) and the namespace's SMC-D
// connection count (it moves only in mode smcd).
//   node bench/smcd/bpf-switch.cjs [--rounds N] [--dur S] [--warm S] [--out FILE]
//   node bench/smcd/bpf-switch.cjs --report   (host: rewrites its bench/REPORT.md section from the JSON)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startServer, runClient } = require('../lib/child-json.cjs');
const { guestClock, clockText } = require('../lib/guest-clock.cjs');
const { mediansByMode, perRoundRatios, rotated } = require('../lib/rounds.cjs');
const { pin } = require('../lib/pin.cjs');
const { replaceSection } = require('../lib/report-section.cjs');
const { fmtRatio } = require('../lib/stats.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const BENCH = path.join(ROOT, 'build', 'bench', 'smc-bench');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ROUNDS = Number(arg('rounds', '3'));
const DUR = arg('dur', '3');
const WARM = arg('warm', '1');
const OUT = arg('out', path.join(ROOT, 'bench', 'results', 'bpf-switch.json'));
const NS = `smcrun-bench-${process.pid}`;
const MODES = ['tcp', 'tcp-aa', 'excluded', 'excl-client', 'excl-own', 'excl-server', 'smcd'];
/** What the switch does while the server's listener is made, and while the client runs. */
const SIDES = {
  tcp: { server: 'off', client: 'off' },
  'tcp-aa': { server: 'off', client: 'off' },
  excluded: { server: 'exclude', client: 'exclude' },
  'excl-client': { server: 'off', client: 'exclude' },
  'excl-own': { server: 'off', client: 'exclude', family: 'smc' },
  'excl-server': { server: 'exclude', client: 'off' },
  smcd: { server: 'all', client: 'all' },
};
/** The ratios taken within each round, with the label the report gives them. */
const RATIOS = [
  ['tcp-aa', 'tcp', 'tcp-aa / tcp (A/A)'],
  ['excluded', 'tcp', 'excluded / tcp'],
  ['excl-client', 'tcp', 'excl-client / tcp (only the client switched)'],
  ['excl-server', 'tcp', 'excl-server / tcp (only the listener switched)'],
  ['excl-client', 'excl-own', 'excl-client / excl-own (what switching adds)'],
  ['smcd', 'tcp', 'smcd / tcp'],
  ['smcd', 'excluded', 'smcd / excluded'],
];
const log = (...a) => console.error(`[bpf-switch ${new Date().toISOString().slice(11, 19)}]`, ...a);

const smcRun = (args) => JSON.parse(execFileSync(BIN, [...args, '--json'], { encoding: 'utf8' }));
const inNs = (argv) => ['ip', 'netns', 'exec', NS, ...argv];

/** The counters a run is checked by: sockets switched, connections the policy held back, SMC-D connections. */
function counters() {
  const st = smcRun(['status']);
  const ns = st.namespaces.find((n) => n.inode === fs.statSync(`/run/netns/${NS}`).ino);
  const sys = smcRun(['stats', 'system', '--netns', NS]).system.smcd.connections;
  return { switched: ns ? ns.switched : 0, held: ns && ns.policy ? ns.policy.held : 0, smcd: sys.clientV1 + sys.clientV2 };
}

function configure(side) {
  if (side === 'off') smcRun(['disable', '--all']);
  else if (side === 'exclude') smcRun(['enable', '--netns', NS, '--exclude', '127.0.0.1']);
  else smcRun(['enable', '--netns', NS]);
}

const minus = (a, b) => ({ switched: a.switched - b.switched, held: a.held - b.held, smcd: a.smcd - b.smcd });

/** What a run's counters must show: the listener switched or not, each client socket switched and held or not. */
function check(mode, listener, d, conns) {
  const { server, client, family } = SIDES[mode];
  const problems = [];
  if (listener !== (server === 'off' ? 0 : 1)) problems.push(`${mode}: ${listener} sockets switched while the server started`);
  const clientOk = {
    off: d.switched === 0 && d.held === 0,
    exclude: (family ? d.switched === 0 : d.switched >= conns) && d.held >= conns,
    all: d.switched >= conns && d.held === 0,
  }[client];
  if (!clientOk) problems.push(`${mode}: counters moved ${JSON.stringify(d)} for ${conns} connections`);
  if (!(mode === 'smcd' ? d.smcd >= conns : d.smcd === 0)) problems.push(`${mode}: ${d.smcd} SMC-D connections for ${conns}`);
  return problems;
}

async function one(mode) {
  const { server, client, family = 'inet' } = SIDES[mode];
  configure(server);
  const c0 = counters();
  const { proc, info } = await startServer(inNs(pin('1', [BENCH, 'server', '-f', 'inet'])), process.env);
  try {
    const listener = counters().switched - c0.switched;
    if (client !== server) configure(client);
    const before = counters();
    const r = await runClient(inNs(pin('0', [BENCH, 'client', '-p', String(info.port), '-m', 'conn', '-s', '1', '-f', family, '-d', DUR, '-w', WARM])), process.env);
    const d = minus(counters(), before);
    const conns = r.connections;
    return { mode, connPerSec: r.perSec, connections: conns, listener, delta: d, problems: check(mode, listener, d, conns) };
  } finally {
    try { execFileSync('ip', inNs([BENCH, 'quit', '-p', String(info.port)]).slice(1), { stdio: 'ignore' }); } catch { /* gone */ }
    proc.kill('SIGTERM');
  }
}

async function main() {
  execFileSync('ip', ['netns', 'add', NS]);
  execFileSync('ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
  const runs = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of rotated(MODES, round - 1)) {
        const r = { round, ...(await one(mode)) };
        log(`round ${round} ${mode}: ${r.connPerSec.toFixed(1)} conn/s ${JSON.stringify(r.delta)}${r.problems.length ? ` PROBLEMS ${r.problems.join('; ')}` : ''}`);
        runs.push(r);
      }
    }
  } finally {
    try { smcRun(['disable', '--all']); } catch { /* nothing loaded */ }
    execFileSync('ip', ['netns', 'del', NS]);
  }
  const ratios = Object.fromEntries(RATIOS.map(([x, y]) => [`${x}/${y}`, perRoundRatios(runs, ROUNDS, x, y, ['connPerSec']).connPerSec]));
  const out = {
    kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(), clock: guestClock().id, rounds: ROUNDS, dur: Number(DUR), warm: Number(WARM),
    medians: mediansByMode(runs, MODES, ['connPerSec']), ratios, runs, problems: runs.flatMap((r) => r.problems),
  };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(JSON.stringify(out) + '\n');
  if (out.problems.length) process.exitCode = 1;
}

function report() {
  const r = JSON.parse(fs.readFileSync(OUT, 'utf8'));
  const row = (name, x) => `| ${name} | ${fmtRatio(x.median)} | ${fmtRatio(x.min)} - ${fmtRatio(x.max)} |`;
  const body = [
    '## BPF switch: connection setup (SMC-D guest, newest kernel)',
    '',
    `Kernel ${r.kernel}; clock: ${clockText(r)}; ${r.rounds} rounds, each mode ${r.dur} s after ${r.warm} s warm-up, modes side by side in`,
    'rotated order; sequential connections of bench/c/smc-bench (AF_INET sockets but in excl-own, no launcher) in a namespace of its own, each',
    'run checked through the switch\'s and the policy\'s counters and the namespace\'s SMC-D connection count.',
    '',
    '| mode | conn/s (median) |',
    '|---|---|',
    ...MODES.map((m) => `| ${m} | ${r.medians[m].connPerSec.toFixed(1)} |`),
    '',
    '| ratio (within a round) | median | min - max |',
    '|---|---|---|',
    ...RATIOS.map(([x, y, label]) => row(label, r.ratios[`${x}/${y}`])),
  ].join('\n');
  const file = path.join(ROOT, 'bench', 'REPORT.md');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'bpf-switch', body, 'bench/smcd/bpf-switch.cjs --report'));
}

if (process.argv.includes('--report')) report();
else main().catch((e) => { console.error(e); process.exitCode = 1; });
