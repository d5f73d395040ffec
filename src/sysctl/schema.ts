// What smc-run knows about each net.smc.* sysctl: type, range, default, unit, the kernel that added it,
// what it means and when it matters, and how to turn what a person types into what the kernel accepts.
// The schema describes; it does not decide presence: which names exist is read from /proc/sys/net/smc
// of the namespace in question (kernels differ, and a newer kernel may have names not listed here).
import { formatSize, parseSize } from '../units';
import { SysctlError } from './errors';

export type SysctlType = 'uint' | 'int' | 'string';
export type SysctlUnit = 'bytes' | 'seconds' | 'count' | 'flag' | 'choice' | 'name';

export interface SysctlSpec {
  readonly name: string;
  /** how the kernel's handler parses it (proc_douintvec*, proc_dointvec*, proc_dostring) */
  readonly type: SysctlType;
  readonly unit: SysctlUnit;
  /** inclusive bounds of integer sysctls, as the kernel enforces them */
  readonly min?: number;
  readonly max?: number;
  /** what each value of a choice or flag means */
  readonly choices?: Readonly<Record<number, string>>;
  /** string sysctls: longest value the kernel keeps */
  readonly maxLength?: number;
  /** the value a new network namespace starts with (on current kernels) */
  readonly default: number | string;
  /** first mainline kernel with the sysctl */
  readonly since: string;
  /**
   * a kernel option without which the sysctl is absent even from a kernel new enough for it (so its
   * absence is no surprise); undefined: every kernel since `since` has it
   */
  readonly requires?: string;
  /** one line: what it controls */
  readonly meaning: string;
  /** one line: when changing it makes a difference */
  readonly matters: string;
}

const INT_MAX = 2 ** 31 - 1;
const UINT_MAX = 2 ** 32 - 1;

export const SYSCTL_SCHEMA: readonly SysctlSpec[] = [
  {
    name: 'autocorking_size',
    type: 'uint',
    unit: 'bytes',
    min: 0,
    max: UINT_MAX,
    default: 65536,
    since: '5.18',
    meaning: 'most bytes SMC coalesces from small writes while earlier RDMA writes are in flight; 0 turns autocorking off',
    matters: 'SMC-R only (SMC-D never has RDMA writes pending, so it never corks); on SMC-R it multiplies small-write throughput',
  },
  {
    name: 'smcr_buf_type',
    type: 'uint',
    unit: 'choice',
    min: 0,
    max: 2,
    choices: { 0: 'physically contiguous', 1: 'virtually contiguous', 2: 'physical first, else virtual' },
    default: 0,
    since: '6.0',
    meaning: 'memory used for the send buffers and RMBs of new SMC-R link groups',
    matters: 'SMC-R only; 1 or 2 when large buffers fail to allocate on a host with fragmented memory',
  },
  {
    name: 'smcr_testlink_time',
    type: 'int',
    unit: 'seconds',
    min: 0,
    // the kernel stores jiffies in an int: INT_MAX / HZ, which is this at the largest HZ (1000)
    max: Math.floor(INT_MAX / 1000),
    default: 30,
    since: '6.1',
    meaning: 'idle seconds after which an SMC-R link sends a TEST_LINK message to check that the peer is alive; 0 disables',
    matters: 'SMC-R only; lower finds dead RoCE links sooner',
  },
  {
    name: 'wmem',
    type: 'int',
    unit: 'bytes',
    min: 16384,
    max: Math.floor(INT_MAX / 2),
    default: 65536,
    since: '6.1',
    meaning: 'initial send buffer of new SMC sockets (SO_SNDBUF or smc-run -t overrides it per socket)',
    matters: 'decides SMC-D bulk speed (64k is slower than TCP for bulk, 1M faster); SMC-D buffers are capped at 1 MiB, SMC-R at 512 KiB',
  },
  {
    name: 'rmem',
    type: 'int',
    unit: 'bytes',
    min: 16384,
    max: Math.floor(INT_MAX / 2),
    default: 65536,
    since: '6.1',
    meaning: 'initial receive buffer (RMB/DMB) of new SMC sockets (SO_RCVBUF or smc-run -r overrides it per socket)',
    matters: 'decides SMC-D bulk speed together with wmem; SMC-D buffers are capped at 1 MiB, SMC-R at 512 KiB',
  },
  {
    name: 'smcr_max_links_per_lgr',
    type: 'int',
    unit: 'count',
    min: 1,
    max: 2,
    default: 2,
    since: '6.6',
    meaning: 'most links (RDMA device pairs) in one SMC-R link group',
    matters: 'SMC-R v2.1 and later, with two RoCE devices; 1 gives up the redundant second link',
  },
  {
    name: 'smcr_max_conns_per_lgr',
    type: 'int',
    unit: 'count',
    min: 16,
    max: 255,
    default: 255,
    since: '6.6',
    meaning: 'most connections sharing one SMC-R link group',
    matters: 'SMC-R v2.1 and later; lower spreads busy connections over more link groups (more queue pairs)',
  },
  {
    name: 'limit_smc_hs',
    type: 'int',
    unit: 'flag',
    min: 0,
    max: 1,
    choices: { 0: 'off', 1: 'on' },
    default: 0,
    since: '6.12',
    meaning: 'handshake limitation: SMC listeners created afterwards take new connections as TCP while SMC handshakes queue up',
    matters: 'servers hit by bursts of connections; the same per-namespace value as the SMC netlink HS_LIMITATION commands (smc-run hs-limit)',
  },
  {
    name: 'smcr_max_send_wr',
    type: 'int',
    unit: 'count',
    min: 2,
    max: 2048,
    default: 16,
    since: '6.19',
    meaning: 'send work request buffers per new SMC-R link (shared by all its connections)',
    matters: 'SMC-R only; raise it when many busy connections share a link and wait for send buffers',
  },
  {
    name: 'smcr_max_recv_wr',
    type: 'int',
    unit: 'count',
    min: 2,
    max: 2048,
    default: 48,
    since: '6.19',
    meaning: 'receive work request buffers per new SMC-R link (shared by all its connections)',
    matters: 'SMC-R only; raise it together with smcr_max_send_wr on the peer',
  },
  {
    name: 'hs_ctrl',
    type: 'string',
    unit: 'name',
    maxLength: 15,
    default: '',
    since: '6.19',
    requires: 'CONFIG_SMC_HS_CTRL_BPF',
    meaning: 'name of the BPF handshake controller (struct_ops) that decides per connection whether to try SMC; empty = none',
    matters: 'kernels with CONFIG_SMC_HS_CTRL_BPF, when a loaded BPF program should choose SMC or TCP per connection',
  },
];

const BY_NAME = new Map(SYSCTL_SCHEMA.map((s) => [s.name, s]));

/** "6.1.0-50-amd64", "6.12.57+deb13-amd64", "7.3.4" -> [major, minor]; undefined when unreadable. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Whether kernel `release` is at least version `since` ("6.19"); false when the release is unreadable. */
export function kernelAtLeast(release: string, since: string): boolean {
  const k = kernelVersion(release);
  const v = kernelVersion(since);
  if (!k || !v) return false;
  return k[0] !== v[0] ? k[0] > v[0] : k[1] >= v[1];
}

/** How a kernel's net.smc listing compares with the schema, for a kernel of version `release`. */
export interface SchemaComparison {
  /** the kernel has them, the schema does not know them (the schema is behind the kernel) */
  unknown: string[];
  /** the schema says a kernel this new has them (no config option needed), the kernel has not */
  missing: string[];
  /** present though the schema says they came in a later kernel (a backport, or a wrong `since`) */
  early: string[];
  /** known, new enough, but absent because they need a kernel option (`requires`) */
  optionalAbsent: string[];
}

export function compareWithSchema(release: string, names: readonly string[]): SchemaComparison {
  const present = new Set(names);
  const out: SchemaComparison = { unknown: [], missing: [], early: [], optionalAbsent: [] };
  for (const n of [...present].sort()) {
    const spec = BY_NAME.get(n);
    if (!spec) out.unknown.push(n);
    else if (!kernelAtLeast(release, spec.since)) out.early.push(n);
  }
  for (const spec of SYSCTL_SCHEMA) {
    if (present.has(spec.name) || !kernelAtLeast(release, spec.since)) continue;
    (spec.requires ? out.optionalAbsent : out.missing).push(spec.name);
  }
  return out;
}

export const specOf = (name: string): SysctlSpec | undefined => BY_NAME.get(name);

/** What a sysctl name may look like: nothing that could leave /proc/sys/net/smc (no '/', '.', ..). */
export const SYSCTL_NAME = /^[a-z0-9_]+$/;

export const keyOf = (name: string): string => `net.smc.${name}`;

/**
 * The bare name from what a person typed: "autocorking_size", "net.smc.autocorking_size" or
 * "net/smc/autocorking_size". Anything else (paths, dots, upper case) is refused here, before any I/O.
 */
export function normalizeName(input: string): string {
  const bare = input.replace(/^net[./]smc[./]/, '');
  if (!SYSCTL_NAME.test(bare)) throw new SysctlError('ENOSYSCTL', `"${input}" is not a net.smc sysctl name (names are lower-case letters, digits and _)`);
  return bare;
}

const show = (spec: SysctlSpec, n: number): string => (spec.unit === 'bytes' && n >= 1024 && formatSize(n) !== String(n) ? `${n} (${formatSize(n)})` : String(n));

/** The accepted values of a sysctl in words, for error messages and help: "16384 (16k) .. 1073741823 bytes". */
export function rangeText(spec: SysctlSpec): string {
  if (spec.type === 'string') return `a name of at most ${spec.maxLength} printable characters, or "" for none`;
  const bounds = `${show(spec, spec.min ?? 0)} .. ${show(spec, spec.max ?? UINT_MAX)}`;
  if (spec.choices) return `${bounds} (${Object.entries(spec.choices).map(([v, m]) => `${v} ${m}`).join(', ')})`;
  if (spec.unit === 'bytes') return `${bounds} bytes`;
  if (spec.unit === 'seconds') return `${bounds} seconds`;
  return bounds;
}

/** Printable ASCII without line breaks: what may be written to a sysctl smc-run has no schema for. */
const PLAIN_TEXT = /^[\x20-\x7e]{0,256}$/;

/**
 * Turns a value as given (number, "0", "64k", "1M", a name) into the exact text the kernel expects,
 * or throws SysctlError EINVAL (malformed) / ERANGE (out of range) naming the accepted range. No value
 * reaches the kernel without passing here. `spec` undefined: a sysctl of a newer kernel than this
 * schema; the kernel validates it, we only keep line breaks and control characters out.
 */
export function parseSysctlValue(name: string, spec: SysctlSpec | undefined, input: number | string): string {
  const key = keyOf(name);
  const given = typeof input === 'number' ? String(input) : input;
  if (!spec) {
    if (!PLAIN_TEXT.test(given)) throw new SysctlError('EINVAL', `${key}: ${JSON.stringify(given)} is not a plain one-line value`);
    return given.trim();
  }
  if (spec.type === 'string') {
    if (!/^[\x21-\x7e]*$/.test(given)) throw new SysctlError('EINVAL', `${key}: ${JSON.stringify(given)} is not a name; accepted: ${rangeText(spec)}`);
    if (given.length > (spec.maxLength ?? 0)) throw new SysctlError('ERANGE', `${key}: "${given}" is too long; accepted: ${rangeText(spec)}`);
    return given;
  }
  const n = parseInteger(key, spec, input);
  if (!Number.isSafeInteger(n) || n < (spec.min ?? 0) || n > (spec.max ?? UINT_MAX)) {
    throw new SysctlError('ERANGE', `${key}: ${given.trim()} is out of range; accepted: ${rangeText(spec)}`);
  }
  return String(n);
}

function parseInteger(key: string, spec: SysctlSpec, input: number | string): number {
  if (typeof input === 'number') {
    if (!Number.isInteger(input)) throw new SysctlError('EINVAL', `${key}: ${input} is not an integer; accepted: ${rangeText(spec)}`);
    return input;
  }
  const text = input.trim();
  if (/^[+-]?\d+$/.test(text)) return Number(text);
  if (spec.unit === 'bytes') {
    try {
      return parseSize(text);
    } catch {
      throw new SysctlError('EINVAL', `${key}: "${input}" is not a size; accepted: ${rangeText(spec)}, as 65536, 64k or 1M`);
    }
  }
  throw new SysctlError('EINVAL', `${key}: "${input}" is not an integer; accepted: ${rangeText(spec)}`);
}

/** A value as the kernel prints it, typed: integers as numbers, strings as they are. */
export function parseKernelValue(spec: SysctlSpec | undefined, text: string): number | string {
  const t = text.replace(/\n$/, '');
  if (spec && spec.type !== 'string' && /^-?\d+$/.test(t.trim())) return Number(t.trim());
  return t;
}

/** True/false when the schema knows the default, undefined for a sysctl it does not know. */
export function isDefaultValue(spec: SysctlSpec | undefined, value: number | string): boolean | undefined {
  return spec ? spec.default === value : undefined;
}
