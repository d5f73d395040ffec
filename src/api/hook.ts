// The hook from the program's side: opting in without the launcher, what the hook did, and whether a
// socket was made an SMC socket.
import type * as net from 'node:net';
import { readConfig, type ProtoMode, type ShimConfig } from '../config';
import { enableFromConfig, type EnableResult } from '../hook/enable';
import { hookState, wasCreatedAsSmc } from '../hook/install';
import { newStats, type HookStats } from '../hook/stats';
import { bindingPrototype, isArmed } from '../hook/lazy';
import { loadAddon } from '../native';
import { parseRules } from '../policy/rules';
import { parseSocketBufferSize } from '../units';
import { kernelReportsSmc } from './smc-socket';

export interface EnableOptions {
  /** CIDR[:port] rules: only these use SMC */
  include?: string[];
  /** CIDR[:port] rules: these stay TCP (wins over include) */
  exclude?: string[];
  proto?: ProtoMode;
  /** SO_SNDBUF / SO_RCVBUF per SMC socket: bytes or "1M" */
  sndbuf?: number | string;
  rcvbuf?: number | string;
  debug?: boolean;
  /** retry a connect whose SMC handshake failed once over plain TCP (default true; SMC_RUN_TCP_RETRY=0) */
  tcpRetry?: boolean;
}

const size = (v: number | string | undefined): number | undefined => (v === undefined ? undefined : parseSocketBufferSize(v));

/**
 * Opt in without the launcher: from now on every TCP socket this thread creates is an SMC socket.
 * Options not given come from SMC_RUN_* variables. Returns what was enabled (never throws for a
 * kernel without SMC: `enabled` is false and `reason` says why, as the launcher's notice does).
 * A malformed option throws before anything is enabled: a buffer size above 1073741823 bytes (what
 * SO_SNDBUF/SO_RCVBUF can take) is a RangeError.
 */
export function enableSmc(options: EnableOptions = {}): EnableResult {
  const base = readConfig();
  const config: ShimConfig = {
    ...base,
    disabled: false,
    debug: options.debug ?? base.debug,
    include: options.include ? parseRules(options.include.join(',')) : base.include,
    exclude: options.exclude ? parseRules(options.exclude.join(',')) : base.exclude,
    proto: options.proto ?? base.proto,
    sndbuf: size(options.sndbuf) ?? base.sndbuf,
    rcvbuf: size(options.rcvbuf) ?? base.rcvbuf,
    tcpRetry: options.tcpRetry ?? base.tcpRetry,
  };
  return enableFromConfig(config);
}

/**
 * What the hook did in this thread, or undefined when it is not installed. The preload's hook waits
 * for the thread's first TCP handle operation to start: until then it counts as installed, with zeros.
 */
export function hookStats(): HookStats | undefined {
  const s = hookState();
  if (s) return { ...s.stats, byOp: { ...s.stats.byOp } };
  const proto = bindingPrototype();
  return proto && isArmed(proto) ? newStats() : undefined;
}

/**
 * True when this socket was created as an SMC socket: by smc-run's hook in this thread, or accepted
 * from / still reported as an SMC socket by the kernel (SO_DOMAIN AF_SMC or SO_PROTOCOL IPPROTO_SMC).
 * It does not say that data moves over SMC: after a fallback to TCP the kernel reports AF_INET for an
 * accepted socket, and a socket smc-run created stays "created as SMC" (until the TCP retry or the policy at
 * connect puts a plain TCP socket under the handle: then false). getSmcInfo() gives the live
 * mode and the fallback reason. Without the native addon (not built, or refused by `node --permission`)
 * it answers false, never throws: no socket of this process can then have been made an SMC socket, and
 * the kernel cannot be asked about accepted ones (getSmcInfo() throws ENOADDON there).
 */
export function isSmcSocket(socket: net.Socket | net.Server): boolean {
  const handle = (socket as unknown as { _handle?: { fd?: number } | null })._handle;
  if (handle && wasCreatedAsSmc(handle)) return true;
  const fd = handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return false;
  const loaded = loadAddon();
  return loaded.ok && kernelReportsSmc(fd, loaded.addon);
}
