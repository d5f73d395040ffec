// One contract for every command: exit 0 ok, 1 operational failure, 2 usage error; one line on stderr,
// or with --json an {"error":{"code","message"}} object on stdout.
import { isSystemError } from '../native';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError('EUSAGE', message, EXIT_USAGE);

/** Maps any thrown value to a CliError with a code a script can switch on. */
export function toCliError(e: unknown): CliError {
  if (e instanceof CliError) return e;
  if (e instanceof RangeError || e instanceof TypeError) return new CliError('EINVAL', e.message, EXIT_USAGE);
  if (isSystemError(e)) {
    if (e.code === 'EPERM' || e.code === 'EACCES') {
      return new CliError(e.code, `${e.message}: not permitted (run as root, e.g. with sudo)`, EXIT_FAILURE);
    }
    return new CliError(e.code, e.message, EXIT_FAILURE);
  }
  return new CliError('EINTERNAL', e instanceof Error ? e.message : String(e), EXIT_FAILURE);
}

export function reportError(err: CliError, json: boolean): number {
  const message = err.message.replace(/\s*\n\s*/g, ' ');
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: err.code, message } })}\n`);
  else process.stderr.write(`smc-run: ${message}\n`);
  return err.exitCode;
}
