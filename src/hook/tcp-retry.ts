// A client connect whose SMC handshake failed is retried once over plain TCP, before the program sees
// anything. Under a connection burst the server's SMC handshake queue backs up; the client's kernel then
// gives up on the CLC handshake and returns the error to connect() instead of falling back to TCP
// (net/smc/af_smc.c, 6.12: __smc_connect -> smc_connect_clc -> smc_clc_wait_msg times out after
// CLC_WAIT_TIME (6 s), -EAGAIN becomes -ETIMEDOUT, and smc_connect_decline_fallback returns any negative
// reason code as the error, counting it in clnt_hshake_err_cnt). On TCP the connection would have worked.
//
// Mechanics (Node 20/22 lib/net.js, libuv 1.46 src/unix/stream.c, tcp.c, linux.c):
// - net.js sets req.oncomplete (afterConnect, or afterConnectMultiple bound to the happy-eyeballs
//   attempt) before handle.connect(req, address, port); the hooked connect wraps it here.
// - libuv calls it from uv__stream_connect after connect_req = NULL and uv__io_stop(POLLOUT): the handle
//   has no pending connect and, with no read or write started, its watcher has pevents 0, events 0 and
//   is out of loop->watchers (uv__io_stop never calls EPOLL_CTL_DEL: the old fd stays in the epoll set
//   until the kernel drops it). After the callback it only flushes an empty write queue and returns.
// - The retry puts a fresh plain TCP socket under the same fd number (addon.replaceWithTcp: socket +
//   dup3 + close). dup3 closes the SMC socket's file, its last reference, so the kernel removes that
//   file's epoll item (epoll items are keyed by (file, fd)). The new connect's uv__io_start then makes
//   uv__io_poll issue EPOLL_CTL_ADD (w->events == 0) for the new file, which cannot fail with EEXIST;
//   and EPOLL_CTL_MOD, which would fail with ENOENT on a new file and make libuv abort, is never chosen.
//   Replacing the handle instead (a new TCP handle) would break everything that holds the old one:
//   socket._handle is fine to swap, but afterConnect receives the handle libuv calls back with, and TLS
//   (TLSWrap) and http keep their own references to the handle under them.
// - The same handle then connects again with a new request of the same class; its completion is
//   forwarded to whatever the original request's oncomplete is at that time (happy eyeballs clears it
//   when its attempt timer fires), with the original request as argument (error details, address).
import * as os from 'node:os';
import { AF_INET, AF_INET6, IPPROTO_TCP, TCP_INFO, TCP_STATE_CLOSE } from '../constants';
import { isDebug, log } from '../log';
import type { NativeAddon } from '../native';
import { isSystemError } from '../native';
import type { HookState } from './install';
import { unmarkSmc } from './mark';
import { noticeOnce } from './notice';
import { applyOptions, copyOptions } from './swap';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type HandleMethod = (this: any, ...args: unknown[]) => unknown;
type OnComplete = (this: unknown, status: number, handle: unknown, req: unknown, readable: boolean, writable: boolean) => unknown;

interface ConnectReq {
  oncomplete?: OnComplete;
  address?: string;
  port?: number;
  localAddress?: string;
  localPort?: number;
  addressType?: number;
  constructor: new () => ConnectReq;
}

interface RetryHandle {
  readonly fd: number;
}


const E = os.constants.errno as Record<string, number | undefined>;
const uv = (name: string): number => -(E[name] ?? 0);

/**
 * Errors a client SMC connect returns only when its TCP handshake succeeded and the SMC (CLC) handshake
 * after it failed (6.12 af_smc.c / smc_clc.c): ECONNRESET (peer closed the CLC socket: len 0 in
 * smc_clc_wait_msg, or its sk_err), EPROTO (malformed or unexpected CLC message), EPIPE (sending the
 * proposal or confirm failed), ECONNABORTED. A plain TCP connect never reports these for a refused or
 * unreachable peer (that is ECONNREFUSED, EHOSTUNREACH, ENETUNREACH or ETIMEDOUT from SYN_SENT).
 */
const AFTER_TCP_HANDSHAKE = new Set(['ECONNRESET', 'EPROTO', 'EPIPE', 'ECONNABORTED'].map(uv));
const UV_ETIMEDOUT = uv('ETIMEDOUT');

let ownerSymbol: symbol | undefined;
function ownerOf(handle: object): { destroyed?: boolean } | undefined {
  if (!ownerSymbol) {
    ownerSymbol = Object.getOwnPropertySymbols(handle).find((s) => s.description === 'owner_symbol');
    if (!ownerSymbol) return undefined;
  }
  return (handle as Record<symbol, { destroyed?: boolean } | undefined>)[ownerSymbol];
}

/** What TCP_INFO says about the socket's TCP (for an SMC socket: its CLC socket). */
export interface TcpSeen {
  /** tcpi_state */
  state: number;
  /** tcpi_segs_in: segments received, the SYN-ACK included (0 after a SYN timeout) */
  segsIn: number;
}

// struct tcp_info (uapi linux/tcp.h): tcpi_state is byte 0, tcpi_segs_in the u32 at offset 140 (since 4.2)
const TCPI_SEGS_IN = 140;

function tcpSeen(addon: NativeAddon, fd: number): TcpSeen | undefined {
  try {
    const b = addon.getSockOptBytes(fd, IPPROTO_TCP, TCP_INFO, TCPI_SEGS_IN + 4);
    if (b.length < TCPI_SEGS_IN + 4) return undefined;
    const segsIn = os.endianness() === 'LE' ? b.readUInt32LE(TCPI_SEGS_IN) : b.readUInt32BE(TCPI_SEGS_IN);
    return { state: b[0] ?? TCP_STATE_CLOSE, segsIn };
  } catch {
    return undefined;
  }
}

/**
 * Whether a failed SMC connect's status means: TCP worked, the SMC handshake did not. ETIMEDOUT is both
 * the CLC wait (TCP established) and a SYN timeout (no answer at all): the TCP socket tells them apart.
 * Not by its state alone: the CLC socket may have been reset (state CLOSE) between the kernel's timeout
 * and this callback (measured: 26 of 1,196 in a 2,000-connection burst), so a socket that ever received
 * a segment (the SYN-ACK) counts as having had its TCP handshake.
 */
export function isSmcHandshakeFailure(status: number, tcp: TcpSeen | undefined): boolean {
  if (AFTER_TCP_HANDSHAKE.has(status)) return true;
  if (status !== UV_ETIMEDOUT || tcp === undefined) return false;
  return tcp.state !== TCP_STATE_CLOSE || tcp.segsIn > 0;
}

function errName(status: number): string {
  for (const [name, n] of Object.entries(E)) if (n === -status) return name;
  return String(status);
}

const NOTICE =
  'an SMC handshake failed under load and the connection was retried over plain TCP; on the server: a listen ' +
  'backlog above the burst size (server.listen(port, host, 4096); net.core.somaxconn caps it), and ' +
  'net.smc.limit_smc_hs=1; see: smc-run doctor';

/**
 * Called by the hooked connect/connect6 for a handle that got an SMC socket: wraps req.oncomplete so a
 * handshake failure is retried once over plain TCP. `original` is libuv's connect/connect6; `bind` its
 * bind/bind6 (unhooked).
 */
export function armTcpRetry(
  state: HookState,
  addon: NativeAddon,
  handle: RetryHandle,
  op: 'connect' | 'connect6',
  args: unknown[],
  original: HandleMethod,
  bind: HandleMethod | undefined,
): void {
  const req = args[0] as ConnectReq | undefined;
  if (!req || typeof req !== 'object' || typeof req.oncomplete !== 'function') return;
  const { config } = state;
  const fault = config.socketFamily === 'inet' ? config.testConnectFault : undefined;
  if (config.socketFamily !== 'smc' && fault === undefined) return; // test mode: plain TCP already
  const programCb = req.oncomplete;
  const address = args[1];
  const port = args[2];

  const wrapper: OnComplete = function smcRunAfterConnect(this: unknown, status, h, r, readable, writable) {
    const pass = (): unknown => programCb.call(this, status, h, r, readable, writable);
    if (req.oncomplete !== wrapper) return pass(); // replaced since (not by net.js today): leave it alone
    let why: string;
    if (fault !== undefined) {
      // TEST ONLY: treat this completion as a failed SMC handshake
      if (status === 0) status = uv(fault);
      why = `test fault ${fault}`;
    } else {
      if (status === 0 || !isSmcHandshakeFailure(status, tcpSeen(addon, handle.fd))) return pass();
      why = errName(status);
    }
    // the program gave up on this connect itself (destroy, abort signal, its timeout handler): no retry
    if (handle.fd < 0 || ownerOf(handle as object)?.destroyed === true) return pass();
    const fd = handle.fd;
    try {
      const opts = copyOptions(addon, fd);
      addon.replaceWithTcp(fd, op === 'connect6' ? AF_INET6 : AF_INET);
      // isSmcSocket() answers for the socket as it is now
      unmarkSmc(handle);
      applyOptions(addon, fd, opts);
    } catch (e) {
      log.debug(`connect ${String(address)}:${String(port)}: SMC handshake failed (${why}), TCP retry impossible: ${isSystemError(e) ? e.code : String(e)}`);
      return pass();
    }
    const retry = new req.constructor();
    retry.address = req.address;
    retry.port = req.port;
    retry.localAddress = req.localAddress;
    retry.localPort = req.localPort;
    retry.addressType = req.addressType;
    retry.oncomplete = function smcRunAfterTcpRetry(this: unknown, st, h2, _r2, rd2, wr2) {
      // happy eyeballs sets req.oncomplete = undefined when the attempt's timer fires: then say nothing
      const cb = req.oncomplete === wrapper ? programCb : req.oncomplete;
      if (typeof cb === 'function') return cb.call(req, st, h2, req, rd2, wr2);
      return undefined;
    };
    let err = 0;
    if (req.localAddress !== undefined || req.localPort !== undefined) {
      // the program bound the socket (localAddress / localPort): bind the new one the same way
      const localAddress = req.localAddress ?? (op === 'connect6' ? '::' : '0.0.0.0');
      err = bind ? Number(bind.call(handle, localAddress, req.localPort ?? 0, ...(op === 'connect6' ? [0] : []))) : 0;
    }
    if (err === 0) err = Number(original.call(handle, retry, address, port));
    if (err !== 0) {
      // The retry could not even start; the program sees the original error, once. The usual case is a
      // fixed localPort: the failed connection's 4-tuple is still taken (the closed SMC socket's TCP is
      // in FIN_WAIT), so bind succeeds (SO_REUSEADDR) and connect() answers EADDRNOTAVAIL, which would
      // blame the program's port for a failure that was SMC's.
      if (isDebug()) log.debug(`connect ${String(address)}:${String(port)}: SMC handshake failed (${why}); the TCP retry on fd ${fd} could not start (${errName(err)}): the program sees ${errName(status)}`);
      return programCb.call(req, status, h, req, false, false);
    }
    state.stats.tcpRetries++;
    if (isDebug()) log.debug(`connect ${String(address)}:${String(port)}: SMC handshake failed (${why}); retrying over plain TCP on fd ${fd}`);
    noticeOnce(NOTICE, config.session, 'tcp-retry');
    return undefined;
  };
  req.oncomplete = wrapper;
}
