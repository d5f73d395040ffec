// One error vocabulary for every command, as node:internal/errors has one table of codes: every failure
// leaves the CLI as a code from ERROR_CODES (or an errno name the kernel gave), the exit status that code
// has in the table (0 ok, 1 operational failure, 2 usage), and one line: on stderr, or with --json an
// {"error":{"code","message"}} object on stdout. toCliError() is the one translation step from what
// the libraries throw (TargetError, SysctlError, SnapshotError, BpfSwitchError, NoSmcError, NetlinkError, errno errors,
// ConfigError, RangeError/TypeError) to that vocabulary; main() applies it to every command, which
// therefore just throw.
import { NoSmcError } from '../api/errors';
import { CgroupError } from '../bpf/cgroup';
import { BpfSwitchError } from '../bpf/switch';
import { ConfigError } from '../config';
import { isSystemError } from '../native';
import { NetlinkError } from '../netlink/socket';
import { TargetError } from '../netns';
import { SnapshotError } from './snapshot';
import { SysctlError } from '../sysctl';
import { SUDO_HINT } from '../permission-hint';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** smc-run's own codes: what each means and its exit status. Errno names not listed here exit 1. */
export const ERROR_CODES = {
  EUSAGE: { exit: EXIT_USAGE, meaning: 'wrong arguments or options' },
  EINVAL: { exit: EXIT_USAGE, meaning: 'a value of the wrong type or form' },
  ERANGE: { exit: EXIT_USAGE, meaning: 'a value outside its range' },
  ENOSYSCTL: { exit: EXIT_USAGE, meaning: 'not a net.smc sysctl of this kernel' },
  EINVALCONFIG: { exit: EXIT_USAGE, meaning: 'a malformed SMC_RUN_* value' },
  ENOSMC: { exit: EXIT_FAILURE, meaning: 'the kernel has no SMC (CONFIG_SMC, smc_diag)' },
  ENOADDON: { exit: EXIT_FAILURE, meaning: "smc-run's native addon cannot load" },
  ENOTSUP: { exit: EXIT_FAILURE, meaning: 'this kernel lacks the feature' },
  EPERM: { exit: EXIT_FAILURE, meaning: 'not permitted (capabilities)' },
  EACCES: { exit: EXIT_FAILURE, meaning: 'not permitted (access)' },
  ENOENT: { exit: EXIT_FAILURE, meaning: 'no such file, namespace or object' },
  ESRCH: { exit: EXIT_FAILURE, meaning: 'no such process' },
  EINTERNAL: { exit: EXIT_FAILURE, meaning: 'a bug in smc-run: please report it' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const exitCodeOf = (code: string): number => (ERROR_CODES as Record<string, { exit: number }>)[code]?.exit ?? EXIT_FAILURE;

export class CliError extends Error {
  readonly exitCode: number;
  constructor(
    readonly code: string,
    message: string,
    /** only where one code means different things (a value the kernel refused: EINVAL but exit 1) */
    exitCode?: number,
  ) {
    super(message);
    this.exitCode = exitCode ?? exitCodeOf(code);
  }
}

export const usageError = (message: string): CliError => new CliError('EUSAGE', message);

/** A permission failure's message with the privilege hint, unless it already names one. */
function withPermissionHint(code: string, message: string): string {
  return message.includes('root') || message.includes('CAP_') ? message : `${message}: not permitted (${SUDO_HINT})`;
}

/** Maps any thrown value to a CliError: the one translation step applied to every command. */
export function toCliError(e: unknown): CliError {
  if (e instanceof CliError) return e;
  // EINVAL from a target is a path that exists but is no network namespace: the system's answer (exit 1)
  if (e instanceof TargetError) return new CliError(e.code, e.message, e.code === 'EINVAL' ? EXIT_FAILURE : undefined);
  if (e instanceof SysctlError) return new CliError(e.code, e.message, e.isUsage ? EXIT_USAGE : EXIT_FAILURE);
  if (e instanceof SnapshotError) return new CliError(e.code, e.message, EXIT_FAILURE);
  if (e instanceof BpfSwitchError || e instanceof CgroupError) return new CliError(e.code, e.message, e.isUsage ? EXIT_USAGE : EXIT_FAILURE);
  if (e instanceof NoSmcError || e instanceof ConfigError) return new CliError(e.code, e.message);
  if (e instanceof NetlinkError) {
    // a netlink family or sock_diag handler that does not exist: this kernel has no SMC
    if (e.code === 'ENOENT' || e.code === 'EPROTONOSUPPORT') {
      return new CliError('ENOSMC', `no SMC in this kernel (${e.message}); SMC needs CONFIG_SMC (try: modprobe smc smc_diag)`);
    }
    if (e.code === 'EPERM' || e.code === 'EACCES') return new CliError(e.code, withPermissionHint(e.code, `${e.message}: changing this needs CAP_NET_ADMIN`));
    return new CliError(e.code, e.message, EXIT_FAILURE);
  }
  if (e instanceof RangeError || e instanceof TypeError) return new CliError('EINVAL', e.message);
  if (isSystemError(e)) {
    if (e.code === 'EPERM' || e.code === 'EACCES') return new CliError(e.code, withPermissionHint(e.code, e.message));
    return new CliError(e.code, e.message, EXIT_FAILURE);
  }
  return new CliError('EINTERNAL', e instanceof Error ? e.message : String(e));
}

export function reportError(err: CliError, json: boolean): number {
  const message = err.message.replace(/\s*\n\s*/g, ' ');
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: err.code, message } })}\n`);
  else process.stderr.write(`smc-run: ${message}\n`);
  return err.exitCode;
}
