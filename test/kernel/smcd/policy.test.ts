// Launcher policy and socket sizing on real SMC-D: --exclude keeps a destination on TCP while others use
// SMC-D, --proto ipproto (IPPROTO_SMC, 6.11+) negotiates SMC-D too, and -t/-r 1M give 1 MiB SMC buffers
// once net.core limits allow it (and a one-line warning with the fix when they do not).
import * as fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario, type ScenarioResult } from '../../helpers/run';
import { echoClient, startEchoServer, waitForConns } from '../../helpers/echo';

const CORE = '/proc/sys/net/core';
const readCore = (n: string): string => fs.readFileSync(`${CORE}/${n}`, 'utf8').trim();

describe.runIf(EXPECT_MODE === 'smcd')('policy and sizing on SMC-D', () => {
  const saved = { wmem_max: readCore('wmem_max'), rmem_max: readCore('rmem_max') };
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) fs.writeFileSync(`${CORE}/${k}`, v);
  });

  it('an excluded destination stays TCP while another is SMC-D', async () => {
    const a = await startEchoServer('127.0.0.1');
    const b = await startEchoServer('127.0.0.1');
    try {
      const exclude = ['--exclude', `127.0.0.1:${a.port}`];
      const toA = await echoClient('127.0.0.1', a.port, 4096, { launcherArgs: exclude });
      const toB = await echoClient('127.0.0.1', b.port, 4096, { launcherArgs: exclude });
      expect(toA.result?.ok).toBe(true);
      expect(toA.result?.client?.mode).toBe('tcp');
      expect((await waitForConns(a, 1))[0]).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
      expect(toB.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
      expect((await waitForConns(b, 1))[0]).toMatchObject({ mode: 'smcd' });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  // the destination decides also for a client that binds first (localAddress/localPort): the socket made at
  // bind is swapped under the same fd at connect, SMC to TCP or TCP to SMC, and bound again where it was
  const bound = async (rules: string[], listen: string, connect: Record<string, unknown>) => {
    const { run, results } = await runScenario('policy.cjs', [JSON.stringify({ listen, connect })], { SMC_RUN_DEBUG: '1' }, rules);
    const r = results[0] as ScenarioResult & { seen: { conn: { mode: string; fallback: string | null }; localAddress: string; localPort: number; requestedLocalPort?: number }; server: { mode: string; fallback: string | null } };
    expect(r?.ok, run.stdout + run.stderr).toBe(true);
    return { r, stderr: run.stderr };
  };

  it('an excluded destination stays TCP with localAddress 0.0.0.0 and with a fixed localPort', async () => {
    for (const connect of [{ host: '127.0.0.2', localAddress: '0.0.0.0' }, { host: '127.0.0.2', localAddress: '127.0.0.1', localPort: 'free' }]) {
      const { r, stderr } = await bound(['--exclude', '127.0.0.2/32'], '0.0.0.0', connect); // a wildcard listener stays SMC
      expect(stderr).toMatch(/excluded by policy at connect: plain TCP on fd \d+, bound as before$/m);
      expect(r.seen.conn, stderr).toMatchObject({ mode: 'tcp' });
      // the server is an SMC listener: a plain TCP client shows there as a fallback for want of SMC
      expect(r.server).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
      if (connect.localPort) expect(r.seen.localPort).toBe(r.seen.requestedLocalPort);
    }
  });

  it('an included destination is SMC-D from a local address not included (and an excluded one is TCP)', async () => {
    const inc = await bound(['--include', '127.0.0.1/32'], '127.0.0.1', { host: '127.0.0.1', localAddress: '127.0.0.2' });
    expect(inc.stderr).toMatch(/wanted by policy at connect: \S+ fd \d+, bound as before$/m);
    expect(inc.r.seen.conn, inc.stderr).toMatchObject({ mode: 'smcd', fallback: null });
    expect(inc.r.server).toMatchObject({ mode: 'smcd' });
    expect(inc.r.seen.localAddress).toBe('127.0.0.2');
    const exc = await bound(['--include', '127.0.0.1/32'], '127.0.0.3', { host: '127.0.0.3', localAddress: '0.0.0.0' });
    expect(exc.r.seen.conn, exc.stderr).toMatchObject({ mode: 'tcp' });
  });

  it('--proto ipproto (IPPROTO_SMC sockets) negotiates SMC-D', async () => {
    const { run, results } = await runScenario('paths.cjs', ['net-v4', '65536'], { SMC_RUN_DEBUG: '1' }, ['--proto', 'ipproto']);
    const r = results[0] as ScenarioResult;
    expect(r?.ok, run.stderr).toBe(true);
    expect(run.stderr).toContain('on ipproto_smc fd');
    for (const c of r.conns) expect(c).toMatchObject({ mode: 'smcd', fallback: null });
  });

  it('-t/-r 1M are capped by net.core limits with one warning naming the fix', async () => {
    fs.writeFileSync(`${CORE}/wmem_max`, '212992');
    fs.writeFileSync(`${CORE}/rmem_max`, '212992');
    const { run, results } = await runScenario('sizes.cjs', [], {}, ['-t', '1M', '-r', '1M']);
    const r = results[0] as ScenarioResult & { buffers: { rmbe: number; sndbuf: number }[] };
    expect(r?.ok, run.stderr).toBe(true);
    const warnings = run.stderr.split('\n').filter((l) => /capped by the kernel/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/sysctl -w net\.core\.wmem_max=1048576/);
    for (const b of r.buffers) expect(b.rmbe).toBeLessThan(1 << 20);
  });

  it('-t/-r 1M give SMC buffers of the 1 MiB class once the limits allow it', async () => {
    fs.writeFileSync(`${CORE}/wmem_max`, String(4 << 20));
    fs.writeFileSync(`${CORE}/rmem_max`, String(4 << 20));
    const { run, results } = await runScenario('sizes.cjs', [], {}, ['-t', '1M', '-r', '1M']);
    const r = results[0] as ScenarioResult & { buffers: { rmbe: number; sndbuf: number }[]; defaults: { rmbe: number } };
    expect(r?.ok, run.stderr).toBe(true);
    expect(run.stderr).not.toMatch(/capped/);
    expect(r.buffers).toHaveLength(2);
    // the 1 MiB DMB class; SMC-D reports it less the 32-byte CDC header kept in the buffer
    for (const b of r.buffers) expect(b.rmbe).toBeGreaterThanOrEqual((1 << 20) - 64);
    for (const b of r.buffers) expect(b.rmbe).toBeLessThanOrEqual(1 << 20);
  });
});
