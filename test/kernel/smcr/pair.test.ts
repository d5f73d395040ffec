// Real SMC-R between two guests over SoftRoCE (vitest runs in guest a; guest b runs the peer agent).
// Each test asserts the mode of its own connection on both ends.
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';
import { echoClient } from '../../helpers/echo';
import { PEER_IP, PEER_IP6, peer, peerConns, startPeerServer } from '../../helpers/peer';

describe.runIf(EXPECT_MODE === 'smcr')('SMC-R between two hosts', () => {
  it('net: 4 MiB echoed with equal checksums, SMC-R on both ends with the rxe link group', async () => {
    const port = await startPeerServer('echo', ['server', '0.0.0.0']);
    const c = await echoClient(PEER_IP, port, 4 << 20);
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(c.result?.client).toMatchObject({ mode: 'smcr', fallback: null });
    const [server] = await peerConns('echo', 1);
    expect(server).toMatchObject({ side: 'server', mode: 'smcr', fallback: null });
    // the link group outlives the connection for a while: it shows the rxe link with both GIDs
    const lg = await smcRun(['stats', 'linkgroups', '--json']);
    expect(lg.code, lg.stderr).toBe(0);
    const groups = (JSON.parse(lg.stdout) as { linkGroups: { smcr: { links: { ibDevice: string | null; gid: string | null; peerGid: string | null }[] }[] } }).linkGroups.smcr;
    const links = groups.flatMap((g) => g.links);
    expect(links.length).toBeGreaterThanOrEqual(1);
    expect(links[0]?.ibDevice).toBe('rxe0');
    expect(links[0]?.gid).toBeTruthy();
    expect(links[0]?.peerGid).toBeTruthy();
    expect(links[0]?.gid).not.toBe(links[0]?.peerGid);
  });

  it('http: a GET over SMC-R', async () => {
    const port = await startPeerServer('http', ['http-server', '0.0.0.0']);
    const r = await smcRun([process.execPath, 'test/scenarios/echo.cjs', 'http-get', PEER_IP, String(port)]);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; client: { mode: string } };
    expect(out.ok, r.stderr).toBe(true);
    expect(out.client.mode).toBe('smcr');
    const conns = await peerConns('http', 1);
    expect(conns.at(-1)).toMatchObject({ mode: 'smcr', fallback: null });
  });

  it('tls: 256 KiB echoed over TLS on SMC-R', async () => {
    const port = await startPeerServer('tls', ['tls-server', '0.0.0.0']);
    const r = await smcRun([process.execPath, 'test/scenarios/echo.cjs', 'tls-client', PEER_IP, String(port), String(256 << 10)]);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; client: { mode: string } };
    expect(out.ok, r.stderr).toBe(true);
    expect(out.client.mode).toBe('smcr');
    const [server] = await peerConns('tls', 1);
    expect(server).toMatchObject({ mode: 'smcr', fallback: null });
  });

  it('IPv6 over SMC-R falls back in 6.12 (SMC-Rv2 needs an IPv4 handshake), with the reason in words', async () => {
    const port = await startPeerServer('echo6', ['server', '::']);
    const c = await echoClient(PEER_IP6, port, 4096);
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(c.result?.client?.mode).toBe('fallback');
    expect(c.result?.client?.fallback).toMatch(/^[A-Z_0-9]+/);
    const [server] = await peerConns('echo6', 1);
    expect(server?.mode).toBe('fallback');
    console.log(`IPv6 over SMC-R: client ${c.result?.client?.fallback}/${c.result?.client?.peer}, server ${server?.fallback}/${server?.peer}`);
  });

  it('a plain TCP client makes the SMC-R server fall back with PEERNOSMC', async () => {
    const port = await startPeerServer('echo-plain', ['server', '0.0.0.0']);
    const c = await echoClient(PEER_IP, port, 4096, { launcher: false });
    expect(c.result?.ok).toBe(true);
    expect(c.result?.client?.mode).toBe('tcp');
    const [server] = await peerConns('echo-plain', 1);
    expect(server).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
  });

  it('doctor --peer against doctor --serve reports SMC-R on both ends', async () => {
    const started = await peer<{ code: number }>({ op: 'run', argv: ['sh', '-c', 'nohup node bin/smc-run doctor --serve 7777 --count 1 >/dev/null 2>&1 & sleep 8'] });
    expect(started.code).toBe(0);
    const r = await smcRun(['doctor', '--peer', `${PEER_IP}:7777`, '--no-selftest', '--json']);
    const d = JSON.parse(r.stdout) as { checks: { id: string; status: string; message: string }[] };
    const check = d.checks.find((x) => x.id === 'selftest.peer');
    expect(check?.status, check?.message).toBe('ok');
    expect(check?.message).toMatch(/this end SMC-R, peer end SMC-R/);
  });

});
