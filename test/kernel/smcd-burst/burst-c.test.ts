// Connection bursts from a C program under the LD_PRELOAD library (SMC-D guest): test/fixtures/preload/burst.c
// runs an echo server (listen backlog 511) and 2,000 client threads that connect at once with blocking
// connects, 64 KiB each, checked both ways; the server starts accepting 8 s after every client entered
// connect(), longer than the client's 6 s CLC wait, as a busy server would (with a server that accepts at
// once, or as soon as every client is in connect(), 2,000 threads spread their connects over 3-4 s here
// and no handshake failed in 8 bursts). As for Node (burst.test.ts), the
// server's SMC handshake queue backs up and the client kernel fails some CLC handshakes; the library retries those connects over plain
// TCP (blocking connects: the retry is transparent). Retries are counted from the library's debug lines and
// compared with the kernel's client handshake-error counter.
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSmcSystemStats } from '../../../src/api/system';
import { buildFixture, tempDir } from '../../helpers/preload-lib';
import { BIN, EXPECT_MODE, run } from '../../helpers/run';

const COUNT = 2000;
// the errors a client SMC connect returns when its CLC handshake fails (as native/preload/smc-preload.c lists them)
const HANDSHAKE_ERRORS = ['ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EPROTO', 'ECONNABORTED'];

interface CBurst { completed: number; failed: number; corrupt: number; errors: Record<string, number>; errorsAfterConnect: Record<string, number>; ms: number }

describe.runIf(EXPECT_MODE === 'smcd')('SMC-D connection bursts from C (LD_PRELOAD library)', () => {
  let dir: string;
  let prog: string;
  beforeAll(() => {
    dir = tempDir();
    prog = buildFixture(dir, 'burst', 'burst', ['-pthread']);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cBurst(env: NodeJS.ProcessEnv): Promise<CBurst & { retries: number; hsErrClient: number; smcdClient: number }> {
    const before = getSmcSystemStats();
    const r = await run(BIN, ['-d', prog, String(COUNT), String(64 << 10), '511', '8000'], env, { timeoutMs: 300_000 });
    const after = getSmcSystemStats();
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const result = JSON.parse(r.stdout.trim()) as CBurst;
    const retries = r.stderr.split('\n').filter((l) => /SMC handshake failed \(\w+\); retrying over plain TCP/.test(l)).length;
    const smcd = (s: typeof after): number => s.smcd.connections.clientV1 + s.smcd.connections.clientV2;
    const out = { ...result, retries, hsErrClient: after.handshakeErrors.client - before.handshakeErrors.client, smcdClient: smcd(after) - smcd(before) };
    console.log(`C burst ${COUNT}${env.SMC_RUN_TCP_RETRY === '0' ? ' (no retry)' : ''}: ${JSON.stringify(out)}`);
    return out;
  }

  it('without the TCP retry, 2,000 blocking connects against backlog 511 lose connections to the SMC handshake', async () => {
    const r = await cBurst({ SMC_RUN_TCP_RETRY: '0' });
    expect(r.failed).toBeGreaterThan(0);
    for (const code of Object.keys(r.errors)) expect(HANDSHAKE_ERRORS).toContain(code);
    expect(r.errorsAfterConnect).toEqual({});
    expect(r.completed + r.failed).toBe(COUNT);
    expect(r.corrupt).toBe(0);
    expect(r.retries).toBe(0);
    expect(r.hsErrClient).toBe(r.failed);
  }, 420_000);

  it('with the TCP retry, every failed SMC handshake is retried over TCP; no handshake timeout reaches the program', async () => {
    // a burst with no failed handshake has nothing to retry: take another (at most 3)
    let r = await cBurst({});
    for (let i = 1; i < 3 && r.hsErrClient === 0; i++) r = await cBurst({});
    expect(r.retries).toBeGreaterThan(0);
    expect(r.retries).toBe(r.hsErrClient);
    expect(r.smcdClient + r.retries).toBe(COUNT);
    // what can still fail is a retried plain TCP connect meeting the same full listen queue (ECONNRESET)
    expect(Object.keys(r.errors).filter((c) => c !== 'ECONNRESET')).toEqual([]);
    expect(r.failed).toBeLessThanOrEqual(r.retries);
    expect(r.errorsAfterConnect).toEqual({});
    expect(r.corrupt).toBe(0);
    expect(r.completed + r.failed).toBe(COUNT);
  }, 900_000);
});
