'use strict';
// In the SMC-D guest on the newest kernel (bash bench/smcd/in-guest.sh --newest bench/smcd/cgroup-check.cjs):
// what the BPF switch's cgroup scope costs each TCP socket() that it does not switch. bench/c/socket-loop
// runs socket() + close() N times in a cgroup three levels deep (as a systemd service's task sits two or
// three levels down) and times the loop in the guest's clock (icount: one ns per guest instruction). Modes,
// side by side in every round, the order rotated:
//   off          the switch not loaded: the kernel's own socket() + close()
//   loaded       the switch loaded (another namespace enabled, no cgroup): the program runs and misses;
//                with no cgroup enabled it skips the cgroup walk (one array lookup)
//   loaded-aa    the same again (A/A control)
//   cg-other     one cgroup enabled, not the loop's: the program walks the loop's cgroup and its three
//                ancestors (four map lookups) and misses
// cg-other - loaded is the cgroup check's cost per socket(); loaded-aa - loaded shows what noise is.
// The loop's sockets stay TCP in every mode (the switch's counters are checked: nothing switched).
//   node bench/smcd/cgroup-check.cjs [--rounds N] [--n SOCKETS] [--out FILE]
//   node bench/smcd/cgroup-check.cjs --report   (host: rewrites its bench/REPORT.md section from the JSON)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { guestClock, clockText } = require('../lib/guest-clock.cjs');
const { median, rotated } = require('../lib/rounds.cjs');
const { replaceSection } = require('../lib/report-section.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const LOOP = path.join(ROOT, 'build', 'bench', 'socket-loop');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const ROUNDS = Number(arg('rounds', '3'));
const N = Number(arg('n', '4000'));
const OUT = arg('out', path.join(ROOT, 'bench', 'results', 'cgroup-check.json'));
const MODES = ['off', 'loaded', 'loaded-aa', 'cg-other'];
const CG = '/sys/fs/cgroup';
const LOOP_CG = `${CG}/smcrun-bench-${process.pid}/svc.slice/loop.service`;
const OTHER_CG = `${CG}/smcrun-bench-other-${process.pid}`;
const NS = `smcrun-bench-${process.pid}`;

const smcRun = (args) => JSON.parse(execFileSync(process.execPath, [BIN, ...args, '--json'], { encoding: 'utf8' }));

/** The switch as the mode wants it. */
function arrange(mode) {
  smcRun(['disable', '--all']);
  if (mode === 'off') return;
  smcRun(['enable', '--netns', NS]);
  if (mode === 'cg-other') smcRun(['enable', '--cgroup', OTHER_CG]);
}

function loop() {
  const out = execFileSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', LOOP_CG, LOOP, String(N)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop());
}

function main() {
  if (guestClock().id !== 'icount') process.stderr.write('cgroup-check: not an icount guest: the figures are wall clock\n');
  execFileSync('sh', ['-c', `mountpoint -q ${CG} || mount -t cgroup2 none ${CG}`]);
  fs.mkdirSync(LOOP_CG, { recursive: true });
  fs.mkdirSync(OTHER_CG, { recursive: true });
  execFileSync('ip', ['netns', 'add', NS]);
  const runs = [];
  const problems = [];
  try {
    loop(); // warm: the binary and the kernel's slab caches
    for (let r = 1; r <= ROUNDS; r++) {
      for (const mode of rotated(MODES, r - 1)) {
        arrange(mode);
        const res = loop();
        const st = mode === 'off' ? { namespaces: [], cgroups: [] } : smcRun(['status']);
        const switched = [...st.namespaces, ...st.cgroups].reduce((a, x) => a + x.switched, 0);
        if (switched !== 0) problems.push(`round ${r} ${mode}: ${switched} socket(s) switched, expected none`);
        runs.push({ round: r, mode, n: res.n, ns: res.ns, perSocket: res.ns / res.n });
        process.stderr.write(`round ${r} ${mode}: ${(res.ns / res.n).toFixed(0)} ns per socket()\n`);
      }
    }
  } finally {
    smcRun(['disable', '--all']);
    execFileSync('ip', ['netns', 'del', NS]);
  }
  const diff = (a, b) => {
    const xs = [];
    for (let r = 1; r <= ROUNDS; r++) xs.push(runs.find((x) => x.round === r && x.mode === a).perSocket - runs.find((x) => x.round === r && x.mode === b).perSocket);
    return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), perRound: xs };
  };
  const out = {
    kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(), clock: guestClock().id, rounds: ROUNDS, n: N, runs,
    medians: Object.fromEntries(MODES.map((m) => [m, median(runs.filter((x) => x.mode === m).map((x) => x.perSocket))])),
    diffs: { program: diff('loaded', 'off'), aa: diff('loaded-aa', 'loaded'), cgroupCheck: diff('cg-other', 'loaded') },
    problems,
  };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(JSON.stringify(out) + '\n');
  if (problems.length) process.exitCode = 1;
}

function report() {
  const r = JSON.parse(fs.readFileSync(OUT, 'utf8'));
  const ns = (x) => `${x.toFixed(0)}`;
  const row = (label, d) => `| ${label} | ${ns(d.median)} | ${ns(d.min)} to ${ns(d.max)} |`;
  const body = [
    '## BPF switch by cgroup: the check\'s cost per socket() (SMC-D guest, newest kernel, `bash bench/smcd/in-guest.sh --newest bench/smcd/cgroup-check.cjs`)',
    '',
    `Kernel ${r.kernel}; clock: ${clockText(r)}; ${r.rounds} rounds of ${r.n} socket() + close() per mode, modes side by side in rotated`,
    'order; the loop runs in a cgroup three levels deep; no socket is switched in any mode (checked through the switch\'s counters).',
    '',
    '| mode | ns per socket() + close() (median) |',
    '|---|---|',
    ...MODES.map((m) => `| ${m} | ${ns(r.medians[m])} |`),
    '',
    '| difference (within a round), ns per socket() | median | min to max |',
    '|---|---|---|',
    row('loaded - off: the switch\'s program, no cgroup enabled', r.diffs.program),
    row('loaded-aa - loaded (A/A)', r.diffs.aa),
    row('cg-other - loaded: the cgroup walk (4 levels, all misses)', r.diffs.cgroupCheck),
  ].join('\n');
  const file = path.join(ROOT, 'bench', 'REPORT.md');
  fs.writeFileSync(file, replaceSection(fs.readFileSync(file, 'utf8'), 'cgroup-check', body, 'bench/smcd/cgroup-check.cjs --report'));
}

if (process.argv.includes('--report')) report();
else main();
