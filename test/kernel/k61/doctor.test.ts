// smc-run doctor on 6.1 (smcr-6.1 lane, guest a: rxe0 up, UEID set): its advice fits the kernel: AF_SMC
// ok, IPPROTO_SMC and loopback-ism explained by the kernel version (no kernel option can add them to
// 6.1), no SMC-D buffer advice where SMC-D cannot happen, and instead of "SMC-R ready" a warning that
// 6.1's SMC cannot tell which interface rxe0/1 serves (every connection falls back with NOSMCDEV).
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

interface Doctor {
  checks: { id: string; status: string; message: string; fix?: string }[];
}

describe('doctor on 6.1', () => {
  it('advice that fits 6.1: no loopback-ism options, no IPPROTO_SMC, no SMC-D tuning; why SMC-R falls back', async () => {
    const r = await smcRun(['doctor', '--no-selftest', '--json']);
    const d = JSON.parse(r.stdout) as Doctor;
    console.log(`doctor on 6.1:\n${d.checks.map((c) => `  ${c.status} ${c.id}: ${c.message}${c.fix ? ` (fix: ${c.fix})` : ''}`).join('\n')}`);
    const by = (id: string) => d.checks.find((c) => c.id === id);
    // the kernel, device, EID and sysctl checks (the Node-side ones are not about the kernel)
    expect(d.checks.filter((c) => /^(kernel|devices|eid|sysctl)\./.test(c.id) && (c.status === 'fail' || c.status === 'warn')).map((c) => c.id)).toEqual(['devices.smcr_netdev']);
    expect(by('devices.smcr_netdev')?.message).toBe("SMC-R: the kernel's SMC does not know which interface rxe0/1 (on eth0) serves (its device list shows no net device and no PNET ID; SMC before Linux 6.12 asks the RDMA driver, and SoftRoCE (rdma_rxe) does not answer): connections fall back with NOSMCDEV");
    expect(by('devices.smcr_netdev')?.fix).toMatch(/Linux 6\.12\+/);
    expect(by('kernel.af_smc')).toMatchObject({ status: 'ok' });
    expect(by('kernel.ipproto_smc')).toMatchObject({ status: 'info', message: expect.stringMatching(/EPROTONOSUPPORT; kernel 6\.11\+\): smc-run uses AF_SMC/) });
    expect(by('devices.smcd')?.status).toBe('info');
    expect(by('devices.smcd')?.message).toMatch(/predates loopback-ism, which came in Linux 6\.10/);
    expect(by('devices.smcr')).toMatchObject({ status: 'ok', message: expect.stringMatching(/rxe0\/1 on eth0/) });
    expect(by('eid.ueid')).toMatchObject({ status: 'ok', message: expect.stringMatching(/SMC-RUN-TEST/) });
    expect(by('sysctl.buffers')).toBeUndefined();
    expect(by('sysctl.limit_smc_hs')).toBeUndefined();
    // nothing proposes a kernel option 6.1 cannot have
    expect(JSON.stringify(d.checks)).not.toMatch(/CONFIG_SMC_LO|CONFIG_DIBS/);
  });
});
