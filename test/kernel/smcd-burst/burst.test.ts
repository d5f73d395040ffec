// Connection bursts over SMC-D (issue #23): one process opens 1,000 / 2,000 connections at once to its own
// echo server, 64 KiB each, sha256 checked both ways. When the server's SMC handshake queue backs up, the
// client kernel gives up on the CLC handshake (ETIMEDOUT or ECONNRESET, counted as a client handshake
// error) and the shim retries those connects over plain TCP. Without the retry the burst loses those
// connections (the test can fail); with it, their count equals the kernel's counter delta.
// The listen backlog decides it: an SMC listener counts its queued SMC handshakes against the backlog
// (6.12 smc_tcp_syn_recv_sock drops the final ACK while ack_backlog + queued_smc_hs > backlog; the client's
// CLC wait then times out, ETIMEDOUT, or its proposal meets a reset, ECONNRESET). With Node's default 511,
// 1,000 connections at once overflow it here (and plain TCP overflows it too: ECONNRESET for 105 of 1,000
// in the bench); with 4096 (net.core.somaxconn here) 2,000 connections go through without an error.
import { describe, expect, it } from 'vitest';
import { burst, expectAccounted } from '../../helpers/burst';
import { EXPECT_MODE } from '../../helpers/run';

const B511 = ['--backlog', '511'];
// the errors a client SMC connect returns when its CLC handshake fails (as src/hook/tcp-retry.ts lists them)
const HANDSHAKE_ERRORS = ['ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EPROTO', 'ECONNABORTED'];

describe.runIf(EXPECT_MODE === 'smcd')('SMC-D connection bursts (#23)', () => {
  it('without the TCP retry, 2,000 connections against backlog 511 lose connections to the SMC handshake', async () => {
    // measured: 1,290 and 1,334 of 2,000 (of 1,000: 66 to 272)
    const r = await burst(2000, { SMC_RUN_TCP_RETRY: '0' }, B511);
    expect(r.failed).toBeGreaterThan(0);
    for (const code of Object.keys(r.errors)) expect(HANDSHAKE_ERRORS).toContain(code);
    expect(r.completed + r.failed).toBe(2000);
    expect(r.corrupt).toBe(0);
    expect(r.tcpRetries).toBe(0);
    expect(r.delta.hsErrClient).toBe(r.failed);
    expectAccounted(r);
  }, 120_000);

  it('with the TCP retry, every failed SMC handshake is retried over TCP; no handshake timeout reaches the program', async () => {
    // 1,000 connections against backlog 511 fail 66 to 272 handshakes here, and once none: then there was
    // nothing to retry and the run says nothing, so another burst is taken (at most 3). (With backlog 128
    // the burst printed no result line in one CI run.)
    let r = await burst(1000, {}, B511);
    for (let i = 1; i < 3 && r.delta.hsErrClient === 0; i++) r = await burst(1000, {}, B511);
    expect(r.tcpRetries).toBe(r.delta.hsErrClient);
    expect(r.tcpRetries).toBeGreaterThan(0);
    // the retries arrive at the server as plain TCP (server-side fallbacks)
    expect(r.delta.smcdClient + r.tcpRetries).toBe(1000);
    // what can still fail is a retried plain TCP connect meeting the same full listen queue (ECONNRESET),
    // as plain TCP connects do against a full backlog in this guest; never an SMC handshake timeout
    expect(Object.keys(r.errors).filter((c) => c !== 'ECONNRESET')).toEqual([]);
    expect(r.failed).toBeLessThanOrEqual(r.tcpRetries);
    expect(r.corrupt).toBe(0);
    expect(r.completed + r.failed).toBe(1000);
    expect(r.serverMatched).toBeGreaterThanOrEqual(r.completed);
    expectAccounted(r);
  }, 420_000);

  it('with the TCP retry and a backlog that fits the burst (4096), 2,000 connections all complete with their data intact', async () => {
    const r = await burst(2000, {}, ['--backlog', '4096']);
    expect(r.errors).toEqual({});
    expect(r.failed).toBe(0);
    expect(r.corrupt).toBe(0);
    expect(r.completed).toBe(2000);
    expect(r.serverMatched).toBe(2000);
    expect(r.tcpRetries).toBe(r.delta.hsErrClient);
    expectAccounted(r);
  }, 180_000);
});
