// The TCP retry of a failed SMC handshake, driven on this host: test mode (plain inet sockets from the
// addon) plus the test-only knob SMC_RUN_TEST_CONNECT_FAULT, which makes the first completion of each
// hooked connect a retryable failure. The real SMC failures are in test/kernel/smc{d,r}/burst.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSmcHandshakeFailure } from '../../src/hook/tcp-retry';
import { readConfig } from '../../src/config';
import { EXPECT_MODE, runScenario, type ScenarioResult } from '../helpers/run';

const FAULT = { SMC_RUN_SOCKET_FAMILY: 'inet', SMC_RUN_TEST_CONNECT_FAULT: 'ETIMEDOUT' };

interface Seen {
  errors: string[];
  connects: number;
  closes?: number;
  echo: { length: number; hash: string } | string | null;
  fd?: number | null;
  noDelay?: boolean | string | null;
  localAddress?: string;
  isSmc?: boolean;
}

/** A wrapper command: the launcher runs in a fresh network namespace (lo up, TCP timestamps off). */
const NO_TIMESTAMPS_NETNS = ['unshare', '--net', 'sh', '-ec', 'ip link set lo up; echo 0 > /proc/sys/net/ipv4/tcp_timestamps; exec "$@"', 'netns'];

async function scenario(name: string, env: NodeJS.ProcessEnv = FAULT, launcher: string[] = [], wrapper: string[] = []): Promise<ScenarioResult & { seen: Seen; stderr: string }> {
  const { run, results } = await runScenario('tcp-retry.cjs', [name], env, launcher, wrapper);
  expect(results, run.stdout + run.stderr).toHaveLength(1);
  const r = results[0] as ScenarioResult & { seen: Seen };
  expect(r.ok, r.error).toBe(true);
  return Object.assign(r, { stderr: run.stderr });
}

const retries = (r: ScenarioResult): number => (r.hook as unknown as { tcpRetries: number }).tcpRetries;

describe.skipIf(EXPECT_MODE !== undefined)('TCP retry of a failed SMC handshake (test mode)', () => {
  it('a retried connect to a live server delivers every byte; the program sees one connection', async () => {
    const r = await scenario('live');
    expect(retries(r)).toBe(1);
    expect(r.seen.errors).toEqual([]);
    expect(r.seen.connects).toBe(1);
    expect(r.seen.echo).toEqual(r.sent);
    expect(r.accepted).toBe(2); // the server saw the failed first connection and the retry
    expect(r.seen.noDelay).toBe(true); // setNoDelay before connect survives the socket swap
  });

  it('a retry that fails too reports exactly one error (ECONNREFUSED), as on TCP', async () => {
    const r = await scenario('refused');
    expect(retries(r)).toBe(1);
    expect(r.seen.errors).toEqual(['ECONNREFUSED']);
    expect(r.seen.connects).toBe(0);
    expect(r.seen.closes).toBe(1);
  });

  it('localAddress is bound again on the retry', async () => {
    const r = await scenario('localAddress');
    expect(retries(r)).toBe(1);
    expect(r.seen.errors).toEqual([]);
    expect(r.seen.localAddress).toBe('127.0.0.2');
  });

  it('after the retry, isSmcSocket() answers for the plain TCP socket now under the handle', async () => {
    const r = await scenario('live');
    expect(retries(r)).toBe(1);
    expect(r.seen.isSmc).toBe(false);
    // control: the same connection without a fault is still an SMC socket of the hook
    const plain = await scenario('live', { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(retries(plain)).toBe(0);
    expect(plain.seen.isSmc).toBe(true);
  });

  it('with a fixed localPort the retry cannot start: the program sees the original error, not EADDRNOTAVAIL', async () => {
    // The failed connection's 4-tuple is still taken when the retry connects, but a connect from a bound
    // port takes over a TIME_WAIT holder at once if the connection had TCP timestamps (tried on 6.18:
    // reused after 0 ms and 1.5 s; EADDRNOTAVAIL with timestamps off). So whether the retry starts would
    // depend on how far the old connection's close got: on a fast host it usually has not, under
    // qemu-user it has. Run the scenario in a network namespace of its own with tcp_timestamps=0.
    const r = await scenario('localPort', { ...FAULT, SMC_RUN_DEBUG: '1' }, [], NO_TIMESTAMPS_NETNS);
    expect(r.seen.errors).toEqual(['ETIMEDOUT']);
    expect(r.seen.connects).toBe(0);
    expect(retries(r)).toBe(0);
    expect(r.stderr).toMatch(/TCP retry on fd \d+ could not start \(EADDRNOTAVAIL\)/);
    expect(r.stderr).not.toMatch(/retried over plain TCP/); // no notice for a retry that never ran
  });

  it('a connect the program destroyed or aborted is not retried', async () => {
    const d = await scenario('destroyed');
    expect(retries(d)).toBe(0);
    expect(d.seen.connects).toBe(0);
    const a = await scenario('aborted');
    expect(retries(a)).toBe(0);
    expect(a.seen.errors).toEqual(['ABORT_ERR']);
  });

  it('net.Socket#connect again after an error works (and is retried again)', async () => {
    const r = await scenario('reconnect');
    expect(r.seen.errors).toEqual(['ECONNREFUSED']);
    expect(r.seen.echo).toBe('again');
    expect(retries(r)).toBe(2);
  });

  it('happy eyeballs (autoSelectFamily) keeps working', async () => {
    const r = await scenario('happyEyeballs');
    expect(r.seen.errors).toEqual([]);
    expect(r.seen.echo).not.toBeNull();
    expect(retries(r)).toBeGreaterThanOrEqual(1);
  });

  it('--no-tcp-retry and SMC_RUN_TCP_RETRY=0 turn it off', async () => {
    const r = await scenario('live', { ...FAULT, SMC_RUN_TCP_RETRY: '0' });
    expect(retries(r)).toBe(0);
    expect(r.accepted).toBe(1);
  });

  it('the retry notice is printed once per process tree, and its marker files do not pile up', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-retry-markers-'));
    try {
      const uid = process.geteuid?.() ?? 0;
      const gone = `smc-run-${uid}-999999999-12345-tcp-retry.notice`; // a session long gone
      // the markers' directory only this user can write (src/hook/notice.ts)
      const own = path.join(dir, `smc-run-${uid}`);
      fs.mkdirSync(own, 0o700);
      fs.writeFileSync(path.join(own, gone), '');
      const seen: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await scenario('live', { ...FAULT, TMPDIR: dir, XDG_RUNTIME_DIR: '' });
        expect(retries(r)).toBe(1);
        expect(r.stderr.split('\n').filter((l) => l.includes('retried over plain TCP'))).toHaveLength(1);
        // only the marker of the session that just ended is left: the earlier ones were swept
        const markers = fs.readdirSync(own);
        expect(markers).toHaveLength(1);
        expect(markers[0]).toMatch(new RegExp(`^smc-run-${uid}-\\d+-\\d+-tcp-retry\\.notice$`));
        expect(seen).not.toContain(markers[0]);
        seen.push(markers[0]!);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the knob is test-only: without test mode it does nothing', () => {
    expect(readConfig({ SMC_RUN_TEST_CONNECT_FAULT: 'ETIMEDOUT' }).socketFamily).toBe('smc');
    expect(readConfig({}).tcpRetry).toBe(true);
    expect(readConfig({ SMC_RUN_TCP_RETRY: 'off' }).tcpRetry).toBe(false);
    expect(() => readConfig({ SMC_RUN_TEST_CONNECT_FAULT: 'timeout' })).toThrow(/errno name/);
  });
});

describe('which failures are SMC handshake failures', () => {
  const up = { state: 1 /* ESTABLISHED */, segsIn: 1 };
  it('ETIMEDOUT only after a TCP handshake (CLC wait), never a SYN timeout', () => {
    expect(isSmcHandshakeFailure(-110, up)).toBe(true);
    expect(isSmcHandshakeFailure(-110, { state: 8 /* CLOSE_WAIT */, segsIn: 2 })).toBe(true);
    // reset between the kernel's CLC timeout and the callback: closed, but it had a SYN-ACK
    expect(isSmcHandshakeFailure(-110, { state: 7, segsIn: 3 })).toBe(true);
    // SYN timeout: closed, nothing ever received
    expect(isSmcHandshakeFailure(-110, { state: 7, segsIn: 0 })).toBe(false);
    expect(isSmcHandshakeFailure(-110, undefined)).toBe(false);
  });
  it('errors only the CLC handshake returns; never ECONNREFUSED or unreachable', () => {
    for (const e of [-104 /* ECONNRESET */, -71 /* EPROTO */, -32 /* EPIPE */]) expect(isSmcHandshakeFailure(e, { state: 7, segsIn: 0 })).toBe(true);
    for (const e of [-111 /* ECONNREFUSED */, -113 /* EHOSTUNREACH */, -101 /* ENETUNREACH */, -125 /* ECANCELED */]) {
      expect(isSmcHandshakeFailure(e, up)).toBe(false);
    }
  });
});
