// The big-endian proof on a real s390x kernel (qemu-system-s390x, 6.12 with loopback-ism): every netlink
// feature of smc-run read and written by s390x Node processes in the host's (big-endian) byte order.
// SMC-D on both ends through getSmcInfo in the connecting process itself, stats sockets / system / info,
// the UEID table, the system EID (which exists on s390 only), sysctls and hs-limit in a fresh network
// namespace, doctor. Runs in the s390x guest (test/vm/lanes/s390x.sh) as root, with the UEID SMC-RUN-TEST.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, run, smcRun } from '../../helpers/run';
import { addon } from '../../../src/native';
import { SmcGenl } from '../../../src/netlink/smc-genl';
import type { SmcSocketInfo } from '../../../src/stats/sockets';
import type { SmcSystemStats } from '../../../src/stats/system';

// odd on purpose: the byte counters must come out exact, not rounded to a buffer size
const N = (1 << 20) + 12345;
const HOLD = path.join(__dirname, 'hold.cjs');
const SLOW = 600_000;
const AF_SMC = 43;

interface HoldInfo {
  pid: number;
  arch: string;
  endianness: string;
  echoed: number;
  same: boolean;
  client: SmcSocketInfo;
  server: SmcSocketInfo;
}

async function json<T>(args: string[]): Promise<T> {
  const r = await smcRun([...args, '--json']);
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

/** The kernel's own answer, read by cat inside the namespace (no smc-run code involved). */
async function kernelValue(name: string, ns?: string): Promise<string> {
  if (ns === undefined) return fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').trim();
  const r = await run('ip', ['netns', 'exec', ns, 'cat', `/proc/sys/net/smc/${name}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe.runIf(EXPECT_MODE === 'smcd')('s390x (big-endian) on a real SMC-D kernel', () => {
  const ns = `smcrun-s390x-${process.pid}`;
  const ns2 = `smcrun-s390x-sysctl-${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-s390x-'));
  const snap = path.join(dir, 'zero.snap');
  let holder: ChildProcess | undefined;
  let info: HoldInfo | undefined;

  beforeAll(async () => {
    for (const n of [ns, ns2]) {
      const add = await run('ip', ['netns', 'add', n]);
      expect(add.code, add.stderr).toBe(0);
      expect((await run('ip', ['netns', 'exec', n, 'ip', 'link', 'set', 'lo', 'up'])).code).toBe(0);
    }
  });

  afterAll(async () => {
    holder?.kill('SIGTERM');
    for (const n of [ns, ns2]) await run('ip', ['netns', 'del', n]);
    fs.rmSync(dir, { recursive: true, force: true });
    await smcRun(['ueid', 'add', 'SMC-RUN-TEST']);
    await smcRun(['seid', 'enable']);
  });

  it('is a big-endian Node on an s390x kernel, with the s390x addon making AF_SMC sockets', async () => {
    expect(process.arch).toBe('s390x');
    expect(os.endianness()).toBe('BE');
    expect(os.machine()).toBe('s390x');
    expect(os.release()).toMatch(/^6\.12\.\d+-smcrun$/);
    const fd = addon().createSocket(AF_SMC, 0);
    expect(fd).toBeGreaterThan(2);
    addon().closeFd(fd);
    console.log(`s390x: node ${process.version}, kernel ${os.release()}, endianness ${os.endianness()}`);
  });

  it('stats system --save in a fresh namespace: every counter at zero', async () => {
    const s = await json<{ system: SmcSystemStats; saved: string }>(['stats', 'system', '--netns', ns, '--save', snap]);
    expect(s.saved).toBe(snap);
    expect(s.system.smcd.connections).toEqual({ clientV1: 0, clientV2: 0, serverV1: 0, serverV2: 0 });
    expect(s.system.smcd.bytes).toEqual({ rx: 0, tx: 0 });
  }, SLOW);

  it('a Node client and server under smc-run are SMC-D on both ends, as getSmcInfo reads them in that s390x process', async () => {
    holder = spawn('ip', ['netns', 'exec', ns, process.execPath, BIN, process.execPath, HOLD, String(N)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    holder.stderr?.on('data', (d) => (stderr += d));
    info = await new Promise<HoldInfo>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no info from hold.cjs: ${stdout}${stderr}`)), 300_000);
      holder?.on('exit', (code) => reject(new Error(`hold.cjs exited ${code}: ${stdout}${stderr}`)));
      holder?.stdout?.on('data', (d) => {
        stdout += d;
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (!line || !stdout.includes('\n')) return;
        clearTimeout(timer);
        const msg = JSON.parse(line) as { info?: HoldInfo; error?: string };
        if (msg.info) resolve(msg.info);
        else reject(new Error(msg.error));
      });
    });
    const { client, server } = info;
    console.log(`getSmcInfo in the s390x process (pid ${info.pid}): client ${JSON.stringify(client)}\nserver ${JSON.stringify(server)}`);
    expect([info.arch, info.endianness, info.echoed, info.same]).toEqual(['s390x', 'BE', N, true]);
    expect([client.mode, client.fallback, server.mode, server.fallback]).toEqual(['smcd', null, 'smcd', null]);
    expect([client.state, server.state]).toEqual(['ACTIVE', 'ACTIVE']);
    // ports and addresses stay network order; each end names the other
    expect(client.local).toEqual(server.remote);
    expect(client.remote).toEqual(server.local);
    expect(client.local.address).toBe('127.0.0.1');
    // the cursors' byte counts (host-order u32/u16 fields): N each way, on each end
    expect(client.bytes).toEqual({ sent: N, received: N });
    expect(server.bytes).toEqual({ sent: N, received: N });
    // the DMB tokens are u64s in host order: each end's token is the other's peer token
    expect(client.dmb?.token).toMatch(/^(0x)?[0-9a-f]+$/i);
    expect(client.dmb?.token).not.toMatch(/^(0x)?0+$/i);
    expect(client.dmb?.token).toBe(server.dmb?.peerToken);
    expect(server.dmb?.token).toBe(client.dmb?.peerToken);
    expect(client.dmb?.gid).toBe(server.dmb?.gid);
    expect(client.buffers?.peerRmbe).toBe(server.buffers?.rmbe);
    expect(server.buffers?.peerRmbe).toBe(client.buffers?.rmbe);
  }, SLOW);

  it('stats sockets --json lists both ends as SMC-D, owned by that process, with the same byte counts', async () => {
    if (!info) throw new Error('no connection');
    const { sockets } = await json<{ sockets: (SmcSocketInfo & { owners: { pid: number; command: string }[] })[] }>(['stats', 'sockets', '--netns', ns]);
    const mine = sockets.filter((s) => s.owners.some((o) => o.pid === info?.pid));
    console.log(`stats sockets --json: ${JSON.stringify(mine.map((s) => [s.mode, s.local, s.remote, s.bytes]))}`);
    expect(mine.map((s) => s.mode)).toEqual(['smcd', 'smcd']);
    expect(mine.map((s) => s.local.port).sort()).toEqual([info.client.local.port, info.server.local.port].sort());
    for (const s of mine) expect(s.bytes).toEqual({ sent: N, received: N });
    const text = await smcRun(['stats', 'sockets', '--netns', ns]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`ACTIVE +SMC-D +127\\.0\\.0\\.1:${info.client.local.port} +127\\.0\\.0\\.1:${info.server.local.port}`));
  }, SLOW);

  it('stats system: exactly the echo in the namespace (one SMC-Dv2 connection per side, 2N bytes each way)', async () => {
    const s = await json<{ system: SmcSystemStats }>(['stats', 'system', '--netns', ns]);
    console.log(`stats system after the echo: connections ${JSON.stringify(s.system.smcd.connections)}, bytes ${JSON.stringify(s.system.smcd.bytes)}`);
    expect(s.system.smcd.connections).toEqual({ clientV1: 0, clientV2: 1, serverV1: 0, serverV2: 1 });
    expect(s.system.smcd.bytes).toEqual({ rx: 2 * N, tx: 2 * N });
    expect(s.system.smcr.bytes).toEqual({ rx: 0, tx: 0 });
    expect(s.system.fallbacks.server.total + s.system.fallbacks.client.total).toBe(0);
    const d = await json<{ system: SmcSystemStats; since: string }>(['stats', 'system', '--netns', ns, '--since', snap]);
    expect(d.system.smcd.bytes).toEqual({ rx: 2 * N, tx: 2 * N });
    const text = await smcRun(['stats', 'system', '--netns', ns, '--since', snap]);
    expect(text.code, text.stderr).toBe(0);
    console.log(text.stdout);
    expect(text.stdout).toContain(`${2 * N} (`);
  }, SLOW);

  it('stats info and seid show: the kernel\'s system EID', async () => {
    const { info: i } = await json<{ info: { version: number; ismV2: boolean; seid?: string } }>(['stats', 'info']);
    const show = await smcRun(['seid', 'show']);
    expect(show.code, show.stderr).toBe(0);
    const seid = await json<{ seid: string; enabled: boolean; machineType?: string; cpuIdent?: string }>(['seid', 'show']);
    const text = await smcRun(['stats', 'info']);
    console.log(`stats info: ${JSON.stringify(i)}\n${text.stdout}seid show: ${show.stdout}seid show --json: ${JSON.stringify(seid)}`);
    expect(i).toMatchObject({ version: 2, ismV2: true });
    expect(seid.seid).toMatch(/^IBM-SYSZ-ISMSEID00000000[0-9A-F]{8}$/);
    expect(seid.enabled).toBe(true);
    expect(seid.seid).toBe(`IBM-SYSZ-ISMSEID00000000${seid.cpuIdent}${seid.machineType}`);
    expect(i.seid).toBe(seid.seid);
    expect(text.stdout).toContain(seid.seid);
    expect(show.stdout).toBe(`${seid.seid} (enabled; machine type ${seid.machineType}, CPU identification ${seid.cpuIdent})\n`);
  }, SLOW);

  it('seid disable / enable with a UEID set; without one the kernel keeps it enabled, said in one line', async () => {
    const off = await smcRun(['seid', 'disable']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/^IBM-SYSZ-ISMSEID\S+ \(disabled; /);
    expect(SmcGenl.with(undefined, (g) => g.seid()).enabled).toBe(false);
    const on = await smcRun(['seid', 'enable']);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^IBM-SYSZ-ISMSEID\S+ \(enabled; /);
    expect((await smcRun(['ueid', 'flush'])).code).toBe(0);
    try {
      const refused = await smcRun(['seid', 'disable']);
      console.log(`seid disable without a UEID: exit ${refused.code}, ${refused.stderr.trim()}`);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/stays enabled while no UEID is set/);
      expect(SmcGenl.with(undefined, (g) => g.seid()).enabled).toBe(true);
    } finally {
      expect((await smcRun(['ueid', 'add', 'SMC-RUN-TEST'])).code).toBe(0);
    }
  }, SLOW);

  it('ueid add / list / del round trip', async () => {
    const ueids = async (): Promise<string[]> => (await json<{ ueids: string[] }>(['ueid', 'list'])).ueids;
    expect((await smcRun(['ueid', 'add', 'smc-run-s390x'])).code).toBe(0);
    const both = await ueids();
    console.log(`ueid list: ${JSON.stringify(both)}`);
    expect(both).toEqual(expect.arrayContaining(['SMC-RUN-TEST', 'SMC-RUN-S390X']));
    expect((await smcRun(['ueid', 'del', 'smc-run-s390x'])).code).toBe(0);
    expect(await ueids()).toEqual(['SMC-RUN-TEST']);
    const again = await smcRun(['ueid', 'del', 'smc-run-s390x']);
    expect(again.code).toBe(1);
  }, SLOW);

  it('sysctl set autocorking_size in a fresh namespace, the initial one unchanged', async () => {
    const set = await smcRun(['sysctl', 'set', '--netns', ns2, 'autocorking_size=0']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('net.smc.autocorking_size: 65536 -> 0\n');
    expect((await smcRun(['sysctl', 'get', '--netns', ns2, 'autocorking_size'])).stdout).toBe('net.smc.autocorking_size = 0\n');
    expect(await kernelValue('autocorking_size', ns2)).toBe('0');
    expect(await kernelValue('autocorking_size')).toBe('65536');
  }, SLOW);

  it('hs-limit enable / disable in the namespace: through generic netlink on big-endian, as the kernel sees it', async () => {
    // 6.12 keeps limit_smc_hs as a bool behind an int sysctl handler: on big-endian the sysctl's 1 misses
    // the bool, so hs-limit uses the netlink commands here (src/cli/hs-limit.ts)
    const en = await smcRun(['hs-limit', 'enable', '--netns', ns2]);
    expect(en.code, en.stderr).toBe(0);
    expect(en.stdout).toMatch(/handshake limitation: off -> on \(SMC netlink; on a big-endian host/);
    const views = { ns2: SmcGenl.with(`/run/netns/${ns2}`, (g) => g.hsLimitation()), initial: SmcGenl.with(undefined, (g) => g.hsLimitation()) };
    const raw = await kernelValue('limit_smc_hs', ns2);
    console.log(`hs-limit enable: ${en.stdout.trim()}; generic netlink DUMP_HS_LIMITATION: ${JSON.stringify(views)}; /proc/sys/net/smc/limit_smc_hs reads ${raw}`);
    expect(views).toEqual({ ns2: true, initial: false });
    expect(raw).not.toBe('0');
    const show = await smcRun(['hs-limit', 'show', '--netns', ns2, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ enabled: true, via: 'netlink' });
    const dis = await smcRun(['hs-limit', 'disable', '--netns', ns2]);
    expect(dis.code, dis.stderr).toBe(0);
    expect(dis.stdout).toMatch(/on -> off/);
    expect(SmcGenl.with(`/run/netns/${ns2}`, (g) => g.hsLimitation())).toBe(false);
    expect(await kernelValue('limit_smc_hs', ns2)).toBe('0');
  }, SLOW);

  it('doctor passes, and its loopback self-test is SMC-D on both ends', async () => {
    const r = await smcRun(['doctor']);
    console.log(r.stdout);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/loopback connection 127\.0\.0\.1: client SMC-D, server SMC-D/);
    expect(r.stdout).toMatch(/SMC is ready/);
  }, SLOW);
});

// this kernel is built without BTF (test/vm/s390x/config.fragment): the prebuilt s390x loader runs
// natively here, opens its big-endian BPF objects, and refuses to switch for the reason the kernel gives
describe.runIf(EXPECT_MODE === 'smcd')('s390x BPF switch loader on a kernel without BTF', () => {
  const ns = `smcrun-s390x-bpf-${process.pid}`;
  beforeAll(async () => {
    expect((await run('ip', ['netns', 'add', ns])).code).toBe(0);
  });
  afterAll(async () => {
    await run('ip', ['netns', 'del', ns]);
  });

  it('status says the switch is not possible (no BTF) and the objects open; enable fails in one line, pins nothing', async () => {
    expect(fs.existsSync('/sys/kernel/btf/vmlinux')).toBe(false);
    const st = await json<{ kernel: { kernel: string; btf: boolean; objects: boolean }; possible: boolean; loaded: boolean }>(['status']);
    expect(st).toMatchObject({ kernel: { kernel: os.release(), btf: false, objects: true }, possible: false, loaded: false });
    const r = await smcRun(['enable', '--netns', ns]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(/has no BTF/);
    expect(fs.existsSync('/sys/fs/bpf/smc-run')).toBe(false);
  }, SLOW);
});
