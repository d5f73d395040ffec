// `node bin/smc-run CMD ...` (the file read as JavaScript): the launch itself is the sh part of the same
// file, run through /bin/sh. This Node process stays in between only in that form: it forwards signals
// and returns the child's exit status (128+N when it died of signal N, as shells report it).
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../package-root';

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** bin/smc-run of this package. */
export const LAUNCHER_PATH = path.join(PACKAGE_ROOT, 'bin', 'smc-run');

export function runThroughShell(argv: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', [LAUNCHER_PATH, ...argv], { stdio: 'inherit' });
    const forward = (sig: NodeJS.Signals): void => {
      child.kill(sig);
    };
    for (const sig of FORWARDED) process.on(sig, forward);
    const done = (code: number): void => {
      for (const sig of FORWARDED) process.off(sig, forward);
      resolve(code);
    };
    child.on('error', (err) => {
      process.stderr.write(`smc-run: cannot run /bin/sh: ${err.message}\n`);
      done(126);
    });
    child.on('exit', (code, signal) => done(signal ? 128 + (os.constants.signals[signal] ?? 0) : (code ?? 1)));
  });
}
