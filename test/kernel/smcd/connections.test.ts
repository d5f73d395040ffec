// Real SMC-D (loopback-ism) behaviour in the guest: bulk data integrity over SMC-D, fallback reasons
// in words for a plain peer and for a missing UEID, seen from both ends through sock_diag.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario, smcRun, type ScenarioResult } from '../../helpers/run';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';

describe.runIf(EXPECT_MODE === 'smcd')('SMC-D connections', () => {
  it('moves 64 MiB over SMC-D with equal sha256 on both ends', async () => {
    const { run, results } = await runScenario('paths.cjs', ['net-v4', String(64 << 20)]);
    const r = results[0] as ScenarioResult & { length: number; sent: string; serverSaw: string };
    expect(r, run.stderr).toBeDefined();
    expect(r.ok).toBe(true);
    expect(r.length).toBe(64 << 20);
    expect(r.serverSaw).toBe(r.sent);
    expect(r.conns.map((c) => [c.side, c.mode, c.fallback]).sort()).toEqual([['client', 'smcd', null], ['server', 'smcd', null]]);
  });

  describe('a plain (not hooked) client', () => {
    let server: EchoServer;
    beforeAll(async () => {
      server = await startEchoServer('127.0.0.1');
    });
    afterAll(async () => server.stop());

    it('makes the SMC server fall back with PEERNOSMC, said in words', async () => {
      const c = await echoClient('127.0.0.1', server.port, 4096, { launcher: false });
      expect(c.result?.ok, c.run.stderr).toBe(true);
      expect(c.result?.client?.mode).toBe('tcp');
      const [conn] = await waitForConns(server, 1);
      expect(conn).toMatchObject({ side: 'server', mode: 'fallback', fallback: 'PEERNOSMC' });
    });

    it('while a hooked client to the same server gets SMC-D', async () => {
      const c = await echoClient('127.0.0.1', server.port, 4096);
      expect(c.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
      const conns = await waitForConns(server, 2);
      expect(conns[1]).toMatchObject({ mode: 'smcd', fallback: null });
    });
  });

  describe('without a UEID (the silent-fallback trap)', () => {
    afterAll(async () => {
      // the UEID table is OS-wide: restore it for the files that run after this one
      await smcRun(['ueid', 'add', 'SMC-RUN-TEST']);
    });

    it('every connection falls back with NOUEID; with the UEID back it is SMC-D again', async () => {
      expect((await smcRun(['ueid', 'flush'])).code).toBe(0);
      expect((await smcRun(['ueid', 'list', '--json'])).stdout).toContain('"ueids": []');
      const server = await startEchoServer('127.0.0.1');
      try {
        const c = await echoClient('127.0.0.1', server.port, 4096);
        expect(c.result?.ok).toBe(true);
        // client: the peer declined (PEERDECL) with its diagnosis NOUEID; server: NOUEID
        expect(c.result?.client).toMatchObject({ mode: 'fallback', fallback: 'PEERDECL', peer: 'NOUEID' });
        const [conn] = await waitForConns(server, 1);
        expect(conn).toMatchObject({ mode: 'fallback', fallback: 'NOUEID' });
        expect((await smcRun(['ueid', 'add', 'SMC-RUN-TEST'])).code).toBe(0);
        const again = await echoClient('127.0.0.1', server.port, 4096);
        expect(again.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
      } finally {
        await server.stop();
      }
    });
  });
});
