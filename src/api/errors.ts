// Errors that say what is wrong with the system, not with the call.
import { NetlinkError } from '../netlink/socket';
import { SUDO_HINT } from '../permission-hint';

export class NoSmcError extends Error {
  readonly code = 'ENOSMC';
}

/** ENOENT from resolving SMC_GEN_NETLINK or from sock_diag means this kernel has no SMC. */
export function noSmcError(e: unknown): unknown {
  if (e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EPROTONOSUPPORT')) {
    return new NoSmcError(`no SMC in this kernel (${e.message}); SMC needs CONFIG_SMC (try: modprobe smc smc_diag)`);
  }
  if (e instanceof NetlinkError && e.code === 'EPERM') {
    const err = new NetlinkError(e.errno, 'EPERM', `${e.message}: changing this needs CAP_NET_ADMIN (${SUDO_HINT})`);
    return err;
  }
  return e;
}
