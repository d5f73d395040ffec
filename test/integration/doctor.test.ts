// smc-run doctor on this host (no SMC in the kernel): clear FAIL lines with the fix, exit 1, JSON parses.
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../helpers/run';

describe.skipIf(EXPECT_MODE)('doctor on a kernel without SMC', () => {
  it('names the missing kernel support and the fix, exit 1', async () => {
    const r = await smcRun(['doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\[ok {2}\] native addon loads/);
    expect(r.stdout).toMatch(/\[FAIL\] AF_SMC sockets cannot be created \(EAFNOSUPPORT/);
    expect(r.stdout).toMatch(/fix: modprobe smc/);
    expect(r.stderr).toBe('');
  });

  it('--json gives the same verdict as data', async () => {
    const r = await smcRun(['doctor', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; checks: { id: string; status: string }[] };
    expect(out.ok).toBe(false);
    expect(out.checks.find((c) => c.id === 'kernel.af_smc')?.status).toBe('fail');
  });

  it('a bad --target is one line, exit 1 (JSON error with --json)', async () => {
    const r = await smcRun(['doctor', '--target', '999999999']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual(['smc-run: no process with PID 999999999']);
    const j = await smcRun(['doctor', '--target', '999999999', '--json']);
    expect(JSON.parse(j.stdout)).toEqual({ error: { code: 'ESRCH', message: 'no process with PID 999999999' } });
  });
});
