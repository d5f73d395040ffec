// Byte sizes as people write them: 65536, 64k, 64K, 1m, 1M, 1MiB, 256KiB (binary multiples, as the kernel's).
const MULT: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

export function parseSize(text: string): number {
  const m = /^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$/i.exec(text);
  if (!m) throw new RangeError(`"${text}" is not a size (examples: 65536, 64k, 1M)`);
  const value = Number(m[1]) * (MULT[(m[2] ?? '').toLowerCase()] ?? 1);
  if (!Number.isSafeInteger(value)) throw new RangeError(`"${text}" is too large`);
  return value;
}

export function formatSize(bytes: number): string {
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2}M`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024}k`;
  return String(bytes);
}

/**
 * The largest SO_SNDBUF / SO_RCVBUF worth asking for: the option is an int, and the kernel keeps
 * min(value, INT_MAX / 2) * 2 (net/core/sock.c, __sock_set_sndbuf / __sock_set_rcvbuf). 2 GiB and more would
 * wrap in the int to a tiny or negative value.
 */
export const SOCKET_BUFFER_MAX = Math.floor(0x7fffffff / 2);

/** A size for SO_SNDBUF / SO_RCVBUF (bytes, or text as parseSize takes), refused above SOCKET_BUFFER_MAX. */
export function parseSocketBufferSize(value: number | string): number {
  const bytes = typeof value === 'number' ? value : parseSize(value);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`${String(value)} is not a size in bytes (examples: 65536, 64k, 1M)`);
  if (bytes > SOCKET_BUFFER_MAX) {
    throw new RangeError(`"${String(value)}" is too large for a socket buffer: at most ${SOCKET_BUFFER_MAX} bytes (SO_SNDBUF/SO_RCVBUF take an int that the kernel doubles: INT_MAX/2)`);
  }
  return bytes;
}
