// Per-connection SMC state: sock_diag rows turned into the public SmcSocketInfo, looked up for one
// Node socket by inode (fstat of its fd), or listed for a whole namespace.
import type * as net from 'node:net';
import { AF_INET, AF_INET6 } from '../constants';
import { addon } from '../native';
import { explainNetnsError, openNetns, withNetns, type NamespaceTarget } from '../netns';
import { NetlinkSocket } from '../netlink/socket';
import { addressText, dumpSmcSockets, findSmcSocketByInode, guessFamily, openSockDiag, openSockDiagAsync, type Cursor, type SmcDiagRow } from '../netlink/sockdiag';
import { dumpTcpSockets } from '../netlink/inet-diag';
import { fallbackReason } from './fallback-reasons';
import { lacksAddresses, withTcpAddresses } from './tcp-addresses';

/**
 * smcd / smcr: data moves over SMC-D / SMC-R; fallback: an SMC socket that fell back to TCP (see
 * `fallback` for why); none: an SMC socket with no SMC connection in place, because its handshake is
 * still running (state INIT) or its connection was released as it closes (state CLOSED); tcp: not an
 * SMC socket at all; listening: an SMC listener (nothing negotiated).
 */
export type SmcMode = 'smcr' | 'smcd' | 'fallback' | 'none' | 'tcp' | 'listening';

export interface SmcFallbackInfo {
  code: number;
  name: string;
  description: string;
  fix: string | null;
  peerCode: number;
  peerName: string | null;
  peerDescription: string | null;
}

export interface SmcSocketInfo {
  mode: SmcMode;
  fallback: SmcFallbackInfo | null;
  state: string;
  listening: boolean;
  shutdown: { read: boolean; write: boolean };
  family: 'IPv4' | 'IPv6' | 'unknown';
  local: { address: string; port: number };
  remote: { address: string; port: number };
  buffers: { sndbuf: number; rmbe: number; peerRmbe: number } | null;
  cursors: {
    rxProd: Cursor; rxCons: Cursor; txProd: Cursor; txCons: Cursor;
    txPrep: Cursor; txSent: Cursor; txFin: Cursor;
  } | null;
  /**
   * bytes moved, from the cursors (exact until the 16-bit wrap counter wraps): sent = our producer
   * cursor in the peer's buffer, received = the peer's producer cursor in ours
   */
  bytes: { sent: number; received: number } | null;
  token: number | null;
  linkGroup: { role: 'client' | 'server'; linkId: number; ibDevice: string; ibPort: number; gid: string; peerGid: string } | null;
  dmb: { linkId: number; token: string; peerToken: string; gid: string; peerGid: string } | null;
  inode: number;
  uid: number;
}

const RCV_SHUTDOWN = 1;
const SEND_SHUTDOWN = 2;

/** Converts a sock_diag row; `family` is the socket's real family where known (diag says 43 for both). */
export function toSocketInfo(row: SmcDiagRow, family?: number): SmcSocketInfo {
  const listening = row.state === 'LISTEN';
  const fam = family ?? guessFamily(row.id);
  const wildcard = row.id.src.every((b) => b === 0) && row.id.dst.every((b) => b === 0);
  const addr = (raw: Buffer): string => (family === undefined && wildcard ? '*' : addressText(raw, fam));
  // The kernel's mode field says SMC-R for every socket whose connection is not registered in a link
  // group (smc_diag.c), and only a registered connection has CONNINFO (every caller asks for it): an
  // "SMC-R" row without it is a handshake in progress or a released connection, on SMC-D systems too.
  // A listener's mode field is meaningless (no connection negotiated anything).
  let mode: SmcMode = row.mode === 'smcr' ? (row.conninfo ? 'smcr' : 'none') : row.mode === 'smcd' ? 'smcd' : 'fallback';
  let fallback: SmcFallbackInfo | null = null;
  if (row.mode === 'fallback' && row.fallback) {
    const r = fallbackReason(row.fallback.reason);
    const p = row.fallback.peerDiagnosis ? fallbackReason(row.fallback.peerDiagnosis) : undefined;
    fallback = {
      code: r.code, name: r.name, description: r.description, fix: p?.fix ?? r.fix ?? null,
      peerCode: row.fallback.peerDiagnosis, peerName: p?.name ?? null, peerDescription: p?.description ?? null,
    };
  }
  if (listening) mode = 'listening';
  const c = row.conninfo;
  const smcActive = c !== undefined && mode !== 'fallback';
  return {
    mode,
    fallback,
    state: row.state,
    listening,
    shutdown: { read: (row.shutdown & RCV_SHUTDOWN) !== 0, write: (row.shutdown & SEND_SHUTDOWN) !== 0 },
    family: family === undefined && wildcard ? 'unknown' : fam === AF_INET6 ? 'IPv6' : 'IPv4',
    local: { address: addr(row.id.src), port: row.id.sport },
    remote: { address: addr(row.id.dst), port: row.id.dport },
    buffers: smcActive ? { sndbuf: c.sndbufSize, rmbe: c.rmbeSize, peerRmbe: c.peerRmbeSize } : null,
    cursors: smcActive
      ? { rxProd: c.rxProd, rxCons: c.rxCons, txProd: c.txProd, txCons: c.txCons, txPrep: c.txPrep, txSent: c.txSent, txFin: c.txFin }
      : null,
    bytes: smcActive
      ? { sent: c.txProd.wrap * c.peerRmbeSize + c.txProd.count, received: c.rxProd.wrap * c.rmbeSize + c.rxProd.count }
      : null,
    token: smcActive ? c.token : null,
    linkGroup: row.lgrinfo && mode === 'smcr' ? { role: row.lgrinfo.role, ...row.lgrinfo.link } : null,
    dmb: row.dmbinfo && mode === 'smcd'
      ? { linkId: row.dmbinfo.linkId, token: row.dmbinfo.token, peerToken: row.dmbinfo.peerToken, gid: row.dmbinfo.myGid, peerGid: row.dmbinfo.peerGid }
      : null,
    inode: Number(row.inode),
    uid: row.uid,
  };
}

export interface SmcSocketRow extends SmcSocketInfo {
  /** processes holding the socket (filled by listSmcSockets with owners: true) */
  owners?: { pid: number; command: string }[];
}

/** A sock_diag socket in the caller's or the target's namespace, with namespace errors explained. */
export function openSockDiagFor(target: NamespaceTarget): NetlinkSocket {
  // the netlink socket belongs to the namespace it was opened in: the handle is not needed after
  return withNetns(target, (ns) => {
    try {
      return openSockDiag(ns?.path);
    } catch (e) {
      throw explainNetnsError(e, ns);
    }
  });
}

/** openSockDiagFor for the promise API: a socket in another namespace is opened off the main thread. */
export async function openSockDiagForAsync(target: NamespaceTarget): Promise<NetlinkSocket> {
  const ns = openNetns(target);
  try {
    return await openSockDiagAsync(ns?.path);
  } catch (e) {
    throw explainNetnsError(e, ns);
  } finally {
    ns?.close();
  }
}

/**
 * Every SMC socket (listening, connected, closing) of the caller's or the target's namespace. Rows of
 * IPPROTO_SMC sockets get their addresses from the TCP socket below them (tcp-addresses.ts): one more
 * dump, made only when such a row is there.
 */
export function listSmcSockets(opts: NamespaceTarget = {}): SmcSocketInfo[] {
  const nl = openSockDiagFor(opts);
  try {
    const rows = dumpSmcSockets(nl);
    const tcp = rows.some(lacksAddresses) ? dumpTcpSockets(nl) : [];
    return withTcpAddresses(rows, tcp).map(({ row, family }) => toSocketInfo(row, family));
  } finally {
    nl.close();
  }
}

// One sock_diag socket per thread for getSmcInfo: opening one per call would cost more than the dump.
let diagSocket: NetlinkSocket | undefined;

export function fdOf(socket: net.Socket): number {
  const handle = (socket as unknown as { _handle?: { fd?: number } | null })._handle;
  if (socket.destroyed || !handle) throw new TypeError('getSmcInfo: the socket is destroyed (no file descriptor)');
  const fd = handle.fd;
  if (typeof fd !== 'number' || fd < 0) throw new TypeError('getSmcInfo: the socket has no file descriptor yet (still connecting?)');
  return fd;
}

/**
 * The SMC state of one net.Socket (or tls.TLSSocket): 'smcd' / 'smcr' when data moves over SMC,
 * 'fallback' with the reason when an SMC socket fell back to TCP, 'tcp' when it never was SMC.
 * Blocking: it reads the namespace's whole SMC sock_diag dump on the calling thread (the kernel has no
 * per-socket filter for SMC), about 12 us per SMC socket of the namespace
 * under TCG (bench/REPORT.md). For a server that
 * asks per connection, use the promise twin in `smc-run/promises`, which never blocks the event loop
 * and answers every call of one tick from one dump.
 */
export function getSmcInfo(socket: net.Socket): SmcSocketInfo {
  const fd = fdOf(socket);
  const a = addon();
  const inode = a.fstatInode(fd);
  const family = familyOf(socket);
  // SO_DOMAIN cannot tell (a fallen-back SMC socket reads AF_INET): sock_diag by inode decides
  diagSocket ??= openSockDiagOrUndefined();
  const row = diagSocket ? findByInode(diagSocket, inode) : undefined;
  return row ? withOwnAddresses(toSocketInfo(row, family), row, socket) : tcpInfo(socket, family, inode);
}

/**
 * IPPROTO_SMC sockets (6.11+): the kernel's smc_diag copies addresses only for AF_SMC sockets (its
 * sk_protocol check), so a connected IPPROTO_SMC socket's row has the right ports and zeroed addresses
 * (6.12 and 7.x alike). The socket itself knows them: getsockname/getpeername go to the TCP socket below.
 */
export function withOwnAddresses(info: SmcSocketInfo, row: SmcDiagRow, socket: net.Socket): SmcSocketInfo {
  if (!lacksAddresses(row)) return info;
  return {
    ...info,
    local: { address: socket.localAddress ?? info.local.address, port: info.local.port },
    remote: { address: socket.remoteAddress ?? info.remote.address, port: info.remote.port },
  };
}

/** The socket's IP family (sock_diag reports 43 for IPv4 and IPv6 SMC sockets alike). */
export const familyOf = (socket: net.Socket): number => (socket.remoteFamily === 'IPv6' || socket.localAddress?.includes(':') ? AF_INET6 : AF_INET);

function openSockDiagOrUndefined(): NetlinkSocket | undefined {
  try {
    return openSockDiag();
  } catch {
    return undefined;
  }
}

function findByInode(nl: NetlinkSocket, inode: bigint): SmcDiagRow | undefined {
  try {
    return findSmcSocketByInode(nl, inode);
  } catch (e) {
    // ENOENT: no SMC sock_diag in this kernel (a complete reply); anything else is worth surfacing
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    // the error may have come mid-dump: the socket still holds the rest of it, and the kernel refuses a
    // new dump on it (EBUSY) until that is read, so the next call gets a fresh socket
    if (diagSocket === nl) diagSocket = undefined;
    nl.close();
    throw e;
  }
}

/** What getSmcInfo says of a socket sock_diag does not list: not an SMC socket. */
export function tcpInfo(socket: net.Socket, family: number, inode: bigint): SmcSocketInfo {
  return {
    mode: 'tcp',
    fallback: null,
    state: socket.readyState,
    listening: false,
    shutdown: { read: !socket.readable, write: !socket.writable },
    family: family === AF_INET6 ? 'IPv6' : 'IPv4',
    local: { address: socket.localAddress ?? '', port: socket.localPort ?? 0 },
    remote: { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 },
    buffers: null,
    cursors: null,
    bytes: null,
    token: null,
    linkGroup: null,
    dmb: null,
    inode: Number(inode),
    uid: typeof process.getuid === 'function' ? process.getuid() : 0,
  };
}
