// Netlink wire format: message headers, attributes (TLVs) and typed readers, all in the host's byte
// order (host-order.ts). Pure functions over Buffers, so every parser is tested on recorded fixtures, in
// both byte orders, and fuzzed.
import { putU16, putU32, u16, u32, u64 } from './host-order';
export const NLMSG_HDRLEN = 16;
export const NLMSG_NOOP = 1;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
export const NLM_F_REQUEST = 0x1;
export const NLM_F_MULTI = 0x2;
export const NLM_F_ACK = 0x4;
export const NLM_F_DUMP = 0x300;
const NLA_F_NESTED = 0x8000;
const NLA_F_NET_BYTEORDER = 0x4000;
const NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;

/** A malformed or truncated netlink message: never a crash or silent garbage. */
export class NetlinkParseError extends Error {
  readonly code = 'ENLPARSE';
}

export interface NlMessage {
  type: number;
  flags: number;
  seq: number;
  pid: number;
  payload: Buffer;
}

export const align4 = (n: number): number => (n + 3) & ~3;

export function buildMessage(type: number, flags: number, seq: number, payload: Buffer): Buffer {
  const hdr = Buffer.alloc(NLMSG_HDRLEN);
  putU32(hdr, NLMSG_HDRLEN + payload.length, 0);
  putU16(hdr, type, 4);
  putU16(hdr, flags, 6);
  putU32(hdr, seq, 8);
  putU32(hdr, 0, 12);
  const pad = Buffer.alloc(align4(payload.length) - payload.length);
  return Buffer.concat([hdr, payload, pad]);
}

/** Splits one received datagram into its messages. */
export function parseMessages(buf: Buffer): NlMessage[] {
  const out: NlMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLMSG_HDRLEN) throw new NetlinkParseError(`truncated netlink header at offset ${off}`);
    const len = u32(buf, off);
    if (len < NLMSG_HDRLEN || off + len > buf.length) {
      throw new NetlinkParseError(`bad netlink message length ${len} at offset ${off} (datagram ${buf.length} bytes)`);
    }
    out.push({
      type: u16(buf, off + 4),
      flags: u16(buf, off + 6),
      seq: u32(buf, off + 8),
      pid: u32(buf, off + 12),
      payload: buf.subarray(off + NLMSG_HDRLEN, off + len),
    });
    off += align4(len);
  }
  return out;
}

export interface NlAttr {
  type: number;
  nested: boolean;
  data: Buffer;
}

export function buildAttr(type: number, data: Buffer): Buffer {
  const hdr = Buffer.alloc(4);
  putU16(hdr, 4 + data.length, 0);
  putU16(hdr, type, 2);
  return Buffer.concat([hdr, data, Buffer.alloc(align4(data.length) - data.length)]);
}

export const buildStringAttr = (type: number, s: string): Buffer => buildAttr(type, Buffer.from(`${s}\0`, 'utf8'));

export function parseAttrs(buf: Buffer): NlAttr[] {
  const out: NlAttr[] = [];
  let off = 0;
  while (off + 4 <= buf.length) {
    const len = u16(buf, off);
    const rawType = u16(buf, off + 2);
    if (len < 4 || off + len > buf.length) {
      throw new NetlinkParseError(`bad attribute length ${len} at offset ${off} (${buf.length} bytes)`);
    }
    out.push({ type: rawType & NLA_TYPE_MASK, nested: (rawType & NLA_F_NESTED) !== 0, data: buf.subarray(off + 4, off + len) });
    off += align4(len);
  }
  return out;
}

/** Attributes by type (the last one wins, as in the kernel's nla_parse). */
export function attrMap(buf: Buffer): Map<number, Buffer> {
  const m = new Map<number, Buffer>();
  for (const a of parseAttrs(buf)) m.set(a.type, a.data);
  return m;
}

function need(data: Buffer, bytes: number, what: string): void {
  if (data.length < bytes) throw new NetlinkParseError(`${what}: need ${bytes} bytes, got ${data.length}`);
}

export const readU8 = (d: Buffer): number => (need(d, 1, 'u8'), d.readUInt8(0));
export const readU16 = (d: Buffer): number => (need(d, 2, 'u16'), u16(d, 0));
export const readU32 = (d: Buffer): number => (need(d, 4, 'u32'), u32(d, 0));
/** u64 counters as numbers: exact up to 2^53 (9 PB), far beyond any counter read here. */
export const readU64 = (d: Buffer): number => (need(d, 8, 'u64'), Number(u64(d, 0)));
/** nla_put_uint attributes (newer kernels): 4 bytes when the value fits, else 8. */
export function readUint(d: Buffer): number {
  if (d.length === 4) return u32(d, 0);
  if (d.length === 8) return readU64(d);
  throw new NetlinkParseError(`uint: need 4 or 8 bytes, got ${d.length}`);
}
/**
 * An unsigned attribute whose width the kernel chose (1, 2, 4 or 8 bytes): for fields whose uapi comment
 * and nla_put_* call disagree (SMC_NLA_LGR_D_CHID: "u16" in smc.h, put as u32). Reading such a field at
 * the documented width takes the wrong half on a big-endian host.
 */
export function readUnsigned(d: Buffer): number {
  if (d.length === 1) return d.readUInt8(0);
  if (d.length === 2) return u16(d, 0);
  if (d.length === 4) return u32(d, 0);
  if (d.length === 8) return readU64(d);
  throw new NetlinkParseError(`unsigned: need 1, 2, 4 or 8 bytes, got ${d.length}`);
}
export function readString(d: Buffer): string {
  const nul = d.indexOf(0);
  return d.subarray(0, nul >= 0 ? nul : d.length).toString('utf8');
}

/** Optional typed getters over an attribute map. */
export class Attrs {
  constructor(readonly map: Map<number, Buffer>) {}
  static parse(buf: Buffer): Attrs {
    return new Attrs(attrMap(buf));
  }
  has(t: number): boolean {
    return this.map.has(t);
  }
  u8(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readU8(d);
  }
  u16(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readU16(d);
  }
  u32(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readU32(d);
  }
  u64(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readU64(d);
  }
  uint(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readUint(d);
  }
  unsigned(t: number): number | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readUnsigned(d);
  }
  hex64(t: number): string | undefined {
    const d = this.map.get(t);
    if (d === undefined) return undefined;
    need(d, 8, 'u64');
    return `0x${u64(d, 0).toString(16)}`;
  }
  str(t: number): string | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : readString(d);
  }
  nested(t: number): Attrs | undefined {
    const d = this.map.get(t);
    return d === undefined ? undefined : Attrs.parse(d);
  }
}

/** An attribute the reply must have; a NetlinkParseError naming what when it is missing. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new NetlinkParseError(`${what}: missing in the kernel's reply`);
  return value;
}
export const requiredNest = (a: Attrs, type: number, what: string): Attrs => required(a.nested(type), what);
/** An optional attribute's value, or null when the kernel did not send it. */
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
/** An optional u8 flag attribute as a boolean, or null when absent. */
export const flag = (v: number | undefined): boolean | null => (v === undefined ? null : v !== 0);
/** An optional enum attribute by its name in table (the number itself when the table has none), or null. */
export const named = (table: Record<number, string>, v: number | undefined): string | null => (v === undefined ? null : (table[v] ?? String(v)));
