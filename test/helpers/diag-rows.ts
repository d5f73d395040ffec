// A hand-made SMC sock_diag row for the address tests: an SMC-D connection with the given ends.
import type { SmcDiagRow } from '../../src/netlink/sockdiag';

export function smcRow(opts: { family: number; sport: number; dport: number; src?: Buffer; dst?: Buffer; state?: string; inode?: bigint }): SmcDiagRow {
  const state = opts.state ?? 'ACTIVE';
  return {
    family: opts.family, state, stateCode: state === 'LISTEN' ? 10 : 1, mode: 'smcd', modeCode: 2, shutdown: 0,
    id: { sport: opts.sport, dport: opts.dport, src: opts.src ?? Buffer.alloc(16), dst: opts.dst ?? Buffer.alloc(16), ifindex: 0, cookie: 0n },
    uid: 0, inode: opts.inode ?? 7n, conninfo: undefined, lgrinfo: undefined, dmbinfo: undefined, shutdownAttr: undefined, fallback: undefined,
  };
}
