// An SMC listener's accept() can fail for one connection whose handshake failed after it was queued (the
// kernel returns that socket's error); a TCP listener's never does, and net.Server emits such an error, so
// a server with no 'error' listener would crash. Under the hook, a listener on an SMC socket drops those
// errors (counted in hookStats().acceptErrors) and keeps serving; the listener's own errors (EMFILE) still
// reach it, as they do with TCP. Test mode: the hook's sockets are plain inet, marked as SMC.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, SCENARIOS, run } from '../helpers/run';

const PRELOAD = path.join(REPO, 'dist', 'preload.js');
const SCENARIO = path.join(SCENARIOS, 'accept-guard.cjs');
const ENV = { SMC_RUN_SOCKET_FAMILY: 'inet', SMC_RUN_SESSION: '', NODE_OPTIONS: '' };

async function scenario(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await run(process.execPath, [...args, SCENARIO], { ...ENV, ...env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as { events: string[]; reply: string; listening: boolean; acceptErrors: number | null; smc: number | null };
}

describe('accept errors of one connection on an SMC listener', () => {
  it('under the hook: ECONNRESET and ETIMEDOUT never reach the server, EMFILE does; the next connection is served', async () => {
    const r = await scenario(['--require', PRELOAD]);
    expect(r).toMatchObject({ events: ['EMFILE'], reply: 'ok', listening: true, acceptErrors: 2 });
    expect(r.smc).toBeGreaterThanOrEqual(2); // the listener and the client were the hook's
  });

  it('a listener the policy leaves on TCP gets every error, as without the hook', async () => {
    const r = await scenario(['--require', PRELOAD], { SMC_RUN_EXCLUDE: '0.0.0.0/0' });
    expect(r).toMatchObject({ events: ['ECONNRESET', 'ETIMEDOUT', 'EMFILE'], reply: 'ok', acceptErrors: 0 });
  });

  it('without the hook, plain Node emits all three on the server', async () => {
    const r = await scenario([]);
    expect(r).toMatchObject({ events: ['ECONNRESET', 'ETIMEDOUT', 'EMFILE'], reply: 'ok', acceptErrors: null });
  });
});
