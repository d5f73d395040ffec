// The per-namespace SMC counters from the SMC generic netlink family (GET_STATS, GET_FBACK_STATS), as
// typed objects. Pure functions over the kernel's messages, so they are tested on replies recorded in a
// real guest (test/fixtures/genl) and fuzzed. Attribute numbers are those of include/uapi/linux/smc.h
// (6.12); attributes newer kernels added are optional here.
import { Attrs, NetlinkParseError, required, requiredNest } from '../netlink/message';
import type { GenlMessage } from '../netlink/genl';
import { SMC_GEN as GEN } from '../netlink/smc-genl';
import { fallbackReason } from './fallback-reasons';

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

/** A 64-bit counter; beyond 2^53 it could not be exact as a number, and no real counter gets there. */
function counter(a: Attrs, t: number, what: string): number {
  const v = required(a.u64(t), what);
  if (!Number.isSafeInteger(v)) throw new NetlinkParseError(`${what}: implausible counter value ${v}`);
  return v;
}

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
      rx: histogram(requiredNest(a, TECH.RX_RMB_SIZE, `${what} rx buffer sizes`), `${what} rx buffer size`),
      tx: histogram(requiredNest(a, TECH.TX_RMB_SIZE, `${what} tx buffer sizes`), `${what} tx buffer size`),
    },
    payloadSize: {
      rx: histogram(requiredNest(a, TECH.RX_PLOAD_SIZE, `${what} rx payload sizes`), `${what} rx payload size`),
      tx: histogram(requiredNest(a, TECH.TX_PLOAD_SIZE, `${what} tx payload sizes`), `${what} tx payload size`),
    },
    buffers: {
      rx: bufferCounters(requiredNest(a, TECH.RX_RMB_STATS, `${what} rx buffer counters`), `${what} rx buffer`),
      tx: bufferCounters(requiredNest(a, TECH.TX_RMB_STATS, `${what} tx buffer counters`), `${what} tx buffer`),
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
  const s = requiredNest(msg.attrs, GEN.STATS, 'SMC statistics');
  return {
    smcd: parseTechStats(requiredNest(s, STATS.SMCD_TECH, 'SMC-D statistics'), 'SMC-D'),
    smcr: parseTechStats(requiredNest(s, STATS.SMCR_TECH, 'SMC-R statistics'), 'SMC-R'),
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
    const f = requiredNest(m.attrs, GEN.FBACK_STATS, 'SMC fallback statistics');
    const srv = f.u64(FBACK.SRV_CNT);
    const clnt = f.u64(FBACK.CLNT_CNT);
    if (srv !== undefined || clnt !== undefined) {
      totals = { server: required(srv, 'server fallback total'), client: required(clnt, 'client fallback total') };
    }
    const side = required(f.u8(FBACK.TYPE), 'fallback side') === 1 ? 'server' : 'client';
    const code = required(f.u32(FBACK.RSN_CODE), 'fallback reason code');
    const count = required(f.u16(FBACK.RSN_CNT), 'fallback reason count');
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
