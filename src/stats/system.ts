// System-wide SMC state from the SMC generic netlink family, as typed objects: the per-namespace
// counters (GET_STATS, GET_FBACK_STATS), the devices (GET_DEV_SMCD/SMCR) and the link groups
// (GET_LGR_SMCD, GET_LINK_SMCR). Pure functions over the kernel's messages, so they are tested on
// replies recorded in a real guest (test/fixtures/genl) and fuzzed. Attribute numbers are those of
// include/uapi/linux/smc.h (6.12); attributes newer kernels added are optional here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Attrs, NetlinkParseError } from '../netlink/message';
import type { GenlMessage } from '../netlink/genl';
import { fallbackReason } from './fallback-reasons';

// Top-level attribute of each reply (SMC_GEN_*).
const GEN = { LGR_SMCR: 2, LINK_SMCR: 3, LGR_SMCD: 4, DEV_SMCD: 5, DEV_SMCR: 6, STATS: 7, FBACK_STATS: 8 } as const;

// SMC_NLA_STATS_*: attribute 0 is the padding nla_put_u64_64bit may add, never read.
const STATS = { SMCD_TECH: 1, SMCR_TECH: 2, CLNT_HS_ERR_CNT: 3, SRV_HS_ERR_CNT: 4 } as const;
const TECH = {
  TX_RMB_SIZE: 1, RX_RMB_SIZE: 2, TX_PLOAD_SIZE: 3, RX_PLOAD_SIZE: 4, TX_RMB_STATS: 5, RX_RMB_STATS: 6,
  CLNT_V1_SUCC: 7, CLNT_V2_SUCC: 8, SRV_V1_SUCC: 9, SRV_V2_SUCC: 10, SENDPAGE: 11, SPLICE: 12, CORK: 13,
  NDLY: 14, URG: 15, RX_BYTES: 16, TX_BYTES: 17, RX_CNT: 18, TX_CNT: 19,
  // 6.10+, nla_put_uint: bytes in use in the buffers right now (a level, not a counter)
  RX_RMB_USAGE: 20, TX_RMB_USAGE: 21,
} as const;
const RMB = { SIZE_SM_PEER: 1, SIZE_SM: 2, FULL_PEER: 3, FULL: 4, REUSE: 5, ALLOC: 6, DGRADE: 7 } as const;
const FBACK = { TYPE: 1, SRV_CNT: 2, CLNT_CNT: 3, RSN_CODE: 4, RSN_CNT: 5 } as const;

/** The kernel's size buckets (SMC_NLA_STATS_PLOAD_8K = 1 .. _G_1024K = 9), in order. */
export const SIZE_BUCKETS = ['8K', '16K', '32K', '64K', '128K', '256K', '512K', '1024K', '>1024K'] as const;
export type SizeBucket = (typeof SIZE_BUCKETS)[number];
/**
 * Counts per size bucket. For buffers the bucket is the buffer size; for payloads a bucket counts the
 * sends/receives up to that size (8K: below 8 KiB, 16K: 8..16 KiB, ..., >1024K: 1 MiB and more).
 */
export type SizeHistogram = Record<SizeBucket, number>;

/** Buffer events of one direction (SMC_NLA_STATS_RMB_*). */
export interface BufferCounters {
  /** buffers allocated */
  alloc: number;
  /** buffers reused from the link group's pool (no allocation) */
  reuse: number;
  /** allocations that got a smaller buffer than wanted (memory pressure) */
  downgrade: number;
  /** sends (tx) or receives (rx) that found the own buffer full */
  full: number;
  /** sends that found the peer's receive buffer full */
  peerFull: number;
  /** writes/reads larger than the own buffer */
  sizeSmall: number;
  /** writes larger than the peer's receive buffer */
  peerSizeSmall: number;
}

export interface Directions<T> {
  rx: T;
  tx: T;
}

/** The counters of one SMC technology (SMC-D or SMC-R) in a namespace. */
export interface TechStats {
  /** connections that completed the SMC handshake, by side and SMC version */
  connections: { clientV1: number; clientV2: number; serverV1: number; serverV2: number };
  bytes: Directions<number>;
  /** send / receive calls */
  requests: Directions<number>;
  /** sizes of the buffers created: tx = send buffers, rx = receive buffers (RMBs / DMBs) */
  bufferSize: Directions<SizeHistogram>;
  /** sizes of the sends / receives */
  payloadSize: Directions<SizeHistogram>;
  buffers: Directions<BufferCounters>;
  /** calls that change how data is sent */
  calls: { cork: number; nodelay: number; splice: number; sendpage: number; urgent: number };
  /** bytes in the buffers now (a level, not a counter; null before kernel 6.10) */
  bufferUsage: Directions<number> | null;
}

export interface FallbackCount {
  code: number;
  name: string;
  description: string;
  fix: string | null;
  /** connections that fell back for this reason (16-bit in the kernel: see FallbackSide.countsWrap) */
  count: number;
}

export interface FallbackSide {
  /** connections that fell back to TCP (exact: 64-bit in the kernel) */
  total: number;
  /**
   * True when the per-reason counts may have wrapped: the kernel keeps them in 16 bits, so once
   * this side has 65536 or more fallbacks they are counts modulo 65536 (the total stays exact).
   */
  countsWrap: boolean;
  /** by count, most frequent first */
  reasons: FallbackCount[];
}

export interface FallbackStats {
  client: FallbackSide;
  server: FallbackSide;
}

/** `smc-run stats system`: the counters of one network namespace since it was created. */
export interface SmcSystemStats {
  smcd: TechStats;
  smcr: TechStats;
  /** SMC handshakes that failed with an error (not a fallback) */
  handshakeErrors: { client: number; server: number };
  fallbacks: FallbackStats;
}

export const FALLBACK_COUNT_WRAP = 0x10000;

function req<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new NetlinkParseError(`${what}: missing in the kernel's reply`);
  return value;
}

/** A 64-bit counter; beyond 2^53 it could not be exact as a number, and no real counter gets there. */
function counter(a: Attrs, t: number, what: string): number {
  const v = req(a.u64(t), what);
  if (!Number.isSafeInteger(v)) throw new NetlinkParseError(`${what}: implausible counter value ${v}`);
  return v;
}
const nest = (a: Attrs, t: number, what: string): Attrs => req(a.nested(t), what);

function histogram(a: Attrs, what: string): SizeHistogram {
  const h = {} as SizeHistogram;
  SIZE_BUCKETS.forEach((bucket, i) => (h[bucket] = counter(a, i + 1, `${what} ${bucket}`)));
  return h;
}

function bufferCounters(a: Attrs, what: string): BufferCounters {
  return {
    alloc: counter(a, RMB.ALLOC, `${what} alloc`),
    reuse: counter(a, RMB.REUSE, `${what} reuse`),
    downgrade: counter(a, RMB.DGRADE, `${what} downgrade`),
    full: counter(a, RMB.FULL, `${what} full`),
    peerFull: counter(a, RMB.FULL_PEER, `${what} peer full`),
    sizeSmall: counter(a, RMB.SIZE_SM, `${what} size small`),
    peerSizeSmall: counter(a, RMB.SIZE_SM_PEER, `${what} peer size small`),
  };
}

export function parseTechStats(a: Attrs, what: string): TechStats {
  const c = (t: number, name: string): number => counter(a, t, `${what} ${name}`);
  const rxUsage = a.uint(TECH.RX_RMB_USAGE);
  const txUsage = a.uint(TECH.TX_RMB_USAGE);
  return {
    connections: {
      clientV1: c(TECH.CLNT_V1_SUCC, 'client v1'),
      clientV2: c(TECH.CLNT_V2_SUCC, 'client v2'),
      serverV1: c(TECH.SRV_V1_SUCC, 'server v1'),
      serverV2: c(TECH.SRV_V2_SUCC, 'server v2'),
    },
    bytes: { rx: c(TECH.RX_BYTES, 'rx bytes'), tx: c(TECH.TX_BYTES, 'tx bytes') },
    requests: { rx: c(TECH.RX_CNT, 'rx requests'), tx: c(TECH.TX_CNT, 'tx requests') },
    bufferSize: {
      rx: histogram(nest(a, TECH.RX_RMB_SIZE, `${what} rx buffer sizes`), `${what} rx buffer size`),
      tx: histogram(nest(a, TECH.TX_RMB_SIZE, `${what} tx buffer sizes`), `${what} tx buffer size`),
    },
    payloadSize: {
      rx: histogram(nest(a, TECH.RX_PLOAD_SIZE, `${what} rx payload sizes`), `${what} rx payload size`),
      tx: histogram(nest(a, TECH.TX_PLOAD_SIZE, `${what} tx payload sizes`), `${what} tx payload size`),
    },
    buffers: {
      rx: bufferCounters(nest(a, TECH.RX_RMB_STATS, `${what} rx buffer counters`), `${what} rx buffer`),
      tx: bufferCounters(nest(a, TECH.TX_RMB_STATS, `${what} tx buffer counters`), `${what} tx buffer`),
    },
    calls: {
      cork: c(TECH.CORK, 'cork calls'),
      nodelay: c(TECH.NDLY, 'nodelay calls'),
      splice: c(TECH.SPLICE, 'splice calls'),
      sendpage: c(TECH.SENDPAGE, 'sendpage calls'),
      urgent: c(TECH.URG, 'urgent data calls'),
    },
    // both or neither: the kernel added them together
    bufferUsage: rxUsage !== undefined && txUsage !== undefined ? { rx: rxUsage, tx: txUsage } : null,
  };
}

/** GET_STATS: one message with the SMC-D and SMC-R counters and the handshake errors. */
export function parseStats(msgs: readonly GenlMessage[]): Omit<SmcSystemStats, 'fallbacks'> {
  const msg = msgs.find((m) => m.attrs.has(GEN.STATS));
  if (!msg) throw new NetlinkParseError('SMC statistics: the reply has no statistics');
  const s = nest(msg.attrs, GEN.STATS, 'SMC statistics');
  return {
    smcd: parseTechStats(nest(s, STATS.SMCD_TECH, 'SMC-D statistics'), 'SMC-D'),
    smcr: parseTechStats(nest(s, STATS.SMCR_TECH, 'SMC-R statistics'), 'SMC-R'),
    handshakeErrors: {
      client: counter(s, STATS.CLNT_HS_ERR_CNT, 'client handshake errors'),
      server: counter(s, STATS.SRV_HS_ERR_CNT, 'server handshake errors'),
    },
  };
}

export const byCountDesc = (a: FallbackCount, b: FallbackCount): number => b.count - a.count || a.code - b.code;

export function fallbackCount(code: number, count: number): FallbackCount {
  const r = fallbackReason(code);
  return { code, name: r.name, description: r.description, fix: r.fix ?? null, count };
}

/**
 * GET_FBACK_STATS: one message per (side, reason): TYPE (1 = server), RSN_CODE, RSN_CNT (u16), and
 * in the first message of the dump only, the 64-bit totals SRV_CNT / CLNT_CNT. No message at all
 * means no connection of this namespace ever fell back.
 */
export function parseFallbackStats(msgs: readonly GenlMessage[]): FallbackStats {
  let totals: { client: number; server: number } | undefined;
  const reasons: { client: FallbackCount[]; server: FallbackCount[] } = { client: [], server: [] };
  for (const m of msgs) {
    const f = nest(m.attrs, GEN.FBACK_STATS, 'SMC fallback statistics');
    const srv = f.u64(FBACK.SRV_CNT);
    const clnt = f.u64(FBACK.CLNT_CNT);
    if (srv !== undefined || clnt !== undefined) {
      totals = { server: req(srv, 'server fallback total'), client: req(clnt, 'client fallback total') };
    }
    const side = req(f.u8(FBACK.TYPE), 'fallback side') === 1 ? 'server' : 'client';
    const code = req(f.u32(FBACK.RSN_CODE), 'fallback reason code');
    const count = req(f.u16(FBACK.RSN_CNT), 'fallback reason count');
    const list = reasons[side];
    const same = list.find((r) => r.code === code);
    // the kernel keeps one slot per code; a repeat would be a malformed reply, so it is merged
    if (same) same.count += count;
    else list.push(fallbackCount(code, count));
  }
  if (msgs.length > 0 && !totals) throw new NetlinkParseError('SMC fallback statistics: the reply has no totals');
  const side = (total: number, list: FallbackCount[]): FallbackSide => ({
    total,
    countsWrap: total >= FALLBACK_COUNT_WRAP,
    reasons: list.sort(byCountDesc),
  });
  return { client: side(totals?.client ?? 0, reasons.client), server: side(totals?.server ?? 0, reasons.server) };
}

export function parseSystemStats(statsMsgs: readonly GenlMessage[], fallbackMsgs: readonly GenlMessage[]): SmcSystemStats {
  return { ...parseStats(statsMsgs), fallbacks: parseFallbackStats(fallbackMsgs) };
}

// ---- devices ----

const DEV = {
  USE_CNT: 1, IS_CRIT: 2, PCI_FID: 3, PCI_CHID: 4, PCI_VENDOR: 5, PCI_DEVICE: 6, PCI_ID: 7, PORT: 8, PORT2: 9, IB_NAME: 10,
} as const;
const PORT = { PNET_USR: 1, PNETID: 2, NETDEV: 3, STATE: 4, VALID: 5, LNK_CNT: 6 } as const;
// what SMC-R reports for a port is smc_ib_port_active() (net/smc/smc_ib.c, every kernel since 5.11): 1 when
// the port is IB_PORT_ACTIVE, else 0; not the ib_port_state number (which would read 1 as "down")
const SMCR_PORT_STATE: Record<number, string> = { 0: 'inactive', 1: 'active' };

export interface SmcDevicePort {
  port: 1 | 2;
  /** the PNET ID this port belongs to ("" when none) */
  pnetId: string | null;
  /** the PNET ID was set by the user (smc_pnet), not by the firmware */
  pnetIdByUser: boolean | null;
  /** ifindex of the network device the port serves (in the kernel's view; 0 when none) */
  netdevIndex: number | null;
  state: string | null;
  /** SMC can use this port */
  valid: boolean | null;
  /** SMC-R links over this port */
  links: number | null;
}

export interface SmcDevice {
  kind: 'smcd' | 'smcr';
  /** the RDMA device name (SMC-R) */
  name: string | null;
  pciId: string | null;
  pciFid: number | null;
  pciChid: number | null;
  pciVendor: number | null;
  pciDevice: number | null;
  /** link groups (SMC-D) or links (SMC-R) using the device */
  useCount: number | null;
  /** the only device for some of its connections: removing it would break them */
  critical: boolean | null;
  ports: SmcDevicePort[];
}

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
const flag = (v: number | undefined): boolean | null => (v === undefined ? null : v !== 0);

function parsePort(a: Attrs, port: 1 | 2, kind: 'smcd' | 'smcr'): SmcDevicePort {
  const state = a.u8(PORT.STATE);
  return {
    port,
    pnetId: orNull(a.str(PORT.PNETID)?.trim()),
    pnetIdByUser: flag(a.u8(PORT.PNET_USR)),
    netdevIndex: orNull(a.u32(PORT.NETDEV)),
    state: state === undefined ? null : kind === 'smcr' ? (SMCR_PORT_STATE[state] ?? String(state)) : String(state),
    valid: flag(a.u8(PORT.VALID)),
    links: orNull(a.u32(PORT.LNK_CNT)),
  };
}

/** GET_DEV_SMCD / GET_DEV_SMCR: one message per device. */
export function parseDevices(msgs: readonly GenlMessage[], kind: 'smcd' | 'smcr'): SmcDevice[] {
  const top = kind === 'smcd' ? GEN.DEV_SMCD : GEN.DEV_SMCR;
  return msgs.map((m) => {
    const a = nest(m.attrs, top, `${kind === 'smcd' ? 'SMC-D' : 'SMC-R'} device`);
    const ports: SmcDevicePort[] = [];
    const p1 = a.nested(DEV.PORT);
    const p2 = a.nested(DEV.PORT2);
    if (p1) ports.push(parsePort(p1, 1, kind));
    if (p2) ports.push(parsePort(p2, 2, kind));
    return {
      kind,
      name: orNull(a.str(DEV.IB_NAME)),
      pciId: orNull(a.str(DEV.PCI_ID)),
      pciFid: orNull(a.u32(DEV.PCI_FID)),
      pciChid: orNull(a.u16(DEV.PCI_CHID)),
      pciVendor: orNull(a.u16(DEV.PCI_VENDOR)),
      pciDevice: orNull(a.u16(DEV.PCI_DEVICE)),
      useCount: orNull(a.u32(DEV.USE_CNT)),
      critical: flag(a.u8(DEV.IS_CRIT)),
      ports,
    };
  });
}

// ---- link groups ----

const LGR_D = {
  ID: 1, GID: 2, PEER_GID: 3, VLAN_ID: 4, CONNS_NUM: 5, PNETID: 6, CHID: 7, V2_COMMON: 9, EXT_GID: 10, PEER_EXT_GID: 11,
  SNDBUF_ALLOC: 12, DMB_ALLOC: 13,
} as const;
const LGR_R = {
  ID: 1, ROLE: 2, TYPE: 3, PNETID: 4, VLAN_ID: 5, CONNS_NUM: 6, V2_COMMON: 7, V2: 8, NET_COOKIE: 9, BUF_TYPE: 11,
  SNDBUF_ALLOC: 12, RMB_ALLOC: 13,
} as const;
const LGR_R_V2_DIRECT = 1;
// SMC_NLA_LGR_V2_*: this enum starts at 0 (VER), unlike the others
const V2 = { VER: 0, REL: 1, OS: 2, NEG_EID: 3, PEER_HOST: 4 } as const;
const LINK = {
  ID: 1, IB_DEV: 2, IB_PORT: 3, GID: 4, PEER_GID: 5, CONN_CNT: 6, NET_DEV: 7, UID: 8, PEER_UID: 9, STATE: 10,
} as const;

const PEER_OS: Record<number, string> = { 1: 'z/OS', 2: 'Linux', 3: 'AIX' };
const LGR_TYPE: Record<number, string> = { 0: 'none', 1: 'single', 2: 'symmetric', 3: 'asymmetric-peer', 4: 'asymmetric-local' };
const BUF_TYPE: Record<number, string> = { 0: 'physical', 1: 'virtual', 2: 'mixed' };
const LINK_STATE: Record<number, string> = { 0: 'unused', 1: 'inactive', 2: 'activating', 3: 'active' };

const named = (table: Record<number, string>, v: number | undefined): string | null => (v === undefined ? null : (table[v] ?? String(v)));

/** What the peers agreed in an SMCv2 handshake (absent for SMCv1 link groups). */
export interface SmcV2Info {
  version: number | null;
  release: number | null;
  peerOs: string | null;
  peerHost: string | null;
  /** the EID both sides share (a UEID, or the SEID on s390) */
  negotiatedEid: string | null;
}

export interface SmcdLinkGroup {
  id: number;
  gid: string | null;
  /** the upper 64 bits of 128-bit (virtual ISM, loopback-ism) GIDs, 6.8+ */
  gidExt: string | null;
  peerGid: string | null;
  peerGidExt: string | null;
  vlanId: number | null;
  connections: number | null;
  pnetId: string | null;
  chid: number | null;
  /** bytes of send buffers / DMBs the link group holds (6.10+) */
  sndbufBytes: number | null;
  dmbBytes: number | null;
  v2: SmcV2Info | null;
}

export interface SmcrLink {
  id: number | null;
  ibDevice: string | null;
  ibPort: number | null;
  gid: string | null;
  peerGid: string | null;
  connections: number | null;
  netdevIndex: number | null;
  uid: string | null;
  peerUid: string | null;
  state: string | null;
}

export interface SmcrLinkGroup {
  id: number;
  role: 'client' | 'server' | null;
  /** link redundancy: single, symmetric, asymmetric-peer, asymmetric-local, none */
  type: string | null;
  pnetId: string | null;
  vlanId: number | null;
  connections: number | null;
  netCookie: number | null;
  bufferType: string | null;
  sndbufBytes: number | null;
  rmbBytes: number | null;
  /** SMC-Rv2: the peer is reachable without a router (null for v1) */
  direct: boolean | null;
  v2: SmcV2Info | null;
  links: SmcrLink[];
}

function v2Info(a: Attrs | undefined): SmcV2Info | null {
  if (!a) return null;
  return {
    version: orNull(a.u8(V2.VER)),
    release: orNull(a.u8(V2.REL)),
    peerOs: named(PEER_OS, a.u8(V2.OS)),
    peerHost: orNull(a.str(V2.PEER_HOST)?.trim()),
    negotiatedEid: orNull(a.str(V2.NEG_EID)?.trim()),
  };
}

function hex32(v: number | undefined): string | null {
  return v === undefined ? null : `0x${v.toString(16).padStart(8, '0')}`;
}

export function parseSmcdLinkGroups(msgs: readonly GenlMessage[]): SmcdLinkGroup[] {
  return msgs.map((m) => {
    const a = nest(m.attrs, GEN.LGR_SMCD, 'SMC-D link group');
    return {
      id: req(a.u32(LGR_D.ID), 'SMC-D link group id'),
      gid: orNull(a.hex64(LGR_D.GID)),
      gidExt: orNull(a.hex64(LGR_D.EXT_GID)),
      peerGid: orNull(a.hex64(LGR_D.PEER_GID)),
      peerGidExt: orNull(a.hex64(LGR_D.PEER_EXT_GID)),
      vlanId: orNull(a.u8(LGR_D.VLAN_ID)),
      connections: orNull(a.u32(LGR_D.CONNS_NUM)),
      pnetId: orNull(a.str(LGR_D.PNETID)?.trim()),
      chid: orNull(a.unsigned(LGR_D.CHID)), // a u32 on the wire, though smc.h says u16
      sndbufBytes: orNull(a.uint(LGR_D.SNDBUF_ALLOC)),
      dmbBytes: orNull(a.uint(LGR_D.DMB_ALLOC)),
      v2: v2Info(a.nested(LGR_D.V2_COMMON)),
    };
  });
}

function parseSmcrLinkGroup(a: Attrs): SmcrLinkGroup {
  const role = a.u8(LGR_R.ROLE);
  const direct = a.nested(LGR_R.V2)?.u8(LGR_R_V2_DIRECT);
  return {
    id: req(a.u32(LGR_R.ID), 'SMC-R link group id'),
    role: role === undefined ? null : role === 1 ? 'server' : 'client',
    type: named(LGR_TYPE, a.u8(LGR_R.TYPE)),
    pnetId: orNull(a.str(LGR_R.PNETID)?.trim()),
    vlanId: orNull(a.u8(LGR_R.VLAN_ID)),
    connections: orNull(a.u32(LGR_R.CONNS_NUM)),
    netCookie: orNull(a.u64(LGR_R.NET_COOKIE)),
    bufferType: named(BUF_TYPE, a.u8(LGR_R.BUF_TYPE)),
    sndbufBytes: orNull(a.uint(LGR_R.SNDBUF_ALLOC)),
    rmbBytes: orNull(a.uint(LGR_R.RMB_ALLOC)),
    direct: flag(direct),
    v2: v2Info(a.nested(LGR_R.V2_COMMON)),
    links: [],
  };
}

function parseSmcrLink(a: Attrs): SmcrLink {
  return {
    id: orNull(a.u8(LINK.ID)),
    ibDevice: orNull(a.str(LINK.IB_DEV)),
    ibPort: orNull(a.u8(LINK.IB_PORT)),
    gid: orNull(a.str(LINK.GID)),
    peerGid: orNull(a.str(LINK.PEER_GID)),
    connections: orNull(a.u32(LINK.CONN_CNT)),
    netdevIndex: orNull(a.u32(LINK.NET_DEV)),
    uid: hex32(a.u32(LINK.UID)),
    peerUid: hex32(a.u32(LINK.PEER_UID)),
    state: named(LINK_STATE, a.u32(LINK.STATE)),
  };
}

/** GET_LGR_SMCR or GET_LINK_SMCR: link group messages, each followed by its links' messages. */
export function parseSmcrLinkGroups(msgs: readonly GenlMessage[]): SmcrLinkGroup[] {
  const out: SmcrLinkGroup[] = [];
  for (const m of msgs) {
    const lgr = m.attrs.nested(GEN.LGR_SMCR);
    if (lgr) {
      out.push(parseSmcrLinkGroup(lgr));
      continue;
    }
    const link = m.attrs.nested(GEN.LINK_SMCR);
    if (!link) throw new NetlinkParseError('SMC-R link groups: a message is neither a link group nor a link');
    const owner = out[out.length - 1];
    if (!owner) throw new NetlinkParseError('SMC-R link groups: a link before any link group');
    owner.links.push(parseSmcrLink(link));
  }
  return out;
}

/**
 * A DIBS device (Direct Internal Buffer Sharing, kernel 6.18+), from sysfs /sys/class/dibs/<name>: the
 * software loopback device `lo` (CONFIG_DIBS_LO, what loopback-ism became) or an s390 ISM device. SMC-D
 * uses every DIBS device; the SMC-D device dump still leaves the loopback one out.
 */
export interface DibsDevice {
  name: string;
  /** the device's GID as sysfs prints it (a UUID) */
  gid: string | null;
  fabricId: number | null;
  /** the DIBS loopback device (loopback-ism): named `lo`, no parent bus device */
  loopback: boolean;
}

/** Where the DIBS class lives in sysfs. */
export const DIBS_SYSFS = '/sys/class/dibs';

/**
 * The DIBS devices from sysfs, by name; null when the class does not exist (a kernel before 6.18, where
 * loopback-ism was CONFIG_SMC_LO and had no sysfs entry, or DIBS not built/loaded).
 */
export function readDibsDevices(sysfs = DIBS_SYSFS): DibsDevice[] | null {
  let names: string[];
  try {
    names = fs.readdirSync(sysfs).sort();
  } catch {
    return null;
  }
  const read = (name: string, file: string): string | null => {
    try {
      return fs.readFileSync(path.join(sysfs, name, file), 'utf8').trim() || null;
    } catch {
      return null;
    }
  };
  return names.map((name) => {
    const fabric = read(name, 'fabric_id');
    const fabricId = fabric !== null && /^(0x[0-9a-f]+|\d+)$/i.test(fabric) ? Number(fabric) : null;
    // ISM devices hang off a PCI function (a `device` link); the loopback device has no parent
    const parent = fs.existsSync(path.join(sysfs, name, 'device'));
    return { name, gid: read(name, 'gid'), fabricId, loopback: name === 'lo' && !parent };
  });
}
