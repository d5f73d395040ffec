// The ways a net.smc sysctl request can be wrong, each with a code a program can switch on. Namespace
// problems stay TargetError (../netns) and a kernel without SMC stays NoSmcError (../api/errors), as in
// every other smc-run API.

export type SysctlErrorCode =
  /** the name is not a net.smc sysctl of this kernel (or not a sysctl name at all) */
  | 'ENOSYSCTL'
  /** smc-run knows the sysctl, but this kernel does not have it (it came in a later kernel, or needs an option) */
  | 'ENOTSUP'
  /** the value is not of the sysctl's type (not an integer, not a size, ...) or the kernel refused it */
  | 'EINVAL'
  /** the value is of the right type but outside the sysctl's range */
  | 'ERANGE'
  /** not permitted: writing needs CAP_NET_ADMIN over the namespace */
  | 'EACCES'
  | 'EPERM';

export class SysctlError extends Error {
  override readonly name = 'SysctlError';
  constructor(
    readonly code: SysctlErrorCode,
    message: string,
    /** the kernel refused a value that passed smc-run's checks (e.g. hs_ctrl naming no loaded controller) */
    readonly fromKernel = false,
  ) {
    super(message);
  }

  /** The caller asked for something wrong (name or value), as opposed to the system refusing it. */
  get isUsage(): boolean {
    return !this.fromKernel && (this.code === 'ENOSYSCTL' || this.code === 'EINVAL' || this.code === 'ERANGE');
  }
}
