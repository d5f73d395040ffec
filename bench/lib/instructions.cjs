'use strict';
// User-space instruction counts (valgrind's callgrind) for the overhead benchmark: a unit that host load
// does not move, unlike wall or CPU time on a shared 2-vCPU machine. callgrind runs the program's threads
// one at a time and counts every instruction they retire, the dynamic loader and V8's JIT included; the
// kernel's work (syscalls) is not counted, so a syscall the shim adds shows only as its user-space wrapper.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** Whether valgrind can run here; the benchmark installs nothing itself (Debian package `valgrind`). */
function haveValgrind() {
  return spawnSync('valgrind', ['--version']).status === 0;
}

/**
 * Instructions that `argv` executes, summed over the process and (with children) every process it
 * execs or forks: the launcher is a sh script that execs node, and both count. callgrind reports at exit
 * only what the last program image ran (an exec starts its counts afresh), so it dumps before every
 * execve too, and the total is the sum of every dump's summary.
 */
function count(env, argv, { children = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-callgrind-'));
  try {
    const args = ['--tool=callgrind', '--dump-before=execve', `--callgrind-out-file=${dir}/cg.%p`, `--trace-children=${children ? 'yes' : 'no'}`, ...argv];
    const r = spawnSync('valgrind', args, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
    const dumps = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
    const totals = dumps.flatMap((d) => [...d.matchAll(/^summary: (\d+)$/gm)].map((m) => Number(m[1])));
    if (r.status !== 0 || totals.length === 0) {
      throw new Error(`callgrind run of ${argv.join(' ')} failed (status ${r.status}): ${(r.stderr || '').split('\n').slice(-4).join(' ')}`);
    }
    return totals.reduce((a, b) => a + b, 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Rounds of A, B and A again (the order of A and B swapped every other round). Each sample() returns an
 * instruction count per unit of work (per process start, per connection, per MiB). The ratio B/A is a
 * cost ratio (> 1: B executes more); the A/A control (A again over A) is the measure's own spread.
 */
function pairedCounts(rounds, sampleA, sampleB) {
  const a = [];
  const b = [];
  const again = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      b.push(sampleB());
      a.push(sampleA());
    } else {
      a.push(sampleA());
      b.push(sampleB());
    }
    again.push(sampleA());
  }
  const ratios = b.map((x, i) => x / a[i]);
  const control = again.map((x, i) => x / a[i]);
  return {
    a: median(a),
    b: median(b),
    ratio: median(ratios),
    spread: [Math.min(...ratios), Math.max(...ratios)],
    control: { ratio: median(control), spread: [Math.min(...control), Math.max(...control)] },
    rounds,
  };
}

/** Per unit of work with start-up cancelled: (count(large) - count(small)) / (large - small). */
function perUnit(env, argvFor, small, large) {
  return (count(env, argvFor(large)) - count(env, argvFor(small))) / (large - small);
}

module.exports = { haveValgrind, count, pairedCounts, perUnit };
