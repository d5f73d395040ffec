// The sysctl and hs-limit commands' contract on any host: exports and refusals need no SMC; a host
// without SMC gets ENOSMC (exit 1); on a host with SMC the reads match /proc (this suite never writes a
// host's sysctls). Real writes: test/kernel/smcd/sysctl.test.ts.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { smcRun } from '../helpers/run';

describe('smc-run sysctl export (from given values)', () => {
  it('prints an OCI fragment with kernel-form values', async () => {
    const r = await smcRun(['sysctl', 'export', '--format', 'oci', 'wmem=1M', 'net.smc.rmem=64k']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ linux: { sysctl: { 'net.smc.wmem': '1048576', 'net.smc.rmem': '65536' } } });
  });

  it('prints a pod fragment that parses as YAML', async () => {
    const r = await smcRun(['sysctl', 'export', '--format', 'k8s', 'autocorking_size=0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("--allowed-unsafe-sysctls 'net.smc.*'");
    expect(parseYaml(r.stdout)).toEqual({ securityContext: { sysctls: [{ name: 'net.smc.autocorking_size', value: '0' }] } });
  });

  it('prints sysctl.d lines', async () => {
    const r = await smcRun(['sysctl', 'export', '--format', 'sysctl.d', 'limit_smc_hs=1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(['net.smc.limit_smc_hs = 1']);
  });

  it('refuses bad pairs with exit 2 and one line', async () => {
    const cases: [string, string, RegExp][] = [
      ['rmem=1k', 'ERANGE', /net\.smc\.rmem: 1k is out of range; accepted: 16384 \(16k\)/],
      ['wmem=lots', 'EINVAL', /net\.smc\.wmem: "lots" is not a size/],
      ['nosuch=1', 'ENOSYSCTL', /unknown sysctl net\.smc\.nosuch; valid: autocorking_size/],
      ['../../etc/passwd=1', 'ENOSYSCTL', /not a net\.smc sysctl name/],
      ['wmem', 'EINVAL', /not NAME=VALUE/],
    ];
    for (const [pair, code, message] of cases) {
      const r = await smcRun(['sysctl', 'export', '--format', 'oci', pair]);
      expect(r.code, pair).toBe(2);
      expect(r.stdout, pair).toBe('');
      expect(r.stderr.trimEnd().split('\n'), pair).toHaveLength(1);
      expect(r.stderr, pair).toMatch(message);
      const j = await smcRun(['sysctl', 'export', '--format', 'oci', pair, '--json']);
      expect(j.code, pair).toBe(2);
      expect(JSON.parse(j.stdout).error.code, pair).toBe(code);
    }
  });

  it('needs --format, and --all only without pairs', async () => {
    expect((await smcRun(['sysctl', 'export', 'wmem=1M'])).code).toBe(2);
    expect((await smcRun(['sysctl', 'export', '--format', 'yaml', 'wmem=1M'])).code).toBe(2);
    expect((await smcRun(['sysctl', 'export', '--format', 'oci', '--all', 'wmem=1M'])).code).toBe(2);
  });
});

describe('smc-run sysctl / hs-limit: namespaces and missing SMC', () => {
  it('a PID that does not exist: ESRCH, exit 1', async () => {
    const r = await smcRun(['sysctl', 'list', '--target', '999999999', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'ESRCH', message: 'no process with PID 999999999' });
  });

  it('both --target and --netns: usage error', async () => {
    expect((await smcRun(['hs-limit', 'show', '--target', String(process.pid), '--netns', 'x'])).code).toBe(2);
  });

  it('an unknown action: usage error', async () => {
    expect((await smcRun(['hs-limit', 'toggle'])).code).toBe(2);
    expect((await smcRun(['sysctl', 'frob'])).code).toBe(2);
  });

  if (HOST_HAS_SMC) {
    it('with SMC: list, get, hs-limit show and export read what the kernel has', async () => {
      const proc = (name: string): string => fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').trim();
      const list = await smcRun(['sysctl', 'list', '--json']);
      expect(list.code, list.stderr).toBe(0);
      const { sysctls } = JSON.parse(list.stdout) as { sysctls: { name: string; value: number | string }[] };
      expect(sysctls.map((x) => x.name)).toEqual(fs.readdirSync('/proc/sys/net/smc').sort());
      expect(String(sysctls.find((x) => x.name === 'wmem')?.value)).toBe(proc('wmem'));
      const get = await smcRun(['sysctl', 'get', 'wmem']);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout).toBe(`net.smc.wmem = ${proc('wmem')}\n`);
      const hs = await smcRun(['hs-limit', 'show', '--json']);
      expect(hs.code, hs.stderr).toBe(0);
      const oci = await smcRun(['sysctl', 'export', '--format', 'oci', '--all']);
      expect(oci.code, oci.stderr).toBe(0);
      expect(JSON.parse(oci.stdout).linux.sysctl['net.smc.wmem']).toBe(proc('wmem'));
    });
  } else {
    it('without SMC: ENOSMC, exit 1, for list, get, set and hs-limit', async () => {
      for (const args of [['sysctl', 'list'], ['sysctl', 'get', 'wmem'], ['sysctl', 'set', 'wmem=1M'], ['hs-limit', 'show'], ['sysctl', 'export', '--format', 'oci']]) {
        const r = await smcRun([...args, '--json']);
        expect(r.code, args.join(' ')).toBe(1);
        expect(JSON.parse(r.stdout).error.code, args.join(' ')).toBe('ENOSMC');
      }
    });
  }
});
