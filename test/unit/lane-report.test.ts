// The lane gate (test/vm/lane-report.cjs): a real-kernel lane passes only when its guests' vitest reports
// show tests passed and none failed or skipped, and a file that failed outside its tests counts as failed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(__dirname, '../vm/lane-report.cjs');
const dirs: string[] = [];

interface FileResult {
  name: string;
  status: 'passed' | 'failed';
  message?: string;
  assertionResults: { status: string; fullName?: string; failureMessages?: string[] }[];
}

function report(files: FileResult[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-lane-report-'));
  dirs.push(dir);
  const count = (s: string): number => files.flatMap((f) => f.assertionResults).filter((a) => a.status === s).length;
  fs.writeFileSync(path.join(dir, 'kernel'), '6.12.0-test\n');
  fs.writeFileSync(path.join(dir, 'vitest-main.json'), JSON.stringify({
    numPassedTests: count('passed'), numFailedTests: count('failed'), numPendingTests: count('skipped'), numTodoTests: 0,
    testResults: files,
  }));
  return dir;
}

function gate(dir: string, env: NodeJS.ProcessEnv = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, 'lane-x', dir], { encoding: 'utf8', env: { ...process.env, SMC_RUN_FAILURES: '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('lane-report', () => {
  it('passes a lane whose tests all passed', () => {
    const r = gate(report([{ name: '/r/a.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }, { status: 'passed' }] }]));
    expect(r.stdout).toBe('lane lane-x kernel 6.12.0-test: 2 passed, 0 failed, 0 skipped\n');
    expect(r.code).toBe(0);
  });

  it('fails a lane with a skipped test', () => {
    const r = gate(report([{ name: '/r/a.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }, { status: 'skipped' }] }]));
    expect(r.stdout).toContain('1 passed, 0 failed, 1 skipped');
    expect(r.code).toBe(1);
  });

  it('counts a file whose beforeAll threw (its tests reported skipped) as failed, with its error', () => {
    const r = gate(report([
      { name: '/r/a.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }] },
      { name: '/r/b.test.ts', status: 'failed', message: 'echo server did not start in 240 s: boom\nstack', assertionResults: [{ status: 'skipped' }, { status: 'skipped' }] },
    ]));
    expect(r.stdout).toContain('1 passed, 1 failed, 2 skipped');
    expect(r.stderr).toMatch(/b\.test\.ts failed outside its tests: echo server did not start in 240 s: boom\n/);
    expect(r.code).toBe(1);
    // vitest's JSON has no message for a failed describe-level hook
    const quiet = gate(report([{ name: '/r/c.test.ts', status: 'failed', message: '', assertionResults: [{ status: 'skipped' }] }]));
    expect(quiet.stderr).toContain("c.test.ts failed outside its tests: the error is in the suite's output above");
    expect(quiet.stdout).toContain('0 passed, 1 failed, 1 skipped');
  });

  it('names each failed test with its error, on stderr and in the SMC_RUN_FAILURES file', () => {
    const dir = report([
      {
        name: path.join(process.cwd(), 'test/a.test.ts'),
        status: 'failed',
        assertionResults: [
          { status: 'passed', fullName: 'suite ok' },
          { status: 'failed', fullName: 'suite > sends every byte', failureMessages: ['AssertionError: expected 3 to be 4\n    at stack'] },
        ],
      },
    ]);
    const failures = path.join(dir, 'failures');
    fs.writeFileSync(failures, 'earlier line\n');
    const r = gate(dir, { SMC_RUN_FAILURES: failures });
    const line = '[lane lane-x] failed: test/a.test.ts > suite > sends every byte: AssertionError: expected 3 to be 4\n';
    expect(r.stdout).toBe('lane lane-x kernel 6.12.0-test: 1 passed, 1 failed, 0 skipped\n');
    expect(r.stderr).toBe(line);
    expect(fs.readFileSync(failures, 'utf8')).toBe(`earlier line\n${line}`);
    expect(r.code).toBe(1);
    // a passing lane adds nothing to the file
    const ok = report([{ name: '/r/a.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }] }]);
    expect(gate(ok, { SMC_RUN_FAILURES: failures }).code).toBe(0);
    expect(fs.readFileSync(failures, 'utf8')).toBe(`earlier line\n${line}`);
  });

  it('fails a lane whose report is missing', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-lane-report-'));
    dirs.push(dir);
    const r = gate(dir);
    expect(r.stderr).toContain('0 vitest report(s), expected 1');
    expect(r.code).toBe(1);
  });
});
