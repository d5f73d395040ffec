// net.smc sysctls on a real 6.12 kernel, per network namespace: list and defaults, set/get in a fresh
// namespace by --netns and by --target PID while the initial namespace keeps its values, every bad
// input refused with its code and exit code and nothing changed, hs-limit as the same value as
// sysctl limit_smc_hs (and as the generic netlink view of it). Runs in the SMC-D guest as root.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, run, smcRun } from '../../helpers/run';
import { waitInNamespace } from '../../helpers/netns';
import { SmcGenl } from '../../../src/netlink/smc-genl';
import { listSmcSysctls, readSmcSysctl, writeSmcSysctl } from '../../../src/sysctl';

/** What a fresh namespace of a 6.12 kernel holds. */
const DEFAULTS_612: Record<string, number> = {
  autocorking_size: 65536,
  limit_smc_hs: 0,
  rmem: 65536,
  smcr_buf_type: 0,
  smcr_max_conns_per_lgr: 255,
  smcr_max_links_per_lgr: 2,
  smcr_testlink_time: 30,
  wmem: 65536,
};

interface Sysctl {
  name: string;
  key: string;
  value: number | string;
  default?: number | string;
  isDefault?: boolean;
}

const NS = `smcrun-sysctl-${process.pid}`;

/** The kernel's own answer, read by cat inside the namespace (no smc-run code involved). */
async function kernelValue(name: string, ns?: string): Promise<string> {
  if (ns === undefined) return fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').trim();
  const r = await run('ip', ['netns', 'exec', ns, 'cat', `/proc/sys/net/smc/${name}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

// Under TCG on a shared host one smc-run start takes seconds: tests that run many get more time.
const SLOW = 900_000;

async function json<T>(args: string[]): Promise<T> {
  const r = await smcRun([...args, '--json']);
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe.runIf(EXPECT_MODE === 'smcd')('net.smc sysctls per namespace (real kernel)', () => {
  beforeAll(async () => {
    const r = await run('ip', ['netns', 'add', NS]);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await run('ip', ['netns', 'del', NS]);
  });

  it('lists the 6.12 set with defaults and meanings', async () => {
    const { sysctls } = await json<{ sysctls: Sysctl[] }>(['sysctl', 'list']);
    const byName = new Map(sysctls.map((s) => [s.name, s]));
    for (const [name, value] of Object.entries(DEFAULTS_612)) {
      expect(byName.get(name), name).toMatchObject({ key: `net.smc.${name}`, value, default: value, isDefault: true });
    }
    // exactly what the kernel has, nothing from the schema that this kernel lacks
    expect(sysctls.map((s) => s.name)).toEqual(fs.readdirSync('/proc/sys/net/smc').sort());
    expect(byName.has('smcr_max_send_wr')).toBe(fs.existsSync('/proc/sys/net/smc/smcr_max_send_wr'));

    const table = await smcRun(['sysctl', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^Name\s+Value\s+Default\s+Meaning$/);
    expect(table.stdout).toMatch(/^autocorking_size\s+65536\s+65536\s+most bytes SMC coalesces/m);
  }, SLOW);

  it('a fresh namespace starts from the defaults (API, in-process)', () => {
    const sysctls = listSmcSysctls({ netns: NS });
    expect(sysctls.map((s) => s.name)).toEqual(fs.readdirSync('/proc/sys/net/smc').sort());
    for (const [name, value] of Object.entries(DEFAULTS_612)) expect(sysctls.find((s) => s.name === name), name).toMatchObject({ value, isDefault: true });
    expect(readSmcSysctl('net.smc.wmem', { netns: `/run/netns/${NS}` }).value).toBe(65536);
  });

  it('set in another namespace by --netns: read back there, the initial namespace keeps 65536', async () => {
    const set = await smcRun(['sysctl', 'set', '--netns', NS, 'autocorking_size=0']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('net.smc.autocorking_size: 65536 -> 0\n');
    const get = await smcRun(['sysctl', 'get', '--netns', NS, 'net.smc.autocorking_size']);
    expect(get.stdout).toBe('net.smc.autocorking_size = 0\n');
    expect(await kernelValue('autocorking_size', NS)).toBe('0');
    expect(await kernelValue('autocorking_size')).toBe('65536');
    // also by path, and sizes as people write them
    const { changes } = await json<{ changes: { key: string; old: number; new: number }[] }>(['sysctl', 'set', '--netns', `/run/netns/${NS}`, 'wmem=1M', 'rmem=256k']);
    expect(changes).toEqual([
      { name: 'wmem', key: 'net.smc.wmem', old: 65536, new: 1048576 },
      { name: 'rmem', key: 'net.smc.rmem', old: 65536, new: 262144 },
    ]);
    expect(await kernelValue('wmem', NS)).toBe('1048576');
    expect(await kernelValue('wmem')).toBe('65536');
  }, SLOW);

  it('exports the non-default values of that namespace', async () => {
    const r = await smcRun(['sysctl', 'export', '--format', 'oci', '--netns', NS]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ linux: { sysctl: { 'net.smc.autocorking_size': '0', 'net.smc.rmem': '262144', 'net.smc.wmem': '1048576' } } });
    const all = await smcRun(['sysctl', 'export', '--format', 'sysctl.d', '--all', '--netns', NS]);
    expect(all.stdout).toContain('net.smc.smcr_max_conns_per_lgr = 255\n');
  }, SLOW);

  describe('by --target PID of a process living in the namespace', () => {
    let sleeper: ChildProcess;
    beforeAll(async () => {
      sleeper = spawn('ip', ['netns', 'exec', NS, 'sleep', '60'], { stdio: 'ignore' });
      await waitInNamespace(sleeper.pid as number, `/run/netns/${NS}`);
    });
    afterAll(() => {
      sleeper.kill('SIGKILL');
    });

    it('reads and writes that namespace', async () => {
      const pid = String(sleeper.pid);
      expect((await smcRun(['sysctl', 'get', '--target', pid, 'autocorking_size'])).stdout).toBe('net.smc.autocorking_size = 0\n');
      const set = await smcRun(['sysctl', 'set', '--target', pid, 'autocorking_size=16k']);
      expect(set.stdout, set.stderr).toBe('net.smc.autocorking_size: 0 -> 16384\n');
      expect(await kernelValue('autocorking_size', NS)).toBe('16384');
      expect(await kernelValue('autocorking_size')).toBe('65536');
    }, SLOW);
  });

  describe('a --target that exits between two writes: the first is written back (all or nothing)', () => {
    const NS2 = `smcrun-sysctl-undo-${process.pid}`;
    let sleeper: ChildProcess;
    beforeAll(async () => {
      expect((await run('ip', ['netns', 'add', NS2])).code).toBe(0);
      sleeper = spawn('ip', ['netns', 'exec', NS2, 'sleep', '600'], { stdio: 'ignore' });
      await waitInNamespace(sleeper.pid as number, `/run/netns/${NS2}`);
    });
    afterAll(async () => {
      sleeper.kill('SIGKILL');
      await run('ip', ['netns', 'del', NS2]);
    });

    it('wmem=1M is restored to 65536 in the namespace held open, and the one line says so', async () => {
      // the test hook holds the command after each write: the target ends once the first one is in
      const child = spawn(process.execPath, [BIN, 'sysctl', 'set', '--target', String(sleeper.pid), 'wmem=1M', 'rmem=1M', '--json'], {
        env: { ...process.env, SMC_RUN_TEST_SYSCTL_HOLD_MS: '20000' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const done = new Promise<number | null>((r) => child.on('close', r));
      let seen = '';
      for (let i = 0; i < 300 && seen !== '1048576'; i++) {
        seen = await kernelValue('wmem', NS2);
        if (seen !== '1048576') await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen, 'the first write reached the kernel').toBe('1048576');
      sleeper.kill('SIGKILL');
      const code = await done;
      expect(code, stderr).toBe(1);
      expect(stderr).toBe('');
      expect(JSON.parse(stdout)).toEqual({
        error: { code: 'ESRCH', message: `PID ${sleeper.pid} exited while the command ran; restored what was set before it (net.smc.wmem = 65536): the namespace is as it was` },
      });
      expect([await kernelValue('wmem', NS2), await kernelValue('rmem', NS2)]).toEqual(['65536', '65536']);
    }, SLOW);
  });

  it('the API writes and refuses the same way in-process', () => {
    expect(writeSmcSysctl('smcr_max_conns_per_lgr', 64, { netns: NS })).toEqual({ name: 'smcr_max_conns_per_lgr', key: 'net.smc.smcr_max_conns_per_lgr', old: 255, new: 64 });
    expect(errorCode(() => writeSmcSysctl('smcr_max_conns_per_lgr', 8, { netns: NS }))).toBe('ERANGE');
    expect(errorCode(() => writeSmcSysctl('/proc/sys/kernel/hostname', 'x', { netns: NS }))).toBe('ENOSYSCTL');
    expect(readSmcSysctl('smcr_max_conns_per_lgr', { netns: NS }).value).toBe(64);
    expect(readSmcSysctl('smcr_max_conns_per_lgr').value).toBe(255);
  });

  describe('bad input is refused and changes nothing', () => {
    const cases: { what: string; args: string[]; exit: number; code: string; message: RegExp }[] = [
      { what: 'unknown name', args: ['set', 'nosuch=1'], exit: 2, code: 'ENOSYSCTL', message: /^unknown sysctl net\.smc\.nosuch; valid: autocorking_size, (hs_ctrl, )?limit_smc_hs, rmem, / },
      { what: 'a path as name', args: ['set', '../../../etc/hostname=x'], exit: 2, code: 'ENOSYSCTL', message: /not a net\.smc sysctl name/ },
      { what: 'out-of-range value', args: ['set', 'smcr_max_conns_per_lgr=300'], exit: 2, code: 'ERANGE', message: /^net\.smc\.smcr_max_conns_per_lgr: 300 is out of range; accepted: 16 \.\. 255$/ },
      { what: 'too small buffer', args: ['set', 'wmem=4k'], exit: 2, code: 'ERANGE', message: /accepted: 16384 \(16k\) \.\. 1073741823 bytes/ },
      { what: 'malformed value', args: ['set', 'autocorking_size=lots'], exit: 2, code: 'EINVAL', message: /^net\.smc\.autocorking_size: "lots" is not a size/ },
      { what: 'one bad of two', args: ['set', 'autocorking_size=0', 'limit_smc_hs=2'], exit: 2, code: 'ERANGE', message: /limit_smc_hs: 2 is out of range; accepted: 0 \.\. 1/ },
      { what: 'missing PID', args: ['set', '--target', '999999999', 'autocorking_size=0'], exit: 1, code: 'ESRCH', message: /^no process with PID 999999999$/ },
      { what: 'missing netns name', args: ['set', '--netns', 'no-such-ns', 'autocorking_size=0'], exit: 1, code: 'ENOENT', message: /no network namespace at \/run\/netns\/no-such-ns/ },
    ];
    let regularFile: string;
    beforeAll(() => {
      regularFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-')), 'not-a-netns');
      fs.writeFileSync(regularFile, 'x');
      cases.push({ what: 'a regular file as --netns', args: ['set', '--netns', regularFile, 'autocorking_size=0'], exit: 1, code: 'EINVAL', message: /is not a network namespace$/ });
    });

    const watched = ['autocorking_size', 'limit_smc_hs', 'smcr_max_conns_per_lgr', 'wmem'];
    const snapshot = (): Promise<string[]> => Promise.all(watched.map((n) => kernelValue(n)));

    it('with its message, code and exit code; the values stay', async () => {
      const before = await snapshot();
      expect(before).toEqual(['65536', '0', '255', '65536']);
      for (const c of cases) {
        // --json carries the same one-line message as stderr, plus the code
        const r = await smcRun(['sysctl', ...c.args, '--json']);
        expect(r.code, c.what).toBe(c.exit);
        expect(r.stderr, c.what).toBe('');
        const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
        expect(error.code, c.what).toBe(c.code);
        expect(error.message, c.what).toMatch(c.message);
      }
      expect(await snapshot()).toEqual(before);
    }, SLOW);

    it('without --json: one line on stderr, nothing on stdout', async () => {
      for (const c of [cases.at(-1)]) {
        const r = await smcRun(['sysctl', ...(c?.args ?? [])]);
        expect(r.code, c?.what).toBe(c?.exit);
        expect(r.stdout, c?.what).toBe('');
        expect(r.stderr.trimEnd().split('\n'), c?.what).toHaveLength(1);
        expect(r.stderr.replace(/^smc-run: /, '').trimEnd(), c?.what).toMatch(c?.message ?? /never/);
      }
      expect(await snapshot()).toEqual(['65536', '0', '255', '65536']);
    }, SLOW);
  });

  it('without privilege: says which capability is needed, changes nothing', async () => {
    // the same node and smc-run, as nobody without capabilities
    const asNobody = (args: string[]) =>
      run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, BIN, ...args, '--json']);
    const own = await asNobody(['sysctl', 'set', 'wmem=1M']);
    expect(own.code, own.stderr).toBe(1);
    expect(JSON.parse(own.stdout).error).toEqual({ code: 'EACCES', message: 'writing net.smc.wmem needs CAP_NET_ADMIN over its network namespace (run as root, e.g. with sudo)' });
    const other = await asNobody(['hs-limit', 'enable', '--netns', NS]);
    expect(other.code, other.stderr).toBe(1);
    expect(JSON.parse(other.stdout).error).toMatchObject({ code: 'EPERM', message: `entering the network namespace /run/netns/${NS} needs CAP_SYS_ADMIN (run as root, e.g. with sudo)` });
    expect([await kernelValue('wmem'), await kernelValue('limit_smc_hs', NS)]).toEqual(['65536', '0']);
  }, SLOW);

  it('writes in the own namespace too (restored afterwards)', async () => {
    try {
      const set = await smcRun(['sysctl', 'set', 'smcr_testlink_time=10']);
      expect(set.stdout, set.stderr).toBe('net.smc.smcr_testlink_time: 30 -> 10\n');
      expect(await kernelValue('smcr_testlink_time')).toBe('10');
      expect(await kernelValue('smcr_testlink_time', NS)).toBe('30');
    } finally {
      fs.writeFileSync('/proc/sys/net/smc/smcr_testlink_time', '30\n');
    }
    expect(await kernelValue('smcr_testlink_time')).toBe('30');
  }, SLOW);

  it('hs-limit enable in the namespace: same value as sysctl limit_smc_hs and as the netlink view', async () => {
    expect(await kernelValue('limit_smc_hs', NS)).toBe('0');
    const en = await smcRun(['hs-limit', 'enable', '--netns', NS]);
    expect(en.code, en.stderr).toBe(0);
    expect(en.stdout).toBe('net.smc.limit_smc_hs: 0 -> 1\n');
    expect((await smcRun(['hs-limit', 'show', '--netns', NS])).stdout).toBe('handshake limitation: on (net.smc.limit_smc_hs = 1)\n');
    expect((await smcRun(['sysctl', 'get', 'limit_smc_hs', '--netns', NS])).stdout).toBe('net.smc.limit_smc_hs = 1\n');
    expect(await kernelValue('limit_smc_hs', NS)).toBe('1');
    // the generic netlink DUMP_HS_LIMITATION answers from the same per-namespace field
    expect(SmcGenl.with(`/run/netns/${NS}`, (g) => g.hsLimitation())).toBe(true);
    expect(SmcGenl.with(undefined, (g) => g.hsLimitation())).toBe(false);
    // the initial namespace is untouched
    expect(await kernelValue('limit_smc_hs')).toBe('0');
    const dis = await smcRun(['hs-limit', 'disable', '--netns', NS, '--json']);
    expect(JSON.parse(dis.stdout)).toMatchObject({ enabled: false, change: { key: 'net.smc.limit_smc_hs', old: 1, new: 0 } });
    expect(SmcGenl.with(`/run/netns/${NS}`, (g) => g.hsLimitation())).toBe(false);
  }, SLOW);
});
