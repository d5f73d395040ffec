// Netlink wire format: message headers, attributes (TLVs) and typed readers. Pure functions over
// Buffers, so every parser is tested on recorded fixtures and fuzzed.
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
  hdr.writeUInt32LE(NLMSG_HDRLEN + payload.length, 0);
  hdr.writeUInt16LE(type, 4);
  hdr.writeUInt16LE(flags, 6);
  hdr.writeUInt32LE(seq >>> 0, 8);
  hdr.writeUInt32LE(0, 12);
  const pad = Buffer.alloc(align4(payload.length) - payload.length);
  return Buffer.concat([hdr, payload, pad]);
}

/** Splits one received datagram into its messages. */
export function parseMessages(buf: Buffer): NlMessage[] {
  const out: NlMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLMSG_HDRLEN) throw new NetlinkParseError(`truncated netlink header at offset ${off}`);
    const len = buf.readUInt32LE(off);
    if (len < NLMSG_HDRLEN || off + len > buf.length) {
      throw new NetlinkParseError(`bad netlink message length ${len} at offset ${off} (datagram ${buf.length} bytes)`);
    }
    out.push({
      type: buf.readUInt16LE(off + 4),
      flags: buf.readUInt16LE(off + 6),
      seq: buf.readUInt32LE(off + 8),
      pid: buf.readUInt32LE(off + 12),
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
  hdr.writeUInt16LE(4 + data.length, 0);
  hdr.writeUInt16LE(type, 2);
  return Buffer.concat([hdr, data, Buffer.alloc(align4(data.length) - data.length)]);
}

export const buildStringAttr = (type: number, s: string): Buffer => buildAttr(type, Buffer.from(`${s}\0`, 'utf8'));

export function parseAttrs(buf: Buffer): NlAttr[] {
  const out: NlAttr[] = [];
  let off = 0;
  while (off + 4 <= buf.length) {
    const len = buf.readUInt16LE(off);
    const rawType = buf.readUInt16LE(off + 2);
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
export const readU16 = (d: Buffer): number => (need(d, 2, 'u16'), d.readUInt16LE(0));
export const readU32 = (d: Buffer): number => (need(d, 4, 'u32'), d.readUInt32LE(0));
/** u64 counters as numbers: exact up to 2^53 (9 PB), far beyond any counter read here. */
export const readU64 = (d: Buffer): number => (need(d, 8, 'u64'), Number(d.readBigUInt64LE(0)));
/** nla_put_uint attributes (newer kernels): 4 bytes when the value fits, else 8. */
export function readUint(d: Buffer): number {
  if (d.length === 4) return d.readUInt32LE(0);
  if (d.length === 8) return readU64(d);
  throw new NetlinkParseError(`uint: need 4 or 8 bytes, got ${d.length}`);
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
  hex64(t: number): string | undefined {
    const d = this.map.get(t);
    if (d === undefined) return undefined;
    need(d, 8, 'u64');
    return `0x${d.readBigUInt64LE(0).toString(16)}`;
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
