// Runs the user's command with the shim in NODE_OPTIONS: arguments untouched, signals forwarded,
// the child's exit status returned (128+N when it died of signal N, as shells report it).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { noticeMarkerPath } from '../hook/notice';

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

export interface SpawnFailure {
  exitCode: number;
  message: string;
}

export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv, session: string): Promise<number | SpawnFailure> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    const forward = (sig: NodeJS.Signals): void => {
      child.kill(sig);
    };
    for (const sig of FORWARDED) process.on(sig, forward);
    const cleanup = (): void => {
      for (const sig of FORWARDED) process.off(sig, forward);
      fs.rm(noticeMarkerPath(session), { force: true }, () => {});
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      cleanup();
      if (err.code === 'ENOENT') resolve({ exitCode: 127, message: `command not found: ${command}` });
      else if (err.code === 'EACCES') resolve({ exitCode: 126, message: `permission denied: ${command}` });
      else resolve({ exitCode: 126, message: `cannot run ${command}: ${err.message}` });
    });
    child.on('exit', (code, signal) => {
      cleanup();
      if (signal) {
        const n = os.constants.signals[signal] ?? 0;
        resolve(128 + n);
      } else {
        resolve(code ?? 1);
      }
    });
  });
}
