// What the newest kernel (lane smcd-newest: Debian's newest linux-source, 7.x) does differently from 6.12,
// on real SMC-D: loopback-ism is the DIBS device `lo` in sysfs (6.18+) and devices / info / doctor say so;
// 6.19's sysctls smcr_max_send_wr / smcr_max_recv_wr (per namespace, 2..2048) and hs_ctrl (the kernel
// refuses a name no loaded BPF struct_ops has: one clear error, exit 1); the SMC TCP ULP is gone (7.0).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, smcRun } from '../../helpers/run';
import { getSmcDevices, getSmcSystemInfo } from '../../../src/api/system';
import { readDibsDevices } from '../../../src/topology/dibs';

const kernelConfig = (): string => zlib.gunzipSync(fs.readFileSync('/proc/config.gz')).toString('utf8');
const sysctl = (name: string): string => fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').replace(/\n$/, '');
const NS = `smcrun-newest-${process.pid}`;

// each smc-run start takes seconds under TCG
const SLOW = 600_000;

describe(`the newest kernel (${os.release()})`, () => {
  it('is 6.19 or newer, built with DIBS loopback, SMC_HS_CTRL_BPF, BTF and no SMC_LO', () => {
    const [major, minor] = os.release().split('.').map(Number) as [number, number];
    expect(major > 6 || (major === 6 && minor >= 19), os.release()).toBe(true);
    const config = kernelConfig();
    for (const opt of ['CONFIG_DIBS=y', 'CONFIG_DIBS_LO=y', 'CONFIG_SMC=y', 'CONFIG_SMC_DIAG=y', 'CONFIG_SMC_HS_CTRL_BPF=y', 'CONFIG_DEBUG_INFO_BTF=y']) expect(config).toContain(`\n${opt}\n`);
    expect(config).not.toMatch(/^CONFIG_SMC_LO=/m);
  });

  describe('loopback-ism is the DIBS device lo', () => {
    it('sysfs /sys/class/dibs/lo, and the API reports it', () => {
      const dibs = readDibsDevices();
      expect(dibs).toEqual([{ name: 'lo', gid: expect.stringMatching(/^[0-9a-f-]{36}$/), fabricId: expect.any(Number), loopback: true }]);
      // the SMC-D device dump still leaves it out; system info still calls it ISMv2
      expect(getSmcDevices()).toMatchObject({ smcd: [], ismV2: true, loopbackIsm: true, dibs });
      expect(getSmcSystemInfo()).toMatchObject({ ismV2: true, dibs });
    });

    it('stats devices, stats info and doctor name it', async () => {
      const dev = await smcRun(['stats', 'devices']);
      expect(dev.code, dev.stderr).toBe(0);
      expect(dev.stdout).toContain('loopback-ism: present (the DIBS loopback device lo, /sys/class/dibs/lo)');
      expect(dev.stdout).toMatch(/^DIBS devices .*\n {2}Name +Kind +GID +Fabric\n {2}lo +loopback \(loopback-ism\) +[0-9a-f-]{36} +0x[0-9a-f]{4}$/m);
      const info = await smcRun(['stats', 'info']);
      expect(info.stdout).toMatch(/^SMC-Dv2 \(ISMv2\) +yes \(the DIBS loopback device lo is present: loopback-ism\)$/m);
      const doc = await smcRun(['doctor']);
      expect(doc.code, doc.stdout + doc.stderr).toBe(0);
      expect(doc.stdout).toMatch(/\[ok {2}\] SMC-D: an ISMv2 device is registered: the DIBS loopback device lo \(loopback-ism/);
      expect(doc.stdout).toMatch(/\[ok {2}\] loopback connection 127\.0\.0\.1: client SMC-D, server SMC-D/);
    }, SLOW);
  });

  describe("6.19's sysctls", () => {
    beforeAll(async () => {
      expect((await run('ip', ['netns', 'add', NS])).code).toBe(0);
    });
    afterAll(async () => {
      await run('ip', ['netns', 'del', NS]);
    });

    it('smcr_max_send_wr / smcr_max_recv_wr: defaults 16 / 48, set per namespace, 2..2048 enforced', async () => {
      const list = JSON.parse((await smcRun(['sysctl', 'list', '--netns', NS, '--json'])).stdout) as { sysctls: { name: string; value: unknown; isDefault: boolean }[] };
      expect(list.sysctls.filter((s) => s.name.startsWith('smcr_max_') && s.name.endsWith('_wr'))).toEqual([
        expect.objectContaining({ name: 'smcr_max_recv_wr', value: 48, isDefault: true }),
        expect.objectContaining({ name: 'smcr_max_send_wr', value: 16, isDefault: true }),
      ]);
      const set = await smcRun(['sysctl', 'set', '--netns', NS, 'smcr_max_send_wr=64', 'smcr_max_recv_wr=2048']);
      expect(set.stdout, set.stderr).toBe('net.smc.smcr_max_send_wr: 16 -> 64\nnet.smc.smcr_max_recv_wr: 48 -> 2048\n');
      const inNs = await run('ip', ['netns', 'exec', NS, 'cat', '/proc/sys/net/smc/smcr_max_send_wr', '/proc/sys/net/smc/smcr_max_recv_wr']);
      expect(inNs.stdout).toBe('64\n2048\n');
      expect([sysctl('smcr_max_send_wr'), sysctl('smcr_max_recv_wr')]).toEqual(['16', '48']);
      for (const bad of ['smcr_max_send_wr=1', 'smcr_max_recv_wr=2049']) {
        const r = await smcRun(['sysctl', 'set', '--netns', NS, bad]);
        expect(r.code, bad).toBe(2);
        expect(r.stderr, bad).toMatch(/out of range; accepted: 2 \.\. 2048\n$/);
      }
    }, SLOW);

    it('hs_ctrl: empty by default; a name no BPF struct_ops has is refused by the kernel, one line, exit 1', async () => {
      expect(sysctl('hs_ctrl')).toBe('');
      const r = await smcRun(['sysctl', 'set', 'hs_ctrl=nosuch']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^smc-run: the kernel refused "nosuch" for net\.smc\.hs_ctrl \(EINVAL\): no BPF handshake controller \(struct_ops smc_hs_ctrl\) of that name is loaded\n$/);
      const j = await smcRun(['sysctl', 'set', '--netns', NS, 'hs_ctrl=nosuch', '--json']);
      expect(j.code).toBe(1);
      expect(JSON.parse(j.stdout).error).toMatchObject({ code: 'EINVAL', message: expect.stringMatching(/kernel refused "nosuch" for net\.smc\.hs_ctrl in .*\(EINVAL\)/) });
      // too long for the kernel's 16-byte field: refused before writing (usage)
      const long = await smcRun(['sysctl', 'set', 'hs_ctrl=a_name_of_16_chr']);
      expect(long.code).toBe(2);
      expect(sysctl('hs_ctrl')).toBe('');
      // the empty name (no controller) is accepted
      const clear = await smcRun(['sysctl', 'set', 'hs_ctrl=']);
      expect(clear.code, clear.stderr).toBe(0);
    }, SLOW);

    it('hs_ctrl refused after a value the kernel took: that value is written back, one true line, exit 1', async () => {
      const inNs = async (name: string): Promise<string> => (await run('ip', ['netns', 'exec', NS, 'cat', `/proc/sys/net/smc/${name}`])).stdout.trim();
      expect(await inNs('wmem')).toBe('65536');
      const r = await smcRun(['sysctl', 'set', '--netns', NS, 'wmem=1M', 'hs_ctrl=nosuch']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `smc-run: the kernel refused "nosuch" for net.smc.hs_ctrl in the network namespace /run/netns/${NS} (EINVAL): no BPF handshake controller (struct_ops smc_hs_ctrl) of that name is loaded; ` +
          'restored what was set before it (net.smc.wmem = 65536): the namespace is as it was\n',
      );
      expect([await inNs('wmem'), await inNs('hs_ctrl')]).toEqual(['65536', '']);
    }, SLOW);
  });

  it('the SMC TCP ULP is gone (7.0): the kernel offers no "smc" ULP', () => {
    expect(fs.readFileSync('/proc/sys/net/ipv4/tcp_available_ulp', 'utf8').split(/\s+/)).not.toContain('smc');
  });
});
