// Starting the echo scenario's server in the background (under the launcher or plain) for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { BIN, SCENARIOS, run, type Conn } from './run';

export interface EchoServer {
  port: number;
  child: ChildProcess;
  /** conn lines printed so far (one per closed connection) */
  conns: Conn[];
  stop(): Promise<void>;
}

/**
 * opts.wrap goes before the server's command line (ip netns exec NS ...); opts.command turns that command
 * line into another one that runs it (a container runtime that takes the program from its own config).
 * opts.startTimeoutMs: how long to wait for "listening" (default 60 s). opts.role late-server: it listens
 * once it gets SIGUSR2.
 */
export function startEchoServer(
  host: string,
  opts: {
    launcher?: boolean; launcherArgs?: string[]; env?: NodeJS.ProcessEnv; wrap?: string[]; command?: (argv: string[]) => string[];
    startTimeoutMs?: number; role?: 'server' | 'late-server';
  } = {},
): Promise<EchoServer> {
  const script = [path.join(SCENARIOS, 'echo.cjs'), opts.role ?? 'server', host];
  const argv = opts.launcher === false ? [process.execPath, ...script] : [process.execPath, BIN, ...(opts.launcherArgs ?? []), process.execPath, ...script];
  const full = opts.command ? opts.command(argv) : [...(opts.wrap ?? []), ...argv];
  const child = spawn(full[0] as string, full.slice(1), { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const conns: Conn[] = [];
  let buf = '';
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`echo server did not start in ${(opts.startTimeoutMs ?? 60_000) / 1000} s: ${stderr}`)), opts.startTimeoutMs ?? 60_000);
    child.on('exit', (code) => reject(new Error(`echo server exited ${code}: ${stderr}`)));
    child.stdout?.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const msg = JSON.parse(line) as { listening?: number; server?: Conn };
        if (msg.server) conns.push(msg.server);
        if (msg.listening !== undefined) {
          clearTimeout(timer);
          resolve({
            port: msg.listening,
            child,
            conns,
            stop: () =>
              new Promise<void>((r) => {
                if (child.exitCode !== null) return r();
                child.once('exit', () => r());
                child.kill('SIGTERM');
              }),
          });
        }
      }
    });
  });
}

/** Waits until the server has reported `n` closed connections. */
export async function waitForConns(server: EchoServer, n: number, ms = 30_000): Promise<Conn[]> {
  const end = Date.now() + ms;
  while (server.conns.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return server.conns;
}

export async function echoClient(host: string, port: number, bytes: number, opts: { launcher?: boolean; env?: NodeJS.ProcessEnv; launcherArgs?: string[]; wrap?: string[] } = {}) {
  const script = [path.join(SCENARIOS, 'echo.cjs'), 'client', host, String(port), String(bytes)];
  const argv = opts.launcher === false ? [process.execPath, ...script] : [process.execPath, BIN, ...(opts.launcherArgs ?? []), process.execPath, ...script];
  const full = [...(opts.wrap ?? []), ...argv];
  const r = await run(full[0] as string, full.slice(1), opts.env ?? {});
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  return { run: r, result: line ? (JSON.parse(line) as { client: Conn | null; ok: boolean; bytes: number; error?: string }) : undefined };
}
