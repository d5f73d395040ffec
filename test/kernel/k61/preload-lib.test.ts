// The LD_PRELOAD library on Debian 12's stock 6.1 (lane smcr-6.1, guest a): the fallback path. 6.1 has
// AF_SMC but no IPPROTO_SMC, and its SMC finds no usable device here (rxe0 has no net device: see
// connections.test.ts), so a C server and a C client under smc-run take AF_SMC sockets and the kernel falls
// back inside them: both ends listed by sock_diag with their reasons, the data intact, no error surfaced.
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { PATHS, sockprobeFixture, connectProbe, debugLines, echoOf, ends, probeOf, settled, startServer } from '../../helpers/preload-lib';
import { EXPECT_MODE } from '../../helpers/run';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

describe('LD_PRELOAD library on 6.1: the fallback path', () => {
  const fx = sockprobeFixture();

  for (const { name, args: rule, replaced } of PATHS) for (const mode of ['blocking', 'nonblock'] as const) {
    it(`C server and C client (${mode} connect; ${name}) under smc-run: AF_SMC sockets, both ends fall back with a reason, 256 KiB echoed intact`, async () => {
      const srv = await startServer(fx.probe, ['-d', ...rule], {});
      const client = connectProbe(fx.probe, ['-d', ...rule], {}, '127.0.0.1', srv.port, ['bytes=262144', 'hold=3000', ...(mode === 'nonblock' ? ['nonblock'] : [])]);
      const seen = await ends(srv.port, (s, c) => settled(s) && settled(c));
      const c = await client;
      await srv.done;
      const rows = (xs: typeof seen.server) => xs.map((s) => [s.mode, s.fallback?.name, s.fallback?.peerName]);
      console.log(`6.1 library ${mode} (${name}): server ${JSON.stringify(rows(seen.server))}, client ${JSON.stringify(rows(seen.client))}; client debug: ${debugLines(c.stderr).join(' | ')}`);
      // the library took an SMC socket on both ends (AF_SMC: 6.1 has no IPPROTO_SMC) ...
      // (sock_diag lists only SMC sockets; SO_DOMAIN can't say: a fallback hands the fd to the inner TCP socket)
      expect(probeOf(c)).toMatchObject({ replaced, rc: 0, errno: '', nonblock: mode === 'nonblock', cloexec: true });
      expect(probeOf({ ...srv.out(), code: 0, signal: null }, 'listen')).toMatchObject({ replaced });
      // ... and the kernel fell back inside them: the client found no SMC device, the server was told so
      expect(seen.client.map((s) => [s.mode, s.fallback?.name])).toEqual([['fallback', 'NOSMCDEV']]);
      expect(seen.server.map((s) => [s.mode, s.fallback?.name, s.fallback?.peerName])).toEqual([['fallback', 'PEERDECL', 'NOSMCDEV']]);
      expect(echoOf(c)).toEqual({ echo: true, bytes: 262144 });
    });
  }

  it('--exclude decides in place on 6.1 too: the kernel switches the SMC socket to TCP before connect (OPTUNSUPP), no SMC handshake', async () => {
    const srv = await startServer(fx.probe, [], {});
    const client = connectProbe(fx.probe, ['-d', '--exclude', `127.0.0.1:${srv.port}`], {}, '127.0.0.1', srv.port, ['hold=3000']);
    const seen = await ends(srv.port, (s, c) => settled(s) && settled(c));
    const c = await client;
    await srv.done;
    expect(debugLines(c.stderr)).toContain(`connect 127.0.0.1:${srv.port} excluded by policy: plain TCP`);
    expect(seen.client.map((s) => [s.mode, s.fallback?.name])).toEqual([['fallback', 'OPTUNSUPP']]);
    expect(seen.server.map((s) => [s.mode, s.fallback?.name])).toEqual([['fallback', 'PEERNOSMC']]);
    expect(echoOf(c)?.echo).toBe(true);
  });
});
