// TCP_CORK / TCP_NODELAY passthrough API on this host (test mode: plain TCP fds from the addon).
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTcpCork, getTcpNoDelay, setTcpCork, setTcpNoDelay, withTcpCork } from '../../src/sockopt';
import { EXPECT_MODE, runScenario, type ScenarioResult } from '../helpers/run';

describe('socket options API', () => {
  let server: net.Server;
  let port = 0;
  const accepted: net.Socket[] = [];
  beforeAll(async () => {
    server = net.createServer((s) => {
      accepted.push(s);
      s.on('error', () => {});
      s.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        for (const s of accepted) s.destroy();
        server.close(() => r());
      }),
  );

  const connect = (): Promise<net.Socket> =>
    new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1', () => resolve(c));
      c.once('error', reject);
    });

  it('sets and reads back TCP_CORK and TCP_NODELAY', async () => {
    const c = await connect();
    expect(getTcpCork(c)).toBe(false);
    setTcpCork(c, true);
    expect(getTcpCork(c)).toBe(true);
    setTcpCork(c, false);
    expect(getTcpCork(c)).toBe(false);
    setTcpNoDelay(c, true);
    expect(getTcpNoDelay(c)).toBe(true);
    c.setNoDelay(false);
    expect(getTcpNoDelay(c)).toBe(false);
    c.destroy();
  });

  it('applies an option set before the socket has an fd once it connects', async () => {
    const c = net.connect({ port, host: 'localhost' }); // lookup first: no fd yet
    setTcpCork(c, true);
    await new Promise((r) => c.once('connect', r));
    expect(getTcpCork(c)).toBe(true);
    c.destroy();
  });

  it('withTcpCork uncorks after the writes reached the kernel', async () => {
    const c = await connect();
    const big = Buffer.alloc(8 << 20, 1); // more than the kernel takes at once: Node queues part of it
    await withTcpCork(c, () => {
      c.write(big);
      c.write('tail');
    });
    expect(c.writableLength).toBe(0);
    expect(getTcpCork(c)).toBe(false);
    c.destroy();
  });

  it('rejects destroyed and unix sockets with a TypeError', async () => {
    const c = await connect();
    c.destroy();
    expect(() => getTcpCork(c)).toThrow(TypeError);
    const p = path.join(os.tmpdir(), `smc-run-sockopt-${process.pid}.sock`);
    const us = net.createServer().listen(p);
    await new Promise((r) => us.once('listening', r));
    const u = net.connect(p);
    await new Promise((r) => u.once('connect', r));
    expect(() => setTcpCork(u, true)).toThrow(/not a TCP socket/);
    u.destroy();
    await new Promise((r) => us.close(r));
  });
});

describe('passthrough on sockets created by the hook', () => {
  for (const mode of ['cork', 'nodelay', 'batch']) {
    it(`${mode}: data held while corked arrives when released`, async () => {
      const { run, results } = await runScenario('cork.cjs', [mode]);
      const r = results[0] as ScenarioResult & { beforeRelease?: number; releaseMs?: number };
      expect(r?.ok, run.stdout + run.stderr).toBe(true);
      if (EXPECT_MODE) {
        for (const c of r.conns) expect(c).toMatchObject({ mode: EXPECT_MODE, fallback: null });
        // SMC holds corked data until released (plain TCP releases it after 200 ms by itself)
        if (mode !== 'batch') expect(r.beforeRelease).toBe(0);
      }
    });
  }
});
