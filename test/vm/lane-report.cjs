#!/usr/bin/env node
'use strict';
// Reads what a lane's guests left in RESULTS_DIR (vitest JSON reports `vitest-*.json` and `kernel`, the
// guest's `uname -r`) and prints the lane's one summary line:
//   lane <name> kernel <release>: N passed, N failed, N skipped
// Exit 0 only when at least one test passed and none failed or was skipped: a real-kernel lane that
// skips (a missing expectation variable, an unknown guest name) or ran nothing is a failed lane. A
// missing or unreadable report is a failure too (the guest died before writing it).
// Each problem (a failed test with its error's first line, a missing report) is one line on stderr, and
// is appended to the file SMC_RUN_FAILURES names, when set (.ci/run prints that file last).
// usage: lane-report.cjs NAME RESULTS_DIR [--expect-reports N]
const fs = require('node:fs');
const path = require('node:path');

const [name, dir, ...rest] = process.argv.slice(2);
if (!name || !dir) {
  process.stderr.write('usage: lane-report.cjs NAME RESULTS_DIR [--expect-reports N]\n');
  process.exit(2);
}
const expectIdx = rest.indexOf('--expect-reports');
const expectReports = expectIdx >= 0 ? Number(rest[expectIdx + 1]) : 1;

let kernel = 'unknown';
try {
  kernel = fs.readFileSync(path.join(dir, 'kernel'), 'utf8').trim() || 'unknown';
} catch {}

let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];
let reports = [];
try {
  reports = fs.readdirSync(dir).filter((f) => /^vitest-.*\.json$/.test(f)).sort();
} catch (e) {
  problems.push(`no results directory ${dir} (${e.code || e.message})`);
}
if (reports.length < expectReports) problems.push(`${reports.length} vitest report(s), expected ${expectReports}`);
for (const f of reports) {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + r.numTodoTests;
    // a file that failed outside its tests (a syntax error, a throwing beforeAll: vitest then reports its
    // tests as skipped) is a failure, named with its error
    for (const t of r.testResults || []) {
      const file = path.relative(process.cwd(), t.name || '?');
      // each failed test by name, with the first line of its error: CI shows only the end of its output
      for (const a of t.assertionResults || []) {
        if (a.status !== 'failed') continue;
        const msg = String((a.failureMessages || [])[0] || '').split('\n')[0];
        problems.push(`failed: ${file} > ${a.fullName || a.title}${msg ? `: ${msg}` : ''}`);
      }
      if (t.status !== 'failed' || (t.assertionResults || []).some((a) => a.status === 'failed')) continue;
      failed++;
      // (vitest's JSON carries no message for a failed describe-level hook: its output above has it)
      const why = t.message ? String(t.message).split('\n')[0] : "the error is in the suite's output above";
      problems.push(`${file} failed outside its tests: ${why}`);
    }
  } catch (e) {
    problems.push(`unreadable report ${f}: ${e.message}`);
  }
}
for (const p of problems) process.stderr.write(`[lane ${name}] ${p}\n`);
// SMC_RUN_FAILURES: a file that collects these lines for the end of a CI run
if (process.env.SMC_RUN_FAILURES && problems.length > 0) {
  fs.appendFileSync(process.env.SMC_RUN_FAILURES, problems.map((p) => `[lane ${name}] ${p.slice(0, 400)}\n`).join(''));
}
process.stdout.write(`lane ${name} kernel ${kernel}: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(problems.length === 0 && failed === 0 && skipped === 0 && passed > 0 ? 0 : 1);
