// The hook: patch the libuv TCP handle prototype in place so that every TCP handle Node creates (net,
// http, tls, http2, fetch, cluster, happy eyeballs, listen(handle), localAddress) gets an SMC socket
// from the addon right before libuv would create a plain one. Never replaces the class (net.js,
// _tls_wrap.js and child_process keep references to it) and never throws into the program.
import * as net from 'node:net';
import { AF_INET, AF_INET6, SOL_SOCKET, SO_RCVBUF, SO_SNDBUF } from '../constants';
import type { ShimConfig } from '../config';
import { isDebug, log } from '../log';
import type { NativeAddon } from '../native';
import { firstLine, isSystemError } from '../native';
import { connectTarget, wantsSmc } from '../policy/rules';
import { formatSize } from '../units';
import { type HookStats, newStats } from './stats';
import { handleClassNotice } from './handle-shape';
import { noticeOnce } from './notice';
import { markSmc, markTcpAtBind, smcMark, unmarkSmc, wasCreatedAsSmc, wasTcpAtBind } from './mark';
import { swapBoundSocket } from './swap';
import { armTcpRetry } from './tcp-retry';
import { guardAccept } from './accept-guard';
import type { IpFamily, SocketSpec } from './socket-spec';

/** The parts of Node's internal TCP handle that the hook touches. */
interface TcpHandle {
  readonly fd: number;
  open(fd: number): number;
  getsockname?(out: object): number;
}
type HandleMethod = (this: TcpHandle, ...args: unknown[]) => unknown;

export interface HookState {
  stats: HookStats;
  specs: Record<IpFamily, SocketSpec | undefined>;
  config: ShimConfig;
  /** whether this thread probed the kernel itself or took the result of another thread of the process */
  probe?: 'own' | 'process';
  /** takes the hook out of this thread (handles that behave unlike the ones it was written for) */
  uninstall?: (why: string) => void;
}

const STATE = Symbol.for('smc-run.hook');
const ORIGINALS = Symbol.for('smc-run.originals');
type Global = typeof globalThis & { [STATE]?: HookState };

export function hookState(): HookState | undefined {
  return (globalThis as Global)[STATE];
}

/**
 * The TCP handle class, obtained without process.binding (deprecated, and denied under the permission
 * model): wrap a throw-away AF_INET fd in a net.Socket and read its handle's constructor.
 */
export function tcpHandlePrototype(addon: NativeAddon): Record<string | symbol, unknown> {
  const fd = addon.createSocket(AF_INET, 0);
  let socket: net.Socket | undefined;
  try {
    socket = new net.Socket({ fd, readable: false, writable: false });
    socket.on('error', () => {});
    const handle = (socket as unknown as { _handle?: object })._handle;
    if (!handle) throw new Error('net.Socket({ fd }) has no handle');
    return Object.getPrototypeOf(handle) as Record<string | symbol, unknown>;
  } finally {
    if (socket) socket.destroy();
    else addon.closeFd(fd);
  }
}

// Which (family, policy address) a handle method implies. connect/connect6(req, address, port) match
// the destination; bind/bind6(address, port) the local address; an unbound listen() makes libuv bind
// 0.0.0.0:0, so it is an IPv4 socket.
const METHODS: Record<string, { family: IpFamily; addressArg: number; portArg: number }> = {
  connect: { family: 4, addressArg: 1, portArg: 2 },
  connect6: { family: 6, addressArg: 1, portArg: 2 },
  bind: { family: 4, addressArg: 0, portArg: 1 },
  bind6: { family: 6, addressArg: 0, portArg: 1 },
  listen: { family: 4, addressArg: -1, portArg: -1 },
};

let cappedWarned = false;

export { wasCreatedAsSmc };

function applyBufferSizes(addon: NativeAddon, fd: number, config: ShimConfig): void {
  for (const [want, opt, name, limit] of [
    [config.sndbuf, SO_SNDBUF, 'sndbuf', 'net.core.wmem_max'],
    [config.rcvbuf, SO_RCVBUF, 'rcvbuf', 'net.core.rmem_max'],
  ] as const) {
    if (want === undefined) continue;
    addon.setSockOptInt(fd, SOL_SOCKET, opt, want);
    // the kernel doubles the value it stores (bookkeeping overhead); SMC sizes its buffer from half
    const effective = Math.floor(addon.getSockOptInt(fd, SOL_SOCKET, opt) / 2);
    log.debug(`${name} requested ${formatSize(want)}, effective ${formatSize(effective)}`, { fd });
    if (effective < want && !cappedWarned) {
      cappedWarned = true;
      log.warn(
        `${name} ${formatSize(want)} capped by the kernel at ${formatSize(effective)}; raise it with: sysctl -w ${limit}=${want}`,
      );
    }
  }
}

function adopt(state: HookState, addon: NativeAddon, handle: TcpHandle, op: string, args: unknown[]): void {
  const before = handle.fd;
  if (before !== -1) {
    // already has a socket: a user fd, or bound earlier (localAddress); anything but a number is a Node
    // whose handles say "no socket yet" another way
    if (typeof before !== 'number') state.uninstall?.(`handle.fd is ${before === null ? 'null' : typeof before} before the handle has a socket`);
    return;
  }
  const m = METHODS[op];
  if (!m) return;
  const { stats, config } = state;
  const spec = state.specs[m.family];
  if (!spec) {
    stats.unavailable++;
    return;
  }
  const given = m.addressArg >= 0 ? String(args[m.addressArg]) : '0.0.0.0';
  const address = op === 'connect' || op === 'connect6' ? connectTarget(given) : given;
  const port = m.portArg >= 0 ? Number(args[m.portArg]) || 0 : 0;
  const atBind = op === 'bind' || op === 'bind6';
  if (!wantsSmc(config.include, config.exclude, address, port)) {
    stats.excluded++;
    // a client that binds first (localAddress, localPort) is decided again by its destination at connect
    if (atBind) markTcpAtBind(handle);
    if (isDebug()) log.debug(`${op} ${address}:${port} excluded by policy: plain TCP`);
    return;
  }
  let fd = -1;
  try {
    fd = addon.createSocket(spec.domain, spec.protocol);
    if (config.sndbuf !== undefined || config.rcvbuf !== undefined) applyBufferSizes(addon, fd, config);
    const err = handle.open(fd);
    if (err !== 0) throw new Error(`handle.open failed (${err})`);
  } catch (e) {
    if (fd >= 0) {
      try {
        addon.closeFd(fd);
      } catch {
        /* already closed */
      }
    }
    stats.errors++;
    log.debug(`${op} ${address}:${port}: SMC socket failed, libuv makes a TCP socket: ${isSystemError(e) ? e.code : firstLine(String(e))}`);
    return;
  }
  if (handle.fd !== fd) {
    // the handle took the socket but does not report it: nothing that reads handle.fd (retry, policy at
    // connect, isSmcSocket, getSmcInfo) can be trusted on this Node; the socket stays the handle's
    stats.errors++;
    state.uninstall?.(`handle.fd is ${String(handle.fd)} after open(${fd})`);
    return;
  }
  stats.smc++;
  stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
  markSmc(handle, atBind ? 'bind' : 'open');
  // runs for every connection: build the message only when someone reads it
  if (isDebug()) log.debug(`${op} ${address}:${port} on ${spec.kind} fd ${fd}`);
}

/**
 * A client socket is decided by its destination, also when the program bound it first (localAddress,
 * localPort, happy eyeballs with localPort): then the socket was made at bind, from the local address.
 * Here, before libuv connects, a bound socket the destination's policy decides otherwise is swapped under
 * the same fd (SMC to plain TCP, or plain TCP to SMC), bound again where it was, its options kept.
 * Answers a libuv status: non-zero when the swapped socket could not be bound again (the program sees it
 * as the connect's error).
 */
function redecideAtConnect(state: HookState, addon: NativeAddon, handle: TcpHandle, op: 'connect' | 'connect6', args: unknown[], bind: HandleMethod | undefined): number {
  const { config, stats } = state;
  if (config.include.length === 0 && config.exclude.length === 0) return 0;
  const bound = smcMark(handle) === 'bind';
  if (!bound && !wasTcpAtBind(handle)) return 0;
  if (!bind) return 0;
  const address = connectTarget(String(args[1]));
  const port = Number(args[2]);
  const want = wantsSmc(config.include, config.exclude, address, port);
  const fd = handle.fd;
  const bindOp = op === 'connect6' ? 'bind6' : 'bind';
  if (bound && !want) {
    let err: number;
    try {
      err = swapBoundSocket(addon, handle, op === 'connect6' ? AF_INET6 : AF_INET, 0, bind);
    } catch (e) {
      stats.errors++;
      log.debug(`${op} ${address}:${port} excluded by policy, but the socket made at bind could not become plain TCP: ${isSystemError(e) ? e.code : firstLine(String(e))}`);
      return 0;
    }
    unmarkSmc(handle);
    stats.smc--;
    stats.byOp[bindOp] = (stats.byOp[bindOp] ?? 1) - 1;
    stats.excluded++;
    if (isDebug()) log.debug(`${op} ${address}:${port} excluded by policy at connect: plain TCP on fd ${fd}, bound as before${err ? ` (bind failed: ${err})` : ''}`);
    return err;
  }
  if (!bound && want) {
    const spec = state.specs[op === 'connect6' ? 6 : 4];
    if (!spec) return 0;
    let err: number;
    try {
      err = swapBoundSocket(addon, handle, spec.domain, spec.protocol, bind, (newFd) => {
        if (config.sndbuf !== undefined || config.rcvbuf !== undefined) applyBufferSizes(addon, newFd, config);
      });
    } catch (e) {
      stats.errors++;
      log.debug(`${op} ${address}:${port} wanted by policy, but the TCP socket made at bind could not become SMC: ${isSystemError(e) ? e.code : firstLine(String(e))}`);
      return 0;
    }
    markSmc(handle, 'open');
    stats.excluded--;
    stats.smc++;
    stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
    if (isDebug()) log.debug(`${op} ${address}:${port} wanted by policy at connect: ${spec.kind} fd ${fd}, bound as before${err ? ` (bind failed: ${err})` : ''}`);
    return err;
  }
  return 0;
}
/** A listener on an SMC socket: one connection's failed handshake never reaches the server (accept-guard.ts). */
function guardSmcListener(state: HookState, handle: TcpHandle): void {
  const { stats } = state;
  try {
    guardAccept(handle as TcpHandle & { onconnection?: unknown }, (status) => {
      stats.acceptErrors++;
      if (isDebug()) log.debug(`accept: a connection's SMC handshake failed after it was queued (${status}); the server does not see it`);
    });
  } catch {
    // unguarded: accept errors reach the server as without the shim
  }
}

/**
 * Installs the hook in this thread (once; later calls return the existing state). `prototype` is the TCP
 * handle prototype when the caller has it already (the preload takes it from the binding at start-up);
 * without it, it is captured here, through a throw-away socket.
 */
export function installHook(addon: NativeAddon, config: ShimConfig, specs: HookState['specs'], prototype?: Record<string | symbol, unknown>): HookState {
  const g = globalThis as Global;
  const existing = g[STATE];
  if (existing) return existing;
  const state: HookState = { stats: newStats(), specs, config };
  const proto = prototype ?? tcpHandlePrototype(addon);
  if (!proto[ORIGINALS]) {
    const originals: Record<string, HandleMethod> = {};
    for (const op of Object.keys(METHODS)) {
      const original = proto[op];
      if (typeof original !== 'function') continue;
      originals[op] = original as HandleMethod;
      proto[op] = function smcRunHooked(this: TcpHandle, ...args: unknown[]): unknown {
        const current = g[STATE];
        if (current) {
          try {
            adopt(current, addon, this, op, args);
          } catch {
            // the shim never throws into the program: this socket simply stays TCP
          }
          if (op === 'connect' || op === 'connect6') {
            const bind = originals[op === 'connect' ? 'bind' : 'bind6'];
            let err = 0;
            try {
              err = redecideAtConnect(current, addon, this, op, args, bind);
            } catch {
              // the socket stays as it was made at bind
            }
            if (err !== 0) return err;
            if (current.config.tcpRetry && wasCreatedAsSmc(this)) {
              try {
                armTcpRetry(current, addon, this, op, args, originals[op] as HandleMethod, bind);
              } catch {
                // no retry for this connect; it proceeds as without the shim
              }
            }
          }
          if (op === 'listen' && wasCreatedAsSmc(this)) guardSmcListener(current, this);
        }
        return (originals[op] as HandleMethod).apply(this, args);
      };
    }
    proto[ORIGINALS] = originals;
  }
  state.uninstall = (why: string): void => {
    const originals = proto[ORIGINALS] as Record<string, HandleMethod> | undefined;
    if (originals) for (const [op, fn] of Object.entries(originals)) proto[op] = fn;
    delete proto[ORIGINALS];
    if (g[STATE] === state) delete g[STATE];
    noticeOnce(handleClassNotice(why), state.config.session);
  };
  g[STATE] = state;
  return state;
}
