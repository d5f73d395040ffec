// Socket behaviour on real SMC-D: 200 concurrent connections with checksums, addresses and options as on
// TCP, TCP_FASTOPEN forcing an OPTUNSUPP fallback, and two network namespaces joined by veth (the
// container case) with the server's sockets listed from outside by --netns and --target.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, REPO, run, runScenario, smcRun, type ScenarioResult } from '../../helpers/run';
import { echoClient, startEchoServer, type EchoServer } from '../../helpers/echo';

describe.runIf(EXPECT_MODE === 'smcd')('SMC-D socket behaviour', () => {
  it('200 concurrent connections, all SMC-D, every checksum equal', async () => {
    const { run: r, results } = await runScenario('concurrent.cjs', ['200', '65536']);
    const res = results[0] as ScenarioResult & { good: number; clientModes: Record<string, number>; serverModes: Record<string, number> };
    expect(res?.ok, r.stdout + r.stderr).toBe(true);
    expect(res.good).toBe(200);
    expect(res.clientModes).toEqual({ smcd: 200 });
    expect(res.serverModes).toEqual({ smcd: 200 });
  });

  it('addresses, setNoDelay and setKeepAlive read back as on TCP', async () => {
    const { run: r, results } = await runScenario('behaviour.cjs', ['addresses']);
    const res = results[0] as ScenarioResult & { family: string; isSmc: boolean; keepAlive: number };
    expect(res?.ok, r.stdout + r.stderr).toBe(true);
    expect(res.family).toBe('IPv4');
    expect(res.isSmc).toBe(true);
    // keepalive reads back as set, though no timer runs on SMC (kernel limitation, see the README)
    expect(res.keepAlive).toBe(1);
    for (const c of res.conns) expect(c).toMatchObject({ mode: 'smcd', fallback: null });
  });

  it('TCP_FASTOPEN set before connect forces a fallback with OPTUNSUPP', async () => {
    const { run: r, results } = await runScenario('behaviour.cjs', ['fastopen']);
    const res = results[0] as ScenarioResult;
    expect(res?.ok, r.stdout + r.stderr).toBe(true);
    expect(res.conns[0]).toMatchObject({ mode: 'fallback', fallback: 'OPTUNSUPP' });
  });

  describe('two network namespaces joined by veth', () => {
    const tag = `${process.pid}`.slice(-4);
    const [ns1, ns2] = [`srv${tag}`, `cli${tag}`];
    let server: EchoServer;
    const sh = (cmd: string) => run('sh', ['-c', cmd]);
    beforeAll(async () => {
      const setup = await sh(`set -e; ip netns add ${ns1}; ip netns add ${ns2};
        ip link add v${tag}a type veth peer name v${tag}b;
        ip link set v${tag}a netns ${ns1}; ip link set v${tag}b netns ${ns2};
        ip -n ${ns1} addr add 10.77.0.1/24 dev v${tag}a; ip -n ${ns2} addr add 10.77.0.2/24 dev v${tag}b;
        for n in ${ns1} ${ns2}; do ip -n $n link set lo up; done;
        ip -n ${ns1} link set v${tag}a up; ip -n ${ns2} link set v${tag}b up`);
      expect(setup.code, setup.stderr).toBe(0);
      server = await startEchoServer('10.77.0.1', { wrap: ['ip', 'netns', 'exec', ns1] });
    });
    afterAll(async () => {
      await server?.stop();
      await sh(`ip netns del ${ns1}; ip netns del ${ns2}`);
    });

    it('server in one namespace, client in the other: both SMC-D', async () => {
      const c = await echoClient('10.77.0.1', server.port, 1 << 20, { wrap: ['ip', 'netns', 'exec', ns2] });
      expect(c.result?.ok, c.run.stderr).toBe(true);
      expect(c.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
    });

    it("stats sockets sees the container's listener by --netns and by --target, with its process", async () => {
      const byNs = await smcRun(['stats', 'sockets', '-l', '--netns', ns1, '--json']);
      expect(byNs.code, byNs.stderr).toBe(0);
      const rows = (JSON.parse(byNs.stdout) as { sockets: { local: { port: number }; owners: { pid: number }[]; mode: string }[] }).sockets;
      const mine = rows.find((r) => r.local.port === server.port);
      expect(mine?.mode).toBe('listening');
      const pid = mine?.owners[0]?.pid;
      expect(pid).toBeGreaterThan(0);
      const byTarget = await smcRun(['stats', 'sockets', '-l', '--target', String(pid), '--json']);
      expect(JSON.parse(byTarget.stdout)).toEqual(JSON.parse(byNs.stdout));
      const byPid = await smcRun(['stats', 'sockets', '-a', '--netns', ns1, '--pid', String(pid)]);
      expect(byPid.stdout).toMatch(new RegExp(`LISTEN .*10\\.77\\.0\\.1:${server.port}`));
      // the initial namespace does not have it
      const here = await smcRun(['stats', 'sockets', '-l', '--json']);
      expect(here.stdout).not.toContain(`"port": ${server.port},`);
    });

    it('--watch refreshes until stopped', async () => {
      // stopped by SIGINT once two refreshes are out (at most 60 s: start-up under TCG on a busy host is slow)
      const child = spawn(process.execPath, [`${REPO}/bin/smc-run`, 'stats', 'sockets', '-l', '--netns', ns1, '--watch', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const refreshes = (): number => out.match(/smc-run stats sockets, every 1s/g)?.length ?? 0;
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        child.stdout.on('data', (d) => {
          out += d;
          if (refreshes() >= 2) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      child.kill('SIGINT');
      await exited;
      expect(refreshes()).toBeGreaterThanOrEqual(2);
      expect(out).toMatch(/LISTEN/);
    });
  });
});
