// Connection bursts over SMC-R (issue #23): the client process in guest a opens 1,000 / 2,000 connections
// at once to an echo server in guest b (over SoftRoCE), 64 KiB each, the echo sha256-checked. The server's
// listen backlog decides whether its SMC handshake queue overflows (see test/kernel/smcd-burst); when it
// does, the client kernel gives up on the CLC handshake and the shim retries over plain TCP. The client's
// counters are read in guest a's initial namespace, where the RoCE device lives.
// Under TCG an SMC-R handshake is slow enough that most of a 2,000-connection burst times out in the CLC
// wait even with backlog 4096 (measured: 1,813-1,937 retried), so the retry carries most of the burst.
// The pair's guests need 2 GiB each for it: with 1 GiB, plain TCP and SMC alike lost connections in the
// data phase (ECONNRESET after connecting, truncated echoes; thousands of TCP retransmission timeouts).
import { afterAll, describe, expect, it } from 'vitest';
import { burst, expectAccounted, type Burst } from '../../helpers/burst';
import { PEER_IP, peer, startPeerServer } from '../../helpers/peer';
import { EXPECT_MODE } from '../../helpers/run';

const HANDSHAKE_ERRORS = ['ETIMEDOUT', 'ECONNRESET'];
const sum = (m: Record<string, number>): number => Object.values(m).reduce((a, b) => a + b, 0);
/** connects that failed (as opposed to connections that failed after connecting) */
const connectFailures = (r: Burst): number => sum(r.errors) - sum(r.errorsAfterConnect);

describe.runIf(EXPECT_MODE === 'smcr')('SMC-R connection bursts (#23)', () => {
  const started: string[] = [];
  async function server(backlog: number): Promise<string> {
    const name = `burst-${backlog}-${started.length}`;
    const port = await startPeerServer(name, ['burst-server', '0.0.0.0', String(backlog)]);
    started.push(name);
    return `${PEER_IP}:${port}`;
  }
  afterAll(async () => {
    for (const name of started) await peer({ op: 'stop', name });
  });

  it('without the TCP retry, 2,000 connections against backlog 511 lose connections to the SMC handshake', async () => {
    // measured: 969 and 1,011 connects failed (ETIMEDOUT, ECONNRESET); in the second run 188 more connections
    // that had connected (fallbacks) were reset by the server, whose 511-deep queue overflowed: what
    // plain TCP connects meet against a full queue too (211 of 2,000 against 511 in the SMC-D guest)
    const r = await burst(2000, { SMC_RUN_TCP_RETRY: '0' }, ['--connect', await server(511)]);
    expect(connectFailures(r)).toBeGreaterThan(0);
    for (const code of Object.keys(r.errors)) expect(HANDSHAKE_ERRORS).toContain(code);
    expect(Object.keys(r.errorsAfterConnect).filter((c) => c !== 'ECONNRESET')).toEqual([]);
    expect(r.completed + r.failed).toBe(2000);
    expect(r.corrupt).toBe(0);
    expect(r.tcpRetries).toBe(0);
    // every connect that failed is a failed SMC handshake, counted by the kernel
    expect(r.delta.hsErrClient).toBe(connectFailures(r));
    expectAccounted(r);
  }, 600_000);

  it('with the TCP retry, 1,000 connections against backlog 511: each failed SMC handshake is retried over TCP', async () => {
    // measured: 915 retried, all 1,000 complete
    const r = await burst(1000, {}, ['--connect', await server(511)]);
    expect(r.tcpRetries).toBe(r.delta.hsErrClient);
    expect(r.tcpRetries).toBeGreaterThan(0);
    expect(r.delta.smcrClient + r.tcpRetries).toBe(1000);
    // what could still fail is a retried plain TCP connect meeting the same full listen queue
    // (ECONNRESET), as plain TCP connects can; never an SMC handshake timeout
    expect(Object.keys(r.errors).filter((c) => c !== 'ECONNRESET')).toEqual([]);
    expect(r.failed).toBeLessThanOrEqual(r.tcpRetries);
    expect(r.corrupt).toBe(0);
    expect(r.completed + r.failed).toBe(1000);
    expectAccounted(r);
  }, 600_000);

  it('with the TCP retry and a backlog that fits the burst (4096), 2,000 connections all complete with their data intact', async () => {
    // measured (2 GiB guests): 2,000 of 2,000 twice, 1,937 and 1,860 of them retried
    const r = await burst(2000, {}, ['--connect', await server(4096)]);
    expect(r.errors).toEqual({});
    expect(r.failed).toBe(0);
    expect(r.corrupt).toBe(0);
    expect(r.completed).toBe(2000);
    expect(r.tcpRetries).toBe(r.delta.hsErrClient);
    expect(r.delta.smcrClient + r.tcpRetries).toBe(2000);
    expectAccounted(r);
  }, 600_000);
});
