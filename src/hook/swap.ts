// Putting another kind of socket under a bound libuv TCP handle, keeping its fd number, its bind (the
// address and port getsockname reports) and the options the program set on it. The swap is dup3
// (addon.replaceSocket): the handle never sees a new fd, and as long as it has no I/O started libuv has
// nothing registered for it (see src/hook/tcp-retry.ts for the epoll reasoning).
import { IPPROTO_IPV6, IPPROTO_TCP, IPV6_V6ONLY, SOL_SOCKET, SO_KEEPALIVE, TCP_KEEPCNT, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_NODELAY } from '../constants';
import type { NativeAddon } from '../native';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HandleMethod = (this: any, ...args: unknown[]) => unknown;

export interface SwapHandle {
  readonly fd: number;
  getsockname?(out: { address?: string; port?: number; family?: string | number }): number;
}

/** libuv's UV_TCP_IPV6ONLY, the flags argument of bind6 */
const UV_TCP_IPV6ONLY = 1;

/** The options a program can set on a socket before it connects (TCP_NODELAY, keepalive): level, name, value. */
export function copyOptions(addon: NativeAddon, fd: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  const read = (level: number, name: number): void => {
    try {
      out.push([level, name, addon.getSockOptInt(fd, level, name)]);
    } catch {
      /* not readable on this socket: libuv's defaults stay */
    }
  };
  read(IPPROTO_TCP, TCP_NODELAY);
  read(SOL_SOCKET, SO_KEEPALIVE);
  if (out.some(([l, n, v]) => l === SOL_SOCKET && n === SO_KEEPALIVE && v !== 0)) {
    read(IPPROTO_TCP, TCP_KEEPIDLE);
    read(IPPROTO_TCP, TCP_KEEPINTVL);
    read(IPPROTO_TCP, TCP_KEEPCNT);
  }
  return out;
}

export function applyOptions(addon: NativeAddon, fd: number, opts: Array<[number, number, number]>): void {
  for (const [level, name, value] of opts) {
    try {
      addon.setSockOptInt(fd, level, name, value);
    } catch {
      /* best effort: the same as a socket libuv made */
    }
  }
}

/**
 * Swaps the bound handle's socket for socket(domain, protocol) and binds the new one where the old one
 * was, through libuv's own bind/bind6 (`bind`, unhooked). `prepare` runs on the new socket before the
 * bind. Throws, with the old socket in place, when nothing was changed; once swapped it answers the
 * rebind's libuv status (0 = bound as before).
 */
export function swapBoundSocket(
  addon: NativeAddon,
  handle: SwapHandle,
  domain: number,
  protocol: number,
  bind: HandleMethod,
  prepare?: (fd: number) => void,
): number {
  const fd = handle.fd;
  const name: { address?: string; port?: number; family?: string | number } = {};
  const err = typeof handle.getsockname === 'function' ? handle.getsockname(name) : -1;
  if (err !== 0 || typeof name.address !== 'string' || typeof name.port !== 'number') throw new Error(`getsockname failed (${err})`);
  const v6 = name.family === 'IPv6' || name.family === 6;
  let v6only = false;
  if (v6) {
    try {
      v6only = addon.getSockOptInt(fd, IPPROTO_IPV6, IPV6_V6ONLY) !== 0;
    } catch {
      /* the default (dual stack), as libuv's bind6 without the flag */
    }
  }
  const opts = copyOptions(addon, fd);
  addon.replaceSocket(fd, domain, protocol);
  if (prepare) {
    try {
      prepare(fd);
    } catch {
      /* sizes are advice: the socket works without them */
    }
  }
  applyOptions(addon, fd, opts);
  return Number(bind.call(handle, name.address, name.port, ...(v6 ? [v6only ? UV_TCP_IPV6ONLY : 0] : [])));
}
