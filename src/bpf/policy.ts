// The destination policy of `smc-run enable --include/--exclude` as the kernel reads it: the value of
// native/bpf/smc-policy.bpf.c's map (struct smc_policy) for one namespace. Counts, ports and counters are in
// the host's byte order (the BPF program runs on this host), addresses in network order.
import type { Rule } from '../policy/rules';

/** native/bpf/smc-policy.bpf.c: SMC_POLICY_RULES */
export const POLICY_RULES = 16;
const RULE_SIZE = 24;
const HEAD = 24; // n_include, n_exclude (u32), proposed, held (u64)
export const POLICY_SIZE = HEAD + POLICY_RULES * RULE_SIZE;

export type ByteOrder = 'LE' | 'BE';
export const HOST_ORDER: ByteOrder = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE';

/** A rule as the kernel holds it, read back (status). */
export interface KernelRule { family: 0 | 4 | 6; address: string | undefined; prefix: number; port: number | undefined }

export interface KernelPolicy {
  include: KernelRule[];
  exclude: KernelRule[];
  /** connections the policy let propose SMC so far */
  proposed: number;
  /** connections it kept on plain TCP */
  held: number;
}

function addressBytes(r: Rule): Buffer {
  const b = Buffer.alloc(16);
  if (r.address === undefined) return b;
  if (r.family === 'ipv4') r.address.split('.').forEach((o, i) => b.writeUInt8(Number(o), i));
  else r.address.split(':').forEach((h, i) => b.writeUInt16BE(parseInt(h, 16), 2 * i));
  return b;
}

/** The map value for these rules: at most POLICY_RULES of them (RangeError beyond). */
export function encodePolicy(include: readonly Rule[], exclude: readonly Rule[], order: ByteOrder = HOST_ORDER): Buffer {
  if (include.length + exclude.length > POLICY_RULES) {
    throw new RangeError(`the kernel's policy holds at most ${POLICY_RULES} rules (--include and --exclude together), not ${include.length + exclude.length}`);
  }
  const b = Buffer.alloc(POLICY_SIZE);
  const u32 = (v: number, at: number) => (order === 'LE' ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at));
  const u16 = (v: number, at: number) => (order === 'LE' ? b.writeUInt16LE(v, at) : b.writeUInt16BE(v, at));
  u32(include.length, 0);
  u32(exclude.length, 4);
  [...include, ...exclude].forEach((r, i) => {
    const at = HEAD + i * RULE_SIZE;
    addressBytes(r).copy(b, at);
    b.writeUInt8(r.family === 'ipv4' ? 4 : r.family === 'ipv6' ? 6 : 0, at + 16);
    b.writeUInt8(r.family === undefined ? 0 : r.prefix, at + 17);
    b.writeUInt8(r.port === undefined ? 0 : 1, at + 18);
    u16(r.port ?? 0, at + 20);
  });
  return b;
}

/** A rule read back, in the launcher's syntax: 10.0.0.0/8:5432, [fd00:0:0:0:0:0:0:0]/8, *:6379. */
export function kernelRuleText(r: KernelRule): string {
  const port = r.port === undefined ? '' : `:${r.port}`;
  if (r.family === 0) return `*${port}`;
  return r.family === 6 ? `[${r.address ?? ''}]/${r.prefix}${port}` : `${r.address ?? ''}/${r.prefix}${port}`;
}

/** Reads a map value back (smc-bpf status prints it in hex). */
export function decodePolicy(b: Buffer, order: ByteOrder = HOST_ORDER): KernelPolicy {
  if (b.length !== POLICY_SIZE) throw new RangeError(`policy value: ${b.length} bytes, expected ${POLICY_SIZE}`);
  const u32 = (at: number) => (order === 'LE' ? b.readUInt32LE(at) : b.readUInt32BE(at));
  const u16 = (at: number) => (order === 'LE' ? b.readUInt16LE(at) : b.readUInt16BE(at));
  const u64 = (at: number) => Number(order === 'LE' ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
  const nInclude = u32(0);
  const nExclude = u32(4);
  if (nInclude + nExclude > POLICY_RULES) throw new RangeError(`policy value: ${nInclude + nExclude} rules, at most ${POLICY_RULES}`);
  const rules: KernelRule[] = [];
  for (let i = 0; i < nInclude + nExclude; i++) {
    const at = HEAD + i * RULE_SIZE;
    const f = b.readUInt8(at + 16);
    const family = f === 4 ? 4 : f === 6 ? 6 : 0;
    const address = family === 4
      ? [0, 1, 2, 3].map((k) => b.readUInt8(at + k)).join('.')
      : family === 6 ? [0, 1, 2, 3, 4, 5, 6, 7].map((k) => b.readUInt16BE(at + 2 * k).toString(16)).join(':') : undefined;
    rules.push({ family, address, prefix: b.readUInt8(at + 17), port: b.readUInt8(at + 18) ? u16(at + 20) : undefined });
  }
  return { include: rules.slice(0, nInclude), exclude: rules.slice(nInclude), proposed: u64(8), held: u64(16) };
}
