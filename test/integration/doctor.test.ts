// smc-run doctor on this host. Without SMC in the kernel: clear FAIL lines with the fix, exit 1. With SMC:
// the AF_SMC check passes and the exit code is the verdict (0 exactly when every check is ok). JSON parses.
import { describe, expect, it } from 'vitest';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { EXPECT_MODE, smcRun } from '../helpers/run';

describe.skipIf(EXPECT_MODE)(`doctor on a kernel ${HOST_HAS_SMC ? 'with' : 'without'} SMC`, () => {
  it(HOST_HAS_SMC ? 'passes the AF_SMC check; exit code is the verdict' : 'names the missing kernel support and the fix, exit 1', async () => {
    const r = await smcRun(['doctor']);
    expect(r.stdout).toMatch(/\[ok {2}\] native addon loads/);
    expect(r.stderr).toBe('');
    if (HOST_HAS_SMC) {
      expect(r.stdout).toMatch(/\[ok {2}\] AF_SMC sockets can be created/);
      expect(r.code).toBe(/\[FAIL\]/.test(r.stdout) ? 1 : 0);
    } else {
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/\[FAIL\] AF_SMC sockets cannot be created \(EAFNOSUPPORT/);
      expect(r.stdout).toMatch(/fix: modprobe smc/);
    }
  });

  it('--json gives the same verdict as data', async () => {
    const text = await smcRun(['doctor']);
    const r = await smcRun(['doctor', '--json']);
    const out = JSON.parse(r.stdout) as { ok: boolean; checks: { id: string; status: string }[] };
    expect(out.checks.find((c) => c.id === 'kernel.af_smc')?.status).toBe(HOST_HAS_SMC ? 'ok' : 'fail');
    expect(r.code).toBe(out.ok ? 0 : 1);
    expect(r.code).toBe(text.code);
    if (!HOST_HAS_SMC) expect(out.ok).toBe(false);
  });

  it('a bad --target is one line, exit 1 (JSON error with --json)', async () => {
    const r = await smcRun(['doctor', '--target', '999999999']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual(['smc-run: no process with PID 999999999']);
    const j = await smcRun(['doctor', '--target', '999999999', '--json']);
    expect(JSON.parse(j.stdout)).toEqual({ error: { code: 'ESRCH', message: 'no process with PID 999999999' } });
  });
});
