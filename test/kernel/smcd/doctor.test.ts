// smc-run doctor on real SMC-D: without a UEID it names NOUEID and the fix; with one it passes and the
// loopback self-test reports SMC-D on both ends.
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

interface Doctor {
  ok: boolean;
  checks: { id: string; status: string; message: string; fix?: string }[];
}

describe.runIf(EXPECT_MODE === 'smcd')('doctor on SMC-D', () => {
  afterAll(async () => {
    await smcRun(['ueid', 'add', 'SMC-RUN-TEST']);
  });

  it('without a UEID: FAIL naming NOUEID with the fix, and the self-test shows the fallback', async () => {
    expect((await smcRun(['ueid', 'flush'])).code).toBe(0);
    const r = await smcRun(['doctor', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const d = JSON.parse(r.stdout) as Doctor;
    const eid = d.checks.find((c) => c.id === 'eid.none');
    expect(eid).toMatchObject({ status: 'fail' });
    expect(eid?.message).toMatch(/NOUEID/);
    expect(eid?.fix).toMatch(/smc-run ueid add/);
    const self = d.checks.find((c) => c.id === 'selftest.loopback');
    expect(self?.status).toBe('fail');
    expect(self?.message).toMatch(/NOUEID/);
  });

  it('after smc-run ueid add: passes, and the self-test reports SMC-D on both ends', async () => {
    expect((await smcRun(['ueid', 'add', 'SMC-RUN-TEST'])).code).toBe(0);
    const r = await smcRun(['doctor']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\[ok {2}\] SMC-D: an ISMv2 device is registered/);
    // bin/smc-run itself launched a child node, and its preload installed the hook there
    expect(r.stdout).toMatch(/\[ok {2}\] the launcher \(bin\/smc-run\) installs the hook in a child node process/);
    expect(r.stdout).toMatch(/\[ok {2}\] loopback connection 127\.0\.0\.1: client SMC-D, server SMC-D/);
    expect(r.stdout).toMatch(/SMC is ready/);
  });
});
