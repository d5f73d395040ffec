// sock_diag for AF_SMC (what smcss reads): request building and reply parsing. Layouts from
// include/uapi/linux/smc_diag.h and inet_diag.h; every field is bounds-checked. Integers are in the host's
// byte order (host-order.ts); ports and addresses in network order; GIDs of RoCE links are raw bytes.
import { putU32, u16, u32, u64 } from './host-order';
import { AF_INET, AF_INET6, AF_SMC, NETLINK_SOCK_DIAG } from '../constants';
import { Attrs, NetlinkParseError, NLM_F_DUMP, NLM_F_REQUEST, readString } from './message';
import { NetlinkSocket } from './socket';

export const SOCK_DIAG_BY_FAMILY = 20;
export const SMC_DIAG_CONNINFO = 1;
export const SMC_DIAG_LGRINFO = 2;
export const SMC_DIAG_SHUTDOWN = 3;
export const SMC_DIAG_DMBINFO = 4;
export const SMC_DIAG_FALLBACK = 5;

const SOCKID_LEN = 48;
const SMC_DIAG_MSG_LEN = 64;
// struct smc_diag_msg: family, state, mode, shutdown (a byte each), then these
const SMC_DIAG_ID_OFFSET = 4;
const SMC_DIAG_UID_OFFSET = SMC_DIAG_ID_OFFSET + SOCKID_LEN;
/** smc_diag_msg.diag_inode: a host-order u64 */
const SMC_DIAG_INODE_OFFSET = SMC_DIAG_UID_OFFSET + 4;
const CONNINFO_LEN = 76;
const LINKINFO_LEN = 146;
const IB_DEVICE_NAME_MAX = 64;

export type DiagMode = 'smcr' | 'fallback' | 'smcd' | 'unknown';
const MODES: Record<number, DiagMode> = { 0: 'smcr', 1: 'fallback', 2: 'smcd' };

export const SMC_STATES: Record<number, string> = {
  1: 'ACTIVE', 2: 'INIT', 7: 'CLOSED', 10: 'LISTEN',
  20: 'PEERCLOSEWAIT1', 21: 'PEERCLOSEWAIT2', 22: 'APPCLOSEWAIT1', 23: 'APPCLOSEWAIT2',
  24: 'APPFINCLOSEWAIT', 25: 'PEERFINCLOSEWAIT', 26: 'PEERABORTWAIT', 27: 'PROCESSABORT',
};

export interface SockId {
  sport: number;
  dport: number;
  /** the 16 raw address bytes each; decoded once the family is known */
  src: Buffer;
  dst: Buffer;
  ifindex: number;
  cookie: bigint;
}

export interface Cursor {
  wrap: number;
  count: number;
}

export interface ConnInfo {
  token: number;
  sndbufSize: number;
  rmbeSize: number;
  peerRmbeSize: number;
  rxProd: Cursor;
  rxCons: Cursor;
  txProd: Cursor;
  txCons: Cursor;
  rxProdFlags: number;
  rxConnStateFlags: number;
  txProdFlags: number;
  txConnStateFlags: number;
  txPrep: Cursor;
  txSent: Cursor;
  txFin: Cursor;
}

export interface LinkInfo {
  linkId: number;
  ibDevice: string;
  ibPort: number;
  gid: string;
  peerGid: string;
}

export interface LgrInfo {
  link: LinkInfo;
  role: 'client' | 'server';
}

export interface DmbInfo {
  linkId: number;
  peerGid: string;
  myGid: string;
  token: string;
  peerToken: string;
  /** extended GIDs (56-byte layout, kernels with virtual ISM) */
  peerGidExt: string | undefined;
  myGidExt: string | undefined;
}

export interface SmcDiagRow {
  family: number;
  state: string;
  stateCode: number;
  mode: DiagMode;
  modeCode: number;
  shutdown: number;
  id: SockId;
  uid: number;
  inode: bigint;
  conninfo: ConnInfo | undefined;
  lgrinfo: LgrInfo | undefined;
  dmbinfo: DmbInfo | undefined;
  shutdownAttr: number | undefined;
  fallback: { reason: number; peerDiagnosis: number } | undefined;
}

/** A dump request for all SMC sockets with the extensions asked for (bit per SMC_DIAG_* attribute). */
export function buildSmcDiagRequest(ext = allExtensions()): Buffer {
  const req = Buffer.alloc(4 + SOCKID_LEN);
  req.writeUInt8(AF_SMC, 0);
  req.writeUInt8(ext, 3);
  // a dump matches every socket; the id carries no filter (cookie "none" = all ones)
  putU32(req, 0xffffffff, 4 + 40);
  putU32(req, 0xffffffff, 4 + 44);
  return req;
}

export function allExtensions(): number {
  return (1 << (SMC_DIAG_CONNINFO - 1)) | (1 << (SMC_DIAG_LGRINFO - 1)) | (1 << (SMC_DIAG_DMBINFO - 1));
}

export function parseSockId(b: Buffer, off: number): SockId {
  return {
    sport: b.readUInt16BE(off),
    dport: b.readUInt16BE(off + 2),
    src: Buffer.from(b.subarray(off + 4, off + 20)),
    dst: Buffer.from(b.subarray(off + 20, off + 36)),
    ifindex: u32(b, off + 36),
    // two host-order u32 halves, low one first (sock_diag_save_cookie)
    cookie: (BigInt(u32(b, off + 44)) << 32n) | BigInt(u32(b, off + 40)),
  };
}

const cursor = (b: Buffer, off: number): Cursor => ({ wrap: u16(b, off + 2), count: u32(b, off + 4) });

export function parseConnInfo(d: Buffer): ConnInfo {
  if (d.length < CONNINFO_LEN) throw new NetlinkParseError(`SMC_DIAG_CONNINFO: ${d.length} bytes, need ${CONNINFO_LEN}`);
  return {
    token: u32(d, 0),
    sndbufSize: u32(d, 4),
    rmbeSize: u32(d, 8),
    peerRmbeSize: u32(d, 12),
    rxProd: cursor(d, 16),
    rxCons: cursor(d, 24),
    txProd: cursor(d, 32),
    txCons: cursor(d, 40),
    rxProdFlags: d.readUInt8(48),
    rxConnStateFlags: d.readUInt8(49),
    txProdFlags: d.readUInt8(50),
    txConnStateFlags: d.readUInt8(51),
    txPrep: cursor(d, 52),
    txSent: cursor(d, 60),
    txFin: cursor(d, 68),
  };
}

/** A GID as the kernel stores it for RoCE: 16 bytes shown as an IPv6-style address. */
function gidText(raw: Buffer): string {
  const s = readString(raw);
  if (s !== '' && /^[\x20-\x7e]+$/.test(s)) return s; // some kernels store text
  const b = raw.subarray(0, 16);
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(b.readUInt16BE(i).toString(16).padStart(4, '0'));
  return groups.join(':');
}

export function parseLgrInfo(d: Buffer): LgrInfo {
  if (d.length < LINKINFO_LEN + 1) throw new NetlinkParseError(`SMC_DIAG_LGRINFO: ${d.length} bytes, need ${LINKINFO_LEN + 1}`);
  return {
    link: {
      linkId: d.readUInt8(0),
      ibDevice: readString(d.subarray(1, 1 + IB_DEVICE_NAME_MAX)),
      ibPort: d.readUInt8(1 + IB_DEVICE_NAME_MAX),
      gid: gidText(d.subarray(66, 106)),
      peerGid: gidText(d.subarray(106, 146)),
    },
    role: d.readUInt8(LINKINFO_LEN) === 0 ? 'client' : 'server',
  };
}

const hex64 = (d: Buffer, off: number): string => `0x${u64(d, off).toString(16)}`;

export function parseDmbInfo(d: Buffer): DmbInfo {
  if (d.length < 40) throw new NetlinkParseError(`SMC_DIAG_DMBINFO: ${d.length} bytes, need 40 or 56`);
  const ext = d.length >= 56;
  return {
    linkId: u32(d, 0),
    peerGid: hex64(d, 8),
    myGid: hex64(d, 16),
    token: hex64(d, 24),
    peerToken: hex64(d, 32),
    peerGidExt: ext ? hex64(d, 40) : undefined,
    myGidExt: ext ? hex64(d, 48) : undefined,
  };
}

/** One smc_diag_msg with its attributes. */
export function parseSmcDiagMessage(payload: Buffer): SmcDiagRow {
  if (payload.length < SMC_DIAG_MSG_LEN) {
    throw new NetlinkParseError(`smc_diag_msg: ${payload.length} bytes, need ${SMC_DIAG_MSG_LEN}`);
  }
  const attrs = Attrs.parse(payload.subarray(SMC_DIAG_MSG_LEN));
  const stateCode = payload.readUInt8(1);
  const modeCode = payload.readUInt8(2);
  const fb = attrs.map.get(SMC_DIAG_FALLBACK);
  if (fb !== undefined && fb.length < 8) throw new NetlinkParseError(`SMC_DIAG_FALLBACK: ${fb.length} bytes, need 8`);
  const conn = attrs.map.get(SMC_DIAG_CONNINFO);
  const lgr = attrs.map.get(SMC_DIAG_LGRINFO);
  const dmb = attrs.map.get(SMC_DIAG_DMBINFO);
  return {
    family: payload.readUInt8(0),
    state: SMC_STATES[stateCode] ?? `STATE_${stateCode}`,
    stateCode,
    mode: MODES[modeCode] ?? 'unknown',
    modeCode,
    shutdown: payload.readUInt8(3),
    id: parseSockId(payload, SMC_DIAG_ID_OFFSET),
    uid: u32(payload, SMC_DIAG_UID_OFFSET),
    inode: u64(payload, SMC_DIAG_INODE_OFFSET),
    conninfo: conn === undefined ? undefined : parseConnInfo(conn),
    lgrinfo: lgr === undefined ? undefined : parseLgrInfo(lgr),
    dmbinfo: dmb === undefined ? undefined : parseDmbInfo(dmb),
    shutdownAttr: attrs.u8(SMC_DIAG_SHUTDOWN),
    fallback: fb === undefined ? undefined : { reason: u32(fb, 0), peerDiagnosis: u32(fb, 4) },
  };
}

/** Dumps every SMC socket of the socket's network namespace. */
export function dumpSmcSockets(nl: NetlinkSocket, ext = allExtensions()): SmcDiagRow[] {
  return nl
    .request(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildSmcDiagRequest(ext), 'SMC sock_diag dump')
    .filter((m) => m.type === SOCK_DIAG_BY_FAMILY)
    .map((m) => parseSmcDiagMessage(m.payload));
}

/**
 * The row of one socket, found by inode without parsing the others: the kernel has no filter for
 * SMC dumps, so this keeps a per-socket lookup cheap (one dump, one parse).
 */
export function findSmcSocketByInode(nl: NetlinkSocket, inode: bigint, ext = allExtensions()): SmcDiagRow | undefined {
  const msgs = nl.request(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildSmcDiagRequest(ext), 'SMC sock_diag dump');
  for (const m of msgs) {
    if (m.type !== SOCK_DIAG_BY_FAMILY || m.payload.length < SMC_DIAG_MSG_LEN) continue;
    if (u64(m.payload, SMC_DIAG_INODE_OFFSET) === inode) return parseSmcDiagMessage(m.payload);
  }
  return undefined;
}

/** The raw dump (smc_diag_msg payloads), received off the main thread. */
export async function dumpSmcMessagesAsync(nl: NetlinkSocket, ext = allExtensions()): Promise<Buffer[]> {
  const msgs = await nl.requestAsync(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildSmcDiagRequest(ext), 'SMC sock_diag dump');
  return msgs.filter((m) => m.type === SOCK_DIAG_BY_FAMILY).map((m) => m.payload);
}

/**
 * The rows of the given inodes only, from one dump received off the main thread: each datagram's other
 * rows are dropped as it arrives (reading their inode field only), so a lookup of a few sockets among
 * thousands keeps and parses those few.
 */
export async function findSmcMessagesAsync(nl: NetlinkSocket, inodes: readonly bigint[], ext = allExtensions()): Promise<Map<bigint, Buffer>> {
  const filter = { type: SOCK_DIAG_BY_FAMILY, offset: SMC_DIAG_INODE_OFFSET, keys: BigUint64Array.from(inodes) };
  const msgs = await nl.requestAsync(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildSmcDiagRequest(ext), 'SMC sock_diag dump', filter);
  return payloadsByInode(msgs.filter((m) => m.type === SOCK_DIAG_BY_FAMILY).map((m) => m.payload));
}

/** Payloads by inode, reading nothing but the inode field: callers parse only the rows they need. */
export function payloadsByInode(payloads: readonly Buffer[]): Map<bigint, Buffer> {
  const out = new Map<bigint, Buffer>();
  for (const p of payloads) if (p.length >= SMC_DIAG_MSG_LEN) out.set(u64(p, SMC_DIAG_INODE_OFFSET), p);
  return out;
}

export function openSockDiag(netnsPath?: string): NetlinkSocket {
  return NetlinkSocket.open(NETLINK_SOCK_DIAG, netnsPath);
}

export const openSockDiagAsync = (netnsPath?: string): Promise<NetlinkSocket> => NetlinkSocket.openAsync(NETLINK_SOCK_DIAG, netnsPath);

/** Address text for 16 sock_diag address bytes in the given family. */
export function addressText(raw: Buffer, family: number): string {
  if (family === AF_INET) return `${raw[0]}.${raw[1]}.${raw[2]}.${raw[3]}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(raw.readUInt16BE(i).toString(16));
  // compress the longest run of zero groups, as inet_ntop does
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const isV4Mapped = best === 0 && bestLen === 5 && groups[5] === 'ffff';
  if (isV4Mapped) return `::ffff:${raw[12]}.${raw[13]}.${raw[14]}.${raw[15]}`;
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/**
 * sock_diag reports diag_family 43 for IPv4 and IPv6 SMC sockets alike; an IPv4 address fills only the
 * first 4 of the 16 bytes. Used when the real family is not known from elsewhere.
 */
export function guessFamily(id: SockId): number {
  const tailZero = (b: Buffer): boolean => b.subarray(4).every((x) => x === 0);
  return tailZero(id.src) && tailZero(id.dst) ? AF_INET : AF_INET6;
}
