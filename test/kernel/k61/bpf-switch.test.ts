// The BPF switch on Debian 12's stock 6.1 (smcr-6.1 lane, guest a): the kernel has BTF but no
// update_socket_protocol() hook (6.6+), so status says why it is not possible and enable is refused in
// one line (exit 1, ENOTSUP), loading nothing.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

describe('BPF switch on 6.1', () => {
  it('status: BTF yes, hook no, not possible; enable --host: ENOTSUP in one line, nothing loaded', async () => {
    const st = await smcRun(['status', '--json']);
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ kernel: { kernel: os.release(), btf: true, hook: false, hsCtrl: false }, possible: false, loaded: false });
    const text = await smcRun(['status']);
    expect(text.stdout.split('\n')[0]).toMatch(/BPF switch not possible \(no update_socket_protocol hook, Linux 6\.6\+\)/);
    const en = await smcRun(['enable', '--host']);
    expect(en.code).toBe(1);
    expect(en.stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^smc-run: this kernel \(6\.1\.[^)]+\) has no update_socket_protocol hook \(Linux 6\.6\+\)/)]);
    const j = await smcRun(['enable', '--host', '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ error: { code: 'ENOTSUP' } });
    expect(fs.existsSync('/sys/fs/bpf/smc-run/link')).toBe(false);
    const d = await smcRun(['doctor', '--json', '--no-selftest']);
    const check = (JSON.parse(d.stdout) as { checks: { id: string; status: string; message: string }[] }).checks.find((c) => c.id === 'mechanism.bpf_switch');
    expect(check).toMatchObject({ status: 'info', message: expect.stringMatching(/not possible on this kernel \(6\.1\.[^:]+: no update_socket_protocol hook, Linux 6\.6\+\): only programs started by the launcher/) });
  });
});
