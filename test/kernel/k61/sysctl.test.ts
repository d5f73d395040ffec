// net.smc sysctls and the handshake limitation on Debian 12's stock 6.1 (smcr-6.1 lane, guest a): the
// listing is exactly the five knobs 6.1 has, each can be set and read back, and every knob of a later
// kernel is refused in one line with exit 1 (ENOTSUP: the kernel's limit, not a typo, which exits 2).
// 6.1 has no net.smc.limit_smc_hs, but it has the SMC netlink HS_LIMITATION commands: hs-limit works
// through those.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

const SIX_ONE = ['autocorking_size', 'rmem', 'smcr_buf_type', 'smcr_testlink_time', 'wmem'];
const proc = (name: string): string => fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').trim();

interface Listed { name: string; value: number | string; default: number | string | undefined; isDefault: boolean | undefined; since: string | undefined }

describe('sysctls on 6.1', () => {
  it('sysctl list shows exactly the five 6.1 knobs, at their defaults', async () => {
    const r = await smcRun(['sysctl', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const list = (JSON.parse(r.stdout) as { sysctls: Listed[] }).sysctls;
    expect(list.map((s) => s.name)).toEqual(SIX_ONE);
    expect(fs.readdirSync('/proc/sys/net/smc').sort()).toEqual(SIX_ONE);
    for (const s of list) {
      expect(s.value, s.name).toBe(Number(proc(s.name)));
      expect(s.isDefault, `${s.name} = ${s.value}, schema default ${s.default}`).toBe(true);
    }
    const table = await smcRun(['sysctl', 'list']);
    expect(table.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(SIX_ONE);
  });

  it('set and get work for each of them (checked in /proc), and the old values come back', async () => {
    const want: Record<string, [string, number]> = {
      autocorking_size: ['32k', 32768],
      rmem: ['1M', 1048576],
      smcr_buf_type: ['2', 2],
      smcr_testlink_time: ['60', 60],
      wmem: ['256k', 262144],
    };
    const before = Object.fromEntries(SIX_ONE.map((n) => [n, proc(n)]));
    try {
      const set = await smcRun(['sysctl', 'set', ...Object.entries(want).map(([n, [v]]) => `${n}=${v}`)]);
      expect(set.code, set.stderr).toBe(0);
      for (const [n, [, v]] of Object.entries(want)) {
        expect(set.stdout).toContain(`net.smc.${n}: ${before[n]} -> ${v}`);
        expect(Number(proc(n)), n).toBe(v);
      }
      const get = await smcRun(['sysctl', 'get', '--json', ...SIX_ONE]);
      expect(get.code, get.stderr).toBe(0);
      const got = (JSON.parse(get.stdout) as { sysctls: Listed[] }).sysctls;
      expect(Object.fromEntries(got.map((s) => [s.name, s.value]))).toEqual(Object.fromEntries(Object.entries(want).map(([n, [, v]]) => [n, v])));
      // the schema's ranges hold on 6.1 too: refused before the kernel sees them, exit 2
      const bad = await smcRun(['sysctl', 'set', 'smcr_buf_type=3']);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(proc('smcr_buf_type')).toBe('2');
    } finally {
      const back = await smcRun(['sysctl', 'set', ...SIX_ONE.map((n) => `${n}=${before[n]}`)]);
      expect(back.code, back.stderr).toBe(0);
    }
    for (const n of SIX_ONE) expect(proc(n), n).toBe(before[n]);
  });

  const LATER: [string, string, string][] = [
    ['smcr_max_links_per_lgr', '1', '6.6'],
    ['smcr_max_conns_per_lgr', '32', '6.6'],
    ['limit_smc_hs', '1', '6.12'],
    ['smcr_max_send_wr', '32', '6.19'],
    ['smcr_max_recv_wr', '64', '6.19'],
    ['hs_ctrl', 'x', '6.19, with CONFIG_SMC_HS_CTRL_BPF'],
  ];
  it('knobs of later kernels: one line saying so, exit 1, for get and set (ENOTSUP in --json)', async () => {
    for (const [name, value, since] of LATER) {
      const line = `smc-run: net.smc.${name} is not in this kernel (added in Linux ${since}); valid: ${SIX_ONE.join(', ')}`;
      const get = await smcRun(['sysctl', 'get', name]);
      expect([get.code, get.stdout, get.stderr], name).toEqual([1, '', `${line}\n`]);
      const set = await smcRun(['sysctl', 'set', `${name}=${value}`]);
      expect([set.code, set.stdout, set.stderr], name).toEqual([1, '', `${line}\n`]);
      const json = await smcRun(['sysctl', 'get', name, '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'ENOTSUP', message: line.slice('smc-run: '.length) } });
    }
    expect(fs.readdirSync('/proc/sys/net/smc').sort()).toEqual(SIX_ONE);
    // a name no kernel has stays a usage error
    expect((await smcRun(['sysctl', 'get', 'nosuch'])).code).toBe(2);
  });
});

describe('hs-limit on 6.1 (no sysctl; the SMC netlink commands)', () => {
  it('show, enable, show, disable: through netlink, exit 0', async () => {
    const show = await smcRun(['hs-limit', 'show']);
    expect([show.code, show.stderr]).toEqual([0, '']);
    expect(show.stdout).toBe('handshake limitation: off (SMC netlink; this kernel has no net.smc.limit_smc_hs)\n');
    try {
      const on = await smcRun(['hs-limit', 'enable', '--json']);
      expect(on.code, on.stderr).toBe(0);
      expect(JSON.parse(on.stdout)).toEqual({ enabled: true, change: { old: false, new: true }, via: 'netlink' });
      const again = await smcRun(['hs-limit', 'show', '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ enabled: true });
    } finally {
      const off = await smcRun(['hs-limit', 'disable']);
      expect(off.code, off.stderr).toBe(0);
      expect(off.stdout).toBe('handshake limitation: on -> off (SMC netlink; this kernel has no net.smc.limit_smc_hs)\n');
    }
    expect(JSON.parse((await smcRun(['hs-limit', 'show', '--json'])).stdout)).toMatchObject({ enabled: false });
  });
});
