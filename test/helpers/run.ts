// Spawning smc-run and scenario programs from tests, and reading their results.
import { spawn } from 'node:child_process';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '..', '..');
export const BIN = path.join(REPO, 'bin', 'smc-run');
export const SCENARIOS = path.join(REPO, 'test', 'scenarios');

/** What the environment promises: 'smcd' / 'smcr' inside a guest, undefined on a host without SMC. */
export const EXPECT_MODE = process.env.SMC_RUN_EXPECT as 'smcd' | 'smcr' | undefined;

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, opts: { timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // a command that exits at once (the sh launcher refusing its options) may close stdin first: EPIPE
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** smc-run with the given arguments, as installed: bin/smc-run is a sh script that execs the command. */
export const smcRun = (args: string[], env: NodeJS.ProcessEnv = {}, opts?: { timeoutMs?: number }): Promise<RunResult> =>
  run(BIN, args, env, opts);

/** Environment for host runs: test mode unless a guest promises real SMC. */
export function modeEnv(): NodeJS.ProcessEnv {
  return EXPECT_MODE ? {} : { SMC_RUN_SOCKET_FAMILY: 'inet' };
}

export interface Conn {
  side: string;
  mode: string;
  fallback: string | null;
  peer: string | null;
  error?: string;
}

export interface ScenarioResult {
  ok: boolean;
  pid: number;
  hook: { smc: number; excluded: number; unavailable: number; errors: number; byOp: Record<string, number> } | null;
  conns: Conn[];
  error?: string;
  [k: string]: unknown;
}

export function scenarioResults(stdout: string): ScenarioResult[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('SCENARIO_RESULT '))
    .map((l) => JSON.parse(l.slice('SCENARIO_RESULT '.length)) as ScenarioResult);
}

/**
 * Runs test/scenarios/FILE under the launcher; returns the result lines and the raw output. wrapper: a
 * command that execs the launcher (unshare ...), so only the scenario runs under the shim.
 */
export async function runScenario(file: string, args: string[], env: NodeJS.ProcessEnv = {}, launcherArgs: string[] = [], wrapper: string[] = []): Promise<{ run: RunResult; results: ScenarioResult[] }> {
  const argv = [...launcherArgs, process.execPath, path.join(SCENARIOS, file), ...args];
  const r = wrapper.length ? await run(wrapper[0], [...wrapper.slice(1), BIN, ...argv], { ...modeEnv(), ...env }) : await smcRun(argv, { ...modeEnv(), ...env });
  return { run: r, results: scenarioResults(r.stdout) };
}

/** A child whose stdout JSON lines can be awaited one by one. */
export function spawnJsonLines(args: string[]) {
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
