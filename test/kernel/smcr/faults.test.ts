// Fault behaviour of SMC-R connections (guest pair): the peer's server process dies mid-transfer.
// (The peer host powering off is poweroff.test.ts, run last by the suite job because it ends guest b.)
import { describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, spawnJsonLines } from '../../helpers/run';
import { echoClient } from '../../helpers/echo';
import { PEER_IP, peer, startPeerServer } from '../../helpers/peer';

describe.runIf(EXPECT_MODE === 'smcr')('SMC-R faults', () => {
  it('server killed mid-transfer: the writing client gets an error, no hang; a restarted server is SMC-R again', async () => {
    const port = await startPeerServer('victim', ['server', '0.0.0.0', '7080']);
    const client = spawnJsonLines([BIN, process.execPath, 'test/scenarios/echo.cjs', 'stream', PEER_IP, String(port)]);
    const connected = await client.waitFor((l) => l.connected !== undefined, 90_000);
    expect(connected.connected).toMatchObject({ mode: 'smcr', fallback: null });
    await new Promise((r) => setTimeout(r, 2000)); // data in flight
    await peer({ op: 'kill', name: 'victim' }); // SIGKILL to the server process itself, not only its launcher
    const t0 = Date.now();
    const ended = await client.waitFor((l) => l.error !== undefined || l.closed !== undefined, 90_000);
    const ms = Date.now() - t0;
    console.log(`SMC-R server killed: client ${JSON.stringify(ended)} ${ms} ms after the kill`);
    expect(ended.error, 'writes to a killed peer end in an error').toMatch(/^(EPIPE|ECONNRESET|ECONNABORTED)$/);
    expect(Number(ended.sent)).toBeGreaterThan(0);
    expect(ms).toBeLessThan(90_000);
    client.child.kill('SIGKILL');
    // the same port again: a new server process, new connections are SMC-R on both ends
    const again = await startPeerServer('victim2', ['server', '0.0.0.0', '7080']);
    const c2 = await echoClient(PEER_IP, again, 4096);
    expect(c2.result?.ok, c2.run.stderr).toBe(true);
    expect(c2.result?.client).toMatchObject({ mode: 'smcr', fallback: null });
  });
});
