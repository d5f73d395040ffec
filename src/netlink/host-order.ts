// The one place that decides netlink's byte order. Netlink headers, attribute headers and the integer
// fields of netlink structs travel in the host's byte order (little-endian on x86_64 and arm64,
// big-endian on s390x); only addresses and ports are in network order, and their readers say so
// themselves (readUInt16BE). Every netlink reader and writer in src/netlink goes through these.
import * as os from 'node:os';

export type ByteOrder = 'LE' | 'BE';

/** The byte order of this host, as netlink uses it. */
export const HOST_BYTE_ORDER: ByteOrder = os.endianness();

let little = HOST_BYTE_ORDER === 'LE';

export const u16 = (b: Buffer, off: number): number => (little ? b.readUInt16LE(off) : b.readUInt16BE(off));
export const u32 = (b: Buffer, off: number): number => (little ? b.readUInt32LE(off) : b.readUInt32BE(off));
export const i32 = (b: Buffer, off: number): number => (little ? b.readInt32LE(off) : b.readInt32BE(off));
export const u64 = (b: Buffer, off: number): bigint => (little ? b.readBigUInt64LE(off) : b.readBigUInt64BE(off));

export function putU16(b: Buffer, v: number, off: number): void {
  if (little) b.writeUInt16LE(v, off);
  else b.writeUInt16BE(v, off);
}
export function putU32(b: Buffer, v: number, off: number): void {
  if (little) b.writeUInt32LE(v >>> 0, off);
  else b.writeUInt32BE(v >>> 0, off);
}
export function putU64(b: Buffer, v: bigint, off: number): void {
  if (little) b.writeBigUInt64LE(v, off);
  else b.writeBigUInt64BE(v, off);
}

/**
 * Test seam: makes readers and writers behave as on a host of the given order (null: this host's again).
 * The tests run every parser and builder in both orders on any host through it. Production code never
 * calls it: the order there is HOST_BYTE_ORDER.
 */
export function overrideByteOrder(order: ByteOrder | null): void {
  little = (order ?? HOST_BYTE_ORDER) === 'LE';
}

/** Runs fn with overrideByteOrder(order) in force, restoring the previous order afterwards. */
export function withByteOrder<T>(order: ByteOrder, fn: () => T): T {
  const saved = little;
  little = order === 'LE';
  try {
    return fn();
  } finally {
    little = saved;
  }
}

/** The byte order readers and writers use right now (HOST_BYTE_ORDER unless overridden). */
export const currentByteOrder = (): ByteOrder => (little ? 'LE' : 'BE');
