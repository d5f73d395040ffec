// Connection bursts in the real-kernel suites (issue #23): runs test/scenarios/burst.cjs under smc-run and
// returns its result (the numbers are logged, one line per burst).
import { expect } from 'vitest';
import { runScenario, type ScenarioResult } from './run';

export interface Burst extends ScenarioResult {
  count: number;
  completed: number;
  failed: number;
  corrupt: number;
  serverMatched: number | null;
  errors: Record<string, number>;
  /** the errors of connections that had connected (data phase) */
  errorsAfterConnect: Record<string, number>;
  ms: number;
  tcpRetries: number;
  delta: { hsErrClient: number; smcdClient: number; smcrClient: number; fallbackClient: number };
}

export async function burst(count: number, env: NodeJS.ProcessEnv = {}, extra: string[] = []): Promise<Burst> {
  const { run, results } = await runScenario('burst.cjs', ['--count', String(count), ...extra], env);
  expect(results, run.stdout + run.stderr).toHaveLength(1);
  const r = results[0] as Burst;
  expect(r.ok, r.error).toBe(true);
  console.log(`burst ${count}${env.SMC_RUN_TCP_RETRY === '0' ? ' (no retry)' : ''}: ${JSON.stringify({ ms: r.ms, completed: r.completed, failed: r.failed, errors: r.errors, tcpRetries: r.tcpRetries, delta: r.delta })}`);
  return r;
}

/** Every client connection is accounted for by the kernel: SMC-D or SMC-R, fallback, or handshake error. */
export function expectAccounted(r: Burst): void {
  expect(r.delta.smcdClient + r.delta.smcrClient + r.delta.fallbackClient + r.delta.hsErrClient).toBe(r.count);
}
