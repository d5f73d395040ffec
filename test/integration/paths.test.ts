// Every TCP path Node has, run under the launcher. On this host (no SMC) the launcher's test mode
// proves the hook adopts each socket and data arrives intact; inside the SMC-D guest the same file
// asserts that both ends of every connection negotiated SMC-D with no fallback.
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario, type ScenarioResult } from '../helpers/run';

/** scenario -> hooked operations expected in the process (test mode counts what the hook adopted) */
const CASES: Record<string, Record<string, number>> = {
  'net-v4': { bind: 1, connect: 1 },
  'net-v6': { bind6: 1, connect6: 1 },
  'net-dual': { bind6: 1, connect: 1 },
  'http-keepalive': { bind: 1, connect: 1 },
  https: { bind6: 1, connect6: 1 },
  tls: { bind: 1, connect: 1 },
  http2: { bind: 1, connect: 1 },
  fetch: { bind: 1 },
  'auto-select-family': { bind: 1 },
  'local-address': { bind: 2 },
  'listen-handle-bound': { bind: 1, connect: 1 },
  'listen-handle-unbound': { listen: 1, connect: 1 },
};

function assertConnections(r: ScenarioResult, minConns: number): void {
  expect(r.ok, JSON.stringify(r)).toBe(true);
  expect(r.conns.length).toBeGreaterThanOrEqual(minConns);
  for (const c of r.conns) {
    if (EXPECT_MODE) {
      expect(c, `${c.side} end`).toMatchObject({ mode: EXPECT_MODE, fallback: null });
    } else {
      expect(c.mode, `${c.side} end on a kernel without SMC`).toBe('tcp');
    }
  }
}

describe('every Node TCP path goes through the hook', () => {
  for (const [scenario, ops] of Object.entries(CASES)) {
    it(scenario, async () => {
      const { run, results } = await runScenario('paths.cjs', [scenario, String(1 << 20)]);
      expect(run.stderr).not.toMatch(/no SMC|unavailable|error/i);
      expect(results, run.stdout + run.stderr).toHaveLength(1);
      const r = results[0] as ScenarioResult;
      assertConnections(r, scenario === 'fetch' ? 1 : 2);
      for (const [op, n] of Object.entries(ops)) expect(r.hook?.byOp[op] ?? 0, `${op} adoptions`).toBeGreaterThanOrEqual(n);
      expect(r.hook?.errors).toBe(0);
    });
  }

  it('worker_threads install the hook in each thread', async () => {
    const { results } = await runScenario('paths.cjs', ['worker-thread']);
    const r = results[0] as ScenarioResult & { workerHook: { smc: number } };
    assertConnections(r, 2);
    expect(r.workerHook.smc).toBe(2);
  });

  it('leaves unix sockets alone', async () => {
    const { results } = await runScenario('paths.cjs', ['untouched']);
    const r = results[0] as ScenarioResult & { after: { smc: number; errors: number } };
    expect(r.ok).toBe(true);
    expect(r.after.smc).toBe(0);
    expect(r.after.errors).toBe(0);
  });

  it('cluster round-robin and SCHED_NONE serve over the hooked sockets', async () => {
    for (const policy of ['rr', 'none']) {
      const { run, results } = await runScenario('cluster.cjs', [policy]);
      const primary = results.find((r) => r.role === 'primary') as ScenarioResult | undefined;
      expect(primary, run.stdout + run.stderr).toBeDefined();
      assertConnections(primary as ScenarioResult, 4);
      expect((primary as ScenarioResult & { workersServed: number }).workersServed).toBe(2);
    }
  });
});
