'use strict';
// In the SMC-D guest on the newest kernel (bash bench/smcd/in-guest.sh --newest bench/smcd/bpf-switch.cjs): what the BPF switch
// and its destination policy cost at connection setup. The C reference program (bench/c/smc-bench, plain
// AF_INET sockets, no launcher) makes sequential connections (connect, 8-byte header, 1-byte reply, close)
// to its server in a network namespace of its own, in four modes per round, the order rotated:
//   tcp       the namespace not switched: plain TCP
//   tcp-aa    the same again (A/A control)
//   excluded  switched, with `--exclude 127.0.0.1` (smc_hs_ctrl): SMC sockets whose handshake carries no
//             SMC option, so plain TCP inside SMC sockets, no CLC exchange
//   smcd      switched, no policy: SMC-D on both ends
// Each run is checked: the switch's counter (sockets switched) and the policy's (connections held back)
// moved as the mode says, and the namespace's SMC-D connection count moved only in mode smcd.
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
const MODES = ['tcp', 'tcp-aa', 'excluded', 'smcd'];
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

function configure(mode) {
  if (mode.startsWith('tcp')) smcRun(['disable', '--all']);
  else if (mode === 'excluded') smcRun(['enable', '--netns', NS, '--exclude', '127.0.0.1']);
  else smcRun(['enable', '--netns', NS]);
}

async function one(mode) {
  configure(mode);
  const before = counters();
  const { proc, info } = await startServer(inNs(pin('1', [BENCH, 'server', '-f', 'inet'])), process.env);
  try {
    const r = await runClient(inNs(pin('0', [BENCH, 'client', '-p', String(info.port), '-m', 'conn', '-s', '1', '-f', 'inet', '-d', DUR, '-w', WARM])), process.env);
    const after = counters();
    const d = { switched: after.switched - before.switched, held: after.held - before.held, smcd: after.smcd - before.smcd };
    const conns = r.connections;
    // each connection: a client socket (and the listener once); the policy decides each connection once
    const want = {
      tcp: d.switched === 0 && d.held === 0 && d.smcd === 0,
      excluded: d.switched >= conns && d.held >= conns && d.smcd === 0,
      smcd: d.switched >= conns && d.held === 0 && d.smcd >= conns,
    }[mode.startsWith('tcp') ? 'tcp' : mode];
    const problems = want ? [] : [`${mode}: counters moved ${JSON.stringify(d)} for ${conns} connections`];
    return { mode, connPerSec: r.perSec, connections: conns, delta: d, problems };
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
  const ratios = {
    'tcp-aa/tcp': perRoundRatios(runs, ROUNDS, 'tcp-aa', 'tcp', ['connPerSec']).connPerSec,
    'excluded/tcp': perRoundRatios(runs, ROUNDS, 'excluded', 'tcp', ['connPerSec']).connPerSec,
    'smcd/tcp': perRoundRatios(runs, ROUNDS, 'smcd', 'tcp', ['connPerSec']).connPerSec,
    'smcd/excluded': perRoundRatios(runs, ROUNDS, 'smcd', 'excluded', ['connPerSec']).connPerSec,
  };
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
    'rotated order; sequential connections of bench/c/smc-bench (AF_INET sockets, no launcher) in a namespace of its own, each',
    'run checked through the switch\'s and the policy\'s counters and the namespace\'s SMC-D connection count.',
    '',
    '| mode | conn/s (median) |',
    '|---|---|',
    ...['tcp', 'tcp-aa', 'excluded', 'smcd'].map((m) => `| ${m} | ${r.medians[m].connPerSec.toFixed(1)} |`),
    '',
    '| ratio (within a round) | median | min - max |',
    '|---|---|---|',
    row('tcp-aa / tcp (A/A)', r.ratios['tcp-aa/tcp']),
    row('excluded / tcp', r.ratios['excluded/tcp']),
    row('smcd / tcp', r.ratios['smcd/tcp']),
    row('smcd / excluded', r.ratios['smcd/excluded']),
  ].join('\n');
  const file = path.join(ROOT, 'bench', 'REPORT.md');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'bpf-switch', body, 'bench/smcd/bpf-switch.cjs --report'));
}

if (process.argv.includes('--report')) report();
else main().catch((e) => { console.error(e); process.exitCode = 1; });
