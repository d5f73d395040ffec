// Deltas of the system counters between two moments. The kernel has no reset for SMC statistics,
// so `stats system --save FILE` records a snapshot and `--since FILE` subtracts it. A snapshot names
// the boot and the network namespace it was taken in: against another one the deltas would be
// meaningless (counters restart with each namespace), and that is an error, not a negative number.
import * as fs from 'node:fs';
import { replaceFileAtomically } from '../atomic-file';
import { withNetns, type NamespaceTarget } from '../netns';
import {
  FALLBACK_COUNT_WRAP, SIZE_BUCKETS, byCountDesc, fallbackCount,
  type BufferCounters, type Directions, type FallbackSide, type SizeHistogram, type SmcSystemStats, type TechStats,
} from '../stats/system';

export const SNAPSHOT_FORMAT = 'smc-run-stats-snapshot';
export const SNAPSHOT_VERSION = 1;

/** Where counters live: they are only comparable within one boot and one network namespace. */
export interface CounterScope {
  /** /proc/sys/kernel/random/boot_id */
  bootId: string | null;
  /** the namespace's inode, as "net:[4026531840]" */
  netns: string | null;
}

export interface StatsSnapshot extends CounterScope {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  savedAt: string;
  stats: SmcSystemStats;
}

export class SnapshotError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function makeSnapshot(stats: SmcSystemStats, scope: CounterScope, now = new Date()): StatsSnapshot {
  return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, savedAt: now.toISOString(), ...scope, stats };
}

/**
 * Writes the snapshot (mode 0600) to a new temp file and renames it over FILE, so an interrupted save leaves
 * the old file and a symlink planted by another user is never followed.
 */
export function saveSnapshot(file: string, snap: StatsSnapshot): void {
  try {
    replaceFileAtomically(file, `${JSON.stringify(snap, null, 2)}\n`);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
    throw new SnapshotError(code, `cannot save the snapshot ${file}: ${code}`);
  }
}

// ---- reading a snapshot back: every counter checked, names re-derived from the codes ----

type Json = unknown;

function obj(v: Json, where: string): Record<string, Json> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SnapshotError('EINVAL', `${where}: not an object`);
  return v as Record<string, Json>;
}

function num(v: Json, where: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new SnapshotError('EINVAL', `${where}: not a counter`);
  return v;
}

function record<K extends string>(v: Json, keys: readonly K[], where: string): Record<K, number> {
  const o = obj(v, where);
  const out = {} as Record<K, number>;
  for (const k of keys) out[k] = num(o[k], `${where}.${k}`);
  return out;
}

const dirs = <T>(v: Json, where: string, each: (x: Json, w: string) => T): Directions<T> => {
  const o = obj(v, where);
  return { rx: each(o.rx, `${where}.rx`), tx: each(o.tx, `${where}.tx`) };
};

const BUFFER_KEYS = ['alloc', 'reuse', 'downgrade', 'full', 'peerFull', 'sizeSmall', 'peerSizeSmall'] as const satisfies readonly (keyof BufferCounters)[];
const CONN_KEYS = ['clientV1', 'clientV2', 'serverV1', 'serverV2'] as const;
const CALL_KEYS = ['cork', 'nodelay', 'splice', 'sendpage', 'urgent'] as const;

function techFrom(v: Json, where: string): TechStats {
  const o = obj(v, where);
  const count = (x: Json, w: string): number => num(x, w);
  return {
    connections: record(o.connections, CONN_KEYS, `${where}.connections`),
    bytes: dirs(o.bytes, `${where}.bytes`, count),
    requests: dirs(o.requests, `${where}.requests`, count),
    bufferSize: dirs(o.bufferSize, `${where}.bufferSize`, (x, w) => record(x, SIZE_BUCKETS, w)),
    payloadSize: dirs(o.payloadSize, `${where}.payloadSize`, (x, w) => record(x, SIZE_BUCKETS, w)),
    buffers: dirs(o.buffers, `${where}.buffers`, (x, w) => record(x, BUFFER_KEYS, w)),
    calls: record(o.calls, CALL_KEYS, `${where}.calls`),
    bufferUsage: o.bufferUsage === null ? null : dirs(o.bufferUsage, `${where}.bufferUsage`, count),
  };
}

function sideFrom(v: Json, where: string): FallbackSide {
  const o = obj(v, where);
  if (!Array.isArray(o.reasons)) throw new SnapshotError('EINVAL', `${where}.reasons: not a list`);
  const total = num(o.total, `${where}.total`);
  const reasons = o.reasons.map((r, i) => {
    const e = obj(r, `${where}.reasons[${i}]`);
    return fallbackCount(num(e.code, `${where}.reasons[${i}].code`), num(e.count, `${where}.reasons[${i}].count`));
  });
  return { total, countsWrap: total >= FALLBACK_COUNT_WRAP, reasons: reasons.sort(byCountDesc) };
}

export function statsFrom(v: Json, where = 'stats'): SmcSystemStats {
  const o = obj(v, where);
  const f = obj(o.fallbacks, `${where}.fallbacks`);
  return {
    smcd: techFrom(o.smcd, `${where}.smcd`),
    smcr: techFrom(o.smcr, `${where}.smcr`),
    handshakeErrors: record(o.handshakeErrors, ['client', 'server'] as const, `${where}.handshakeErrors`),
    fallbacks: { client: sideFrom(f.client, `${where}.fallbacks.client`), server: sideFrom(f.server, `${where}.fallbacks.server`) },
  };
}

/** Parses a snapshot file's text; `file` names it in errors. */
export function parseSnapshot(text: string, file: string): StatsSnapshot {
  let v: Json;
  try {
    v = JSON.parse(text);
  } catch {
    throw new SnapshotError('EINVAL', `${file} is not a snapshot (not JSON); write one with: smc-run stats system --save ${file}`);
  }
  const o = obj(v, file);
  if (o.format !== SNAPSHOT_FORMAT) throw new SnapshotError('EINVAL', `${file} is not a snapshot of smc-run stats system --save`);
  if (o.version !== SNAPSHOT_VERSION) throw new SnapshotError('EINVAL', `${file}: snapshot version ${String(o.version)}, this smc-run reads version ${SNAPSHOT_VERSION}`);
  const str = (x: Json): string | null => (typeof x === 'string' ? x : null);
  let stats: SmcSystemStats;
  try {
    stats = statsFrom(o.stats);
  } catch (e) {
    throw new SnapshotError('EINVAL', `${file}: damaged snapshot (${(e as Error).message})`);
  }
  const savedAt = str(o.savedAt);
  if (!savedAt || Number.isNaN(Date.parse(savedAt))) throw new SnapshotError('EINVAL', `${file}: damaged snapshot (no time)`);
  return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, savedAt, bootId: str(o.bootId), netns: str(o.netns), stats };
}

/** Refuses a snapshot of another boot or namespace (null on either side: unknown, accepted). */
export function checkScope(snapshot: StatsSnapshot, now: CounterScope, file: string): void {
  if (snapshot.bootId && now.bootId && snapshot.bootId !== now.bootId) {
    throw new SnapshotError('ESTALE', `${file} was saved before the last reboot: its counters are gone (save a new one)`);
  }
  if (snapshot.netns && now.netns && snapshot.netns !== now.netns) {
    throw new SnapshotError('ESTALE', `${file} was saved in another network namespace (${snapshot.netns}, this is ${now.netns}): pick the same --target/--netns`);
  }
}

// ---- deltas ----

function sub(now: number, before: number, what: string): number {
  if (now < before) {
    throw new SnapshotError('ESTALE', `${what} went down (${before} -> ${now}): the snapshot is not from these counters (another namespace or boot?)`);
  }
  return now - before;
}

function subRecord<K extends string>(now: Record<K, number>, before: Record<K, number>, what: string): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const k of Object.keys(now) as K[]) out[k] = sub(now[k], before[k], `${what} ${k}`);
  return out;
}

const subDirs = <T>(now: Directions<T>, before: Directions<T>, f: (n: T, b: T, w: string) => T, what: string): Directions<T> => ({
  rx: f(now.rx, before.rx, `${what} rx`),
  tx: f(now.tx, before.tx, `${what} tx`),
});

function diffTech(now: TechStats, before: TechStats, what: string): TechStats {
  return {
    connections: subRecord(now.connections, before.connections, `${what} connections`),
    bytes: subDirs(now.bytes, before.bytes, sub, `${what} bytes`),
    requests: subDirs(now.requests, before.requests, sub, `${what} requests`),
    bufferSize: subDirs<SizeHistogram>(now.bufferSize, before.bufferSize, subRecord, `${what} buffer size`),
    payloadSize: subDirs<SizeHistogram>(now.payloadSize, before.payloadSize, subRecord, `${what} payload size`),
    buffers: subDirs<BufferCounters>(now.buffers, before.buffers, subRecord, `${what} buffers`),
    calls: subRecord(now.calls, before.calls, `${what} calls`),
    // a level, not a counter: the delta view shows it as it is now
    bufferUsage: now.bufferUsage,
  };
}

/**
 * Per-reason counts are 16-bit in the kernel: their delta is taken modulo 65536, exact while fewer than
 * 65536 fallbacks happened on that side in between (countsWrap says when that is not certain).
 */
function diffFallbackSide(now: FallbackSide, before: FallbackSide, what: string): FallbackSide {
  const total = sub(now.total, before.total, `${what} fallbacks`);
  const reasons = now.reasons
    .map((r) => {
      const old = before.reasons.find((b) => b.code === r.code)?.count ?? 0;
      return { ...r, count: (r.count - old + FALLBACK_COUNT_WRAP) % FALLBACK_COUNT_WRAP };
    })
    .filter((r) => r.count > 0)
    .sort(byCountDesc);
  for (const b of before.reasons) {
    if (!now.reasons.some((r) => r.code === b.code)) {
      throw new SnapshotError('ESTALE', `${what} fallback reason ${b.name} disappeared: the snapshot is not from these counters`);
    }
  }
  return { total, countsWrap: total >= FALLBACK_COUNT_WRAP, reasons };
}

/** What happened between `before` and `now` (the same shape; levels stay as they are now). */
export function diffSystemStats(now: SmcSystemStats, before: SmcSystemStats): SmcSystemStats {
  return {
    smcd: diffTech(now.smcd, before.smcd, 'SMC-D'),
    smcr: diffTech(now.smcr, before.smcr, 'SMC-R'),
    handshakeErrors: subRecord(now.handshakeErrors, before.handshakeErrors, 'handshake errors'),
    fallbacks: {
      client: diffFallbackSide(now.fallbacks.client, before.fallbacks.client, 'client'),
      server: diffFallbackSide(now.fallbacks.server, before.fallbacks.server, 'server'),
    },
  };
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** The boot and namespace whose counters getSmcSystemStats(target) reads (what a snapshot records). */
export function counterScope(target: NamespaceTarget = {}): CounterScope {
  return {
    bootId: readOrNull(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    netns: readOrNull(() => `net:[${withNetns(target, (ns) => ns?.inode ?? fs.statSync('/proc/self/ns/net').ino)}]`),
  };
}
