// Fault behaviour of SMC-R connections (guest pair). Not part of the default suite: on 6.12 over SoftRoCE
// under TCG, a client writing to a server whose process was killed, and a client idle towards a powered-off
// peer, were seen to get no error for minutes (see the README's limitations); run with
// SMC_RUN_FAULT_TESTS=1 to investigate.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE } from '../../helpers/run';
import { echoClient } from '../../helpers/echo';
import { PEER_IP, peer, startPeerServer } from '../../helpers/peer';

describe.runIf(EXPECT_MODE === 'smcr' && process.env.SMC_RUN_FAULT_TESTS === '1')('SMC-R faults', () => {
  it('server killed mid-transfer: the client gets an error, no hang; a restarted server is SMC-R again', async () => {
    const port = await startPeerServer('victim', ['server', '0.0.0.0', '7080']);
    const client = spawnLines([BIN, process.execPath, 'test/scenarios/echo.cjs', 'stream', PEER_IP, String(port)]);
    const connected = await client.waitFor((l) => l.connected !== undefined, 90_000);
    expect(connected.connected).toMatchObject({ mode: 'smcr' });
    await new Promise((r) => setTimeout(r, 2000)); // data in flight
    await peer({ op: 'kill', name: 'victim' });
    const t0 = Date.now();
    const ended = await client.waitFor((l) => l.error !== undefined || l.closed !== undefined, 90_000);
    expect(ended.error ?? ended.closed, JSON.stringify(client.lines)).toBeDefined();
    expect(ended.error, 'writes to a killed peer end in an error').toBeDefined();
    expect(Date.now() - t0).toBeLessThan(90_000);
    client.child.kill('SIGKILL');
    const again = await startPeerServer('victim2', ['server', '0.0.0.0', '7080']);
    const c2 = await echoClient(PEER_IP, again, 4096);
    expect(c2.result?.client).toMatchObject({ mode: 'smcr', fallback: null });
  });

  it('peer guest powered off: the client errors out within its timeout (runs last)', async () => {
    const port = await startPeerServer('last', ['server', '0.0.0.0']);
    const client = spawnLines([BIN, process.execPath, 'test/scenarios/echo.cjs', 'hold', PEER_IP, String(port), '20000']);
    const connected = await client.waitFor((l) => l.connected !== undefined, 90_000);
    expect(connected.connected).toMatchObject({ mode: 'smcr' });
    await peer({ op: 'exit' });
    const t0 = Date.now();
    const ended = await client.waitFor((l) => l.error !== undefined, 120_000);
    expect(ended.error).toBeDefined();
    expect(Date.now() - t0).toBeLessThan(120_000);
    client.child.kill('SIGKILL');
  });
});

/** A child whose stdout JSON lines can be awaited one by one. */
function spawnLines(args: string[]) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
      buf = buf.slice(i + 1);
    }
  });
  return {
    child,
    lines,
    async waitFor(pred: (l: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>> {
      const end = Date.now() + ms;
      for (;;) {
        const hit = lines.find(pred);
        if (hit) return hit;
        if (Date.now() > end) throw new Error(`timed out; lines so far: ${JSON.stringify(lines)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
