// The kernel's destination policy (smc_hs_ctrl, 6.19+) on a dual-stack listener, the default of Node, Go
// and Java servers: a plain Node server on [::] in a switched namespace, clients outside it over a veth
// pair from an IPv4 and an IPv6 address, rules by address (not port). An IPv4 SYN to an IPv6 listener
// makes a request socket of the listener's family (AF_INET6) whose peer is the IPv4-mapped address
// (sk_daddr_set fills both): smc-policy.bpf.c must judge it by its IPv4 address, and it does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, type ContainerNet } from '../../helpers/container';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { EXPECT_MODE, run, smcRun, type Conn } from '../../helpers/run';

const SLOW = 600_000;
const must = async (cmd: string, args: string[]): Promise<void> => {
  const r = await run(cmd, args);
  expect(r.code, `${cmd} ${args.join(' ')}: ${r.stderr}`).toBe(0);
};

describe.runIf(EXPECT_MODE === 'smcd')('destination policy in the kernel, dual-stack listener, rules by address', () => {
  let net: ContainerNet;
  let server: EchoServer;
  let served = 0;
  const V6_HOST = 'fd77:42::1';
  const V6_CTR = 'fd77:42::2';

  beforeAll(async () => {
    net = await containerNet(`smcrun-dual-${process.pid}`, '10.77.42');
    // IPv6 on the same veth pair (nodad: usable at once)
    await must('ip', ['addr', 'add', `${V6_HOST}/64`, 'dev', `vh-${net.name}`.slice(0, 15), 'nodad']);
    await must('ip', ['-n', net.name, 'addr', 'add', `${V6_CTR}/64`, 'dev', 'eth0', 'nodad']);
    const on = await smcRun(['enable', '--netns', net.name]);
    expect(on.code, on.stderr).toBe(0);
    // a plain Node server (no launcher) on [::], made SMC by the switch
    server = await startEchoServer('::', { launcher: false, wrap: ['ip', 'netns', 'exec', net.name] });
  }, SLOW);

  afterAll(async () => {
    await server?.stop();
    await smcRun(['disable', '--all']);
    await net?.remove();
  }, SLOW);

  /** Both ends of one connection from outside (the launcher's client) to the [::] server at host. */
  async function ends(host: string): Promise<{ client: Conn; server: Conn }> {
    const c = await echoClient(host, server.port, 65536);
    expect(c.result?.ok, c.run.stdout + c.run.stderr).toBe(true);
    served++;
    const conns = await waitForConns(server, served);
    return { client: c.result!.client!, server: conns[served - 1]! };
  }
  const SMC = { mode: 'smcd' };
  const KEPT_TCP = { mode: 'fallback', fallback: 'PEERNOSMC' };

  for (const c of [
    { rules: ['--exclude', '10.77.42.1'], v4: KEPT_TCP, v6: SMC },
    { rules: ['--exclude', V6_HOST], v4: SMC, v6: KEPT_TCP },
    { rules: ['--include', '10.77.42.0/24'], v4: SMC, v6: KEPT_TCP },
    { rules: ['--include', '[fd77:42::]/64'], v4: KEPT_TCP, v6: SMC },
  ]) {
    it(`${c.rules.join(' ')}: the IPv4 client ${c.v4 === SMC ? 'SMC-D' : 'plain TCP'}, the IPv6 client ${c.v6 === SMC ? 'SMC-D' : 'plain TCP'}, both ends`, async () => {
      const r = await smcRun(['enable', '--netns', net.name, ...c.rules]);
      expect(r.code, r.stderr).toBe(0);
      const v4 = await ends(net.ctrIp);
      expect(v4.server, 'IPv4 client, server end').toMatchObject(c.v4);
      expect(v4.client, 'IPv4 client, client end').toMatchObject(c.v4);
      const v6 = await ends(V6_CTR);
      expect(v6.server, 'IPv6 client, server end').toMatchObject(c.v6);
      expect(v6.client, 'IPv6 client, client end').toMatchObject(c.v6);
    }, SLOW);
  }
});
