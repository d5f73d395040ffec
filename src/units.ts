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
