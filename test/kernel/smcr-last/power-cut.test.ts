// The SMC-R peer host loses power (guest b stops dead: no FIN, no SMC close, no RDMA teardown). Run by
// the suite job after everything else (test/vm/smcr/jobs/suite-a.sh): it ends guest b.
import { describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, spawnJsonLines } from '../../helpers/run';
import { PEER_IP, peer, startPeerServer } from '../../helpers/peer';

const IDLE_TIMEOUT_MS = 15_000;

describe.runIf(EXPECT_MODE === 'smcr')('SMC-R peer power cut', () => {
  it('an idle client errors out through its own socket timeout, and closing the socket does not block', async () => {
    const port = await startPeerServer('power-cut', ['server', '0.0.0.0']);
    const client = spawnJsonLines([BIN, process.execPath, 'test/scenarios/echo.cjs', 'hold', PEER_IP, String(port), String(IDLE_TIMEOUT_MS)]);
    const exited = new Promise<number | null>((r) => client.child.once('exit', (code) => r(code)));
    const connected = await client.waitFor((l) => l.connected !== undefined, 90_000);
    expect(connected.connected).toMatchObject({ mode: 'smcr', fallback: null });
    await peer({ op: 'power-cut' });
    const t0 = Date.now();
    // the event loop keeps running (the timer fires) and destroy() -> close() returns: the process ends
    const ended = await client.waitFor((l) => l.error !== undefined || l.closed !== undefined, IDLE_TIMEOUT_MS + 60_000);
    const ms = Date.now() - t0;
    console.log(`SMC-R peer power cut: client ${JSON.stringify(client.lines.slice(1))} ${ms} ms after the cut`);
    expect(ended.error).toBe('socket timeout');
    expect(ms).toBeLessThan(IDLE_TIMEOUT_MS + 60_000);
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 30_000))]);
    expect(code, 'the client process ends once its socket is destroyed').toBe(0);
  });
});
