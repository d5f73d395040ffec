// The BPF switch with destination policy in the kernel (struct_ops smc_hs_ctrl, 6.19+), on real SMC-D:
// `smc-run enable --netns NS --exclude *:PORT` switches every new TCP socket of NS to SMC and has the
// kernel leave SMC's option out of the handshake for that port. Plain Node programs (no launcher, no
// preload) in NS: to the other port SMC-D on both ends; to the excluded port both ends fall back with
// PEERNOSMC (no CLC exchange: the SYN carried no SMC option), the data intact either way. A client
// outside NS (the launcher's, over a veth pair) meets the server side of the policy: the SYN-ACK
// leaves the option out for the excluded port only. Enabling without rules clears the policy, disable
// clears net.smc.hs_ctrl and unloads the controller.
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, type ContainerNet } from '../../helpers/container';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { EXPECT_MODE, run, smcRun, type Conn } from '../../helpers/run';

const SLOW = 600_000;

const sysctlIn = async (ns: string | undefined): Promise<string> => {
  const r = ns ? await run('ip', ['netns', 'exec', ns, 'cat', '/proc/sys/net/smc/hs_ctrl']) : await run('cat', ['/proc/sys/net/smc/hs_ctrl']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
};

interface Status { kernel: { hsCtrl: boolean; btf: boolean; hook: boolean }; possible: boolean; loaded: boolean; namespaces: { inode: number; switched: number; policy?: { include: unknown[]; exclude: { port?: number }[]; proposed: number; held: number } }[] }
async function status(): Promise<Status> {
  const r = await smcRun(['status', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

describe.runIf(EXPECT_MODE === 'smcd')('destination policy in the kernel (enable --exclude, smc_hs_ctrl)', () => {
  let net: ContainerNet;
  let NS = '';
  let wrap: string[] = [];
  let open: EchoServer;
  let closed: EchoServer;
  let inode = 0;

  /** One echo client of 64 KiB: a plain node inside the namespace, or the launcher's outside it; its end. */
  async function client(where: 'ns' | 'outside', host: string, port: number): Promise<Conn> {
    const c = await echoClient(host, port, 65536, where === 'ns' ? { launcher: false, wrap } : {});
    expect(c.result?.ok, c.run.stdout + c.run.stderr).toBe(true);
    return c.result!.client!;
  }
  /** The server end of the count-th connection (the server prints it when the connection closes). */
  async function serverEnd(server: EchoServer, count: number): Promise<Conn> {
    const conns = await waitForConns(server, count);
    expect(conns).toHaveLength(count);
    return conns[count - 1]!;
  }

  beforeAll(async () => {
    net = await containerNet(`smcrun-policy-${process.pid}`, '10.77.41');
    NS = net.name;
    wrap = ['ip', 'netns', 'exec', NS];
    inode = fs.statSync(net.path).ino;
    // plain Node servers (no launcher) in the namespace, started after enable below: listeners the switch makes
  }, SLOW);

  afterAll(async () => {
    await open?.stop();
    await closed?.stop();
    await smcRun(['disable', '--all']);
    await net?.remove();
  }, SLOW);

  it('this kernel has BTF, the hook and smc_hs_ctrl: the switch and its policy are possible', async () => {
    const st = await status();
    expect(st).toMatchObject({ kernel: { btf: true, hook: true, hsCtrl: true }, possible: true, loaded: false });
    expect(await sysctlIn(NS)).toBe('');
  }, SLOW);

  it('enable, then enable --exclude: the namespace names the controller, the host does not; status shows the rule', async () => {
    const on = await smcRun(['enable', '--netns', NS, '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ enabled: true, already: false, policy: false, namespace: { inode } });
    expect(await sysctlIn(NS)).toBe('');
    // switched listeners: plain Node servers started now
    open = await startEchoServer('0.0.0.0', { launcher: false, wrap });
    closed = await startEchoServer('0.0.0.0', { launcher: false, wrap });
    const r = await smcRun(['enable', '--netns', NS, '--exclude', `*:${closed.port}`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, already: true, policy: true, namespace: { inode } });
    expect(await sysctlIn(NS)).toBe('smc_run');
    expect(await sysctlIn(undefined)).toBe('');
    const ns = (await status()).namespaces.find((n) => n.inode === inode);
    expect(ns?.policy).toMatchObject({ include: [], exclude: [{ port: closed.port }], proposed: 0, held: 0 });
    const table = await smcRun(['status']);
    expect(table.stdout).toMatch(new RegExp(`exclude \\*:${closed.port} \\(0 proposed SMC, 0 kept TCP\\)`));
  }, SLOW);

  it('plain programs in the namespace: SMC-D to the other port, plain TCP with no SMC handshake to the excluded one', async () => {
    const smc = await client('ns', '127.0.0.1', open.port);
    expect(smc).toMatchObject({ mode: 'smcd', fallback: null });
    expect(await serverEnd(open, 1)).toMatchObject({ mode: 'smcd' });
    const tcp = await client('ns', '127.0.0.1', closed.port);
    // both ends are SMC sockets (the switch made them) that fell back before any CLC message
    expect(tcp).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    expect(await serverEnd(closed, 1)).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    const p = (await status()).namespaces.find((n) => n.inode === inode)?.policy;
    // the SMC-D connection was decided twice (SYN and SYN-ACK), the excluded one once (the SYN: with no
    // option in it the listener has nothing to answer)
    expect(p).toMatchObject({ proposed: 2, held: 1 });
  }, SLOW);

  it('a client outside the namespace meets the server side of the policy: the SYN-ACK leaves SMC out for the excluded port only', async () => {
    expect(await client('outside', net.ctrIp, open.port)).toMatchObject({ mode: 'smcd' });
    expect(await serverEnd(open, 2)).toMatchObject({ mode: 'smcd' });
    expect(await client('outside', net.ctrIp, closed.port)).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    expect(await serverEnd(closed, 2)).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    expect((await status()).namespaces.find((n) => n.inode === inode)?.policy).toMatchObject({ proposed: 3, held: 2 });
  }, SLOW);

  it('enable again without rules clears the policy: the port that was excluded is SMC-D', async () => {
    const r = await smcRun(['enable', '--netns', NS, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, already: true, policy: false });
    expect(await sysctlIn(NS)).toBe('');
    expect((await status()).namespaces.find((n) => n.inode === inode)?.policy).toBeUndefined();
    expect(await client('ns', '127.0.0.1', closed.port)).toMatchObject({ mode: 'smcd' });
    expect(await serverEnd(closed, 3)).toMatchObject({ mode: 'smcd' });
  }, SLOW);

  it('disable clears net.smc.hs_ctrl and unloads the controller; new sockets are TCP', async () => {
    expect((await smcRun(['enable', '--netns', NS, '--include', `127.0.0.1:${open.port}`])).code).toBe(0);
    expect(await sysctlIn(NS)).toBe('smc_run');
    const r = await smcRun(['disable', '--netns', NS, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: false, was: true, left: 0 });
    expect(await sysctlIn(NS)).toBe('');
    expect(fs.existsSync('/sys/fs/bpf/smc-run/hs_ctrl')).toBe(false);
    // a name no controller has any more: the kernel refuses it (the controller is gone, not only unnamed)
    const set = await smcRun(['sysctl', 'set', '--netns', NS, 'hs_ctrl=smc_run']);
    expect(set.code).toBe(1);
    expect(await client('ns', '127.0.0.1', open.port)).toMatchObject({ mode: 'tcp' });
  }, SLOW);
});
