// The LD_PRELOAD library's test programs: test/fixtures/preload/*.c built with gcc into a temp dir, and
// sockprobe servers/clients run under the launcher. sockprobe prints one JSON line per socket call.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { listSmcSockets, type SmcSocketInfo } from '../../src/stats/sockets';
import { BIN, REPO, run, type RunResult } from './run';

export interface Probe {
  op: 'connect' | 'listen';
  boundPort: number;
  localPort: number;
  fd: number;
  fdAfter: number;
  replaced: boolean;
  rc: number;
  errno: string;
  nonblock: boolean;
  cloexec: boolean;
  reuseaddr: number;
  keepalive: number;
  nodelay: number;
  sndbuf: number;
  v6only: number;
  /** SO_DOMAIN: 43 (AF_SMC) for an AF_SMC socket; 2/10 for inet ones (IPPROTO_SMC, TCP, test mode) */
  domain: number;
}

/**
 * The library's two paths: without rules every TCP socket is SMC from socket() on; with rules too, and
 * connect()/listen() decide in place (an excluded socket is switched to TCP by the kernel, on the same
 * socket). Neither replaces the fd's socket: only the TCP retry does ("replaced").
 */
export const PATHS = [
  { name: 'SMC from socket()', args: [] as string[], replaced: false },
  { name: 'decided in place at connect/listen by a rule', args: ['--include', '127.0.0.0/8', '--include', '::1'], replaced: false },
] as const;

export const FIXTURES = path.join(REPO, 'test', 'fixtures', 'preload');

/** Compiles test/fixtures/preload/NAME.c (extra gcc flags after) into dir/OUT. */
export function buildFixture(dir: string, name: string, out = name, flags: string[] = []): string {
  const file = path.join(dir, out);
  execFileSync('gcc', ['-O1', '-o', file, path.join(FIXTURES, `${name}.c`), ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  return file;
}

export const tempDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-preload-'));

/** A test file's set-up: a temp dir with sockprobe built in it before the tests, removed after them. */
export function sockprobeFixture(): { dir: string; probe: string } {
  const fx = { dir: '', probe: '' };
  beforeAll(() => {
    fx.dir = tempDir();
    fx.probe = buildFixture(fx.dir, 'sockprobe');
  });
  afterAll(() => fs.rmSync(fx.dir, { recursive: true, force: true }));
  return fx;
}

export const jsonLines = (s: string): Record<string, unknown>[] =>
  s.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

export const probeOf = (r: RunResult, op: Probe['op'] = 'connect'): Probe | undefined =>
  jsonLines(r.stdout).find((j) => j.op === op) as Probe | undefined;

export const echoOf = (r: RunResult): { echo: boolean; bytes: number } | undefined =>
  jsonLines(r.stdout).find((j) => 'echo' in j) as { echo: boolean; bytes: number } | undefined;

export interface Server {
  port: number;
  child: ChildProcess;
  /** stdout and stderr so far */
  out(): { stdout: string; stderr: string };
  /** resolves when the server exited (after its COUNT connections) */
  done: Promise<number | null>;
  stop(): void;
}

/** A sockprobe echo server under `smc-run LAUNCHER_ARGS`, for COUNT connections. */
export function startServer(sockprobe: string, launcherArgs: string[], env: NodeJS.ProcessEnv, addr = '127.0.0.1', count = 1, extra: string[] = []): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, [...launcherArgs, sockprobe, 'serve', addr, '0', String(count), ...extra], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 60_000);
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /\{"port":(\d+)\}/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), child, out: () => ({ stdout, stderr }), done, stop: () => child.kill('SIGKILL') });
      }
    });
    child.on('close', () => reject(new Error(`server exited early: ${stderr}`)));
  });
}

/** sockprobe connect ADDR PORT ARGS under `smc-run LAUNCHER_ARGS`. */
export const connectProbe = (sockprobe: string, launcherArgs: string[], env: NodeJS.ProcessEnv, addr: string, port: number, args: string[] = []): Promise<RunResult> =>
  run(BIN, [...launcherArgs, sockprobe, 'connect', addr, String(port), ...args], env);

/** The library's own debug lines (text format) in stderr. */
export const debugLines = (stderr: string): string[] => stderr.split('\n').filter((l) => /^DEBUG: smc-run\[\d+\]: /.test(l)).map((l) => l.replace(/^DEBUG: smc-run\[\d+\]: /, ''));

/**
 * Both ends of the connections to PORT as sock_diag sees them, polled until fn says done (that poll) or
 * 20 s (then the last poll that saw any, so that a failure shows what was there).
 */
/** Listed and past the CLC handshake: 'none' is a connection whose mode the kernel has not decided yet. */
export const settled = (xs: SmcSocketInfo[]): boolean => xs.length > 0 && xs.every((x) => x.mode !== 'none');

export async function ends(port: number, done: (server: SmcSocketInfo[], client: SmcSocketInfo[]) => boolean): Promise<{ server: SmcSocketInfo[]; client: SmcSocketInfo[] }> {
  let last = { server: [] as SmcSocketInfo[], client: [] as SmcSocketInfo[] };
  for (let i = 0; i < 100; i++) {
    const all = listSmcSockets().filter((s) => !s.listening);
    const now = { server: all.filter((s) => s.local.port === port), client: all.filter((s) => s.remote.port === port) };
    if (done(now.server, now.client)) return now;
    if (now.server.length + now.client.length > 0) last = now;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}
