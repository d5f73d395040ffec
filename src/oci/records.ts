// What the OCI hook switched, one file per container in the user's cache dir (the hook runs as root:
// ~root/.cache/smc-run/oci-hook/<container id>.json): which scope (a network namespace by its cookie, or a
// cgroup by its id) and which pod and container it belongs to. poststop reads it back to undo exactly
// that, and only once no other container's record names the same scope (the containers of a pod share
// one namespace). The record is written before the switch, so a hook that dies half-way still leaves the
// trace poststop needs. status labels its namespaces and cgroups from here.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { replaceFileAtomically } from '../atomic-file';

export type Scope = { kind: 'netns'; cookie: string; inode: number } | { kind: 'cgroup'; id: string; path: string };

export interface HookRecord {
  /** the container id (the OCI state's id) */
  id: string;
  scope: Scope;
  /** the Kubernetes names CRI-O passes (io.kubernetes.pod.*, io.kubernetes.container.name), when there */
  pod?: { name?: string; namespace?: string; uid?: string; container?: string };
  /** when the hook switched it (ISO 8601) */
  at: string;
}

/**
 * The records' directory. The runtime runs the hook with only the environment its hooks.d file gives
 * (no HOME): the home directory comes from the user database, so the hook and `smc-run status` agree.
 */
export function recordsDir(): string {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.userInfo().homedir, '.cache');
  return path.join(cache, 'smc-run', 'oci-hook');
}

// a container id as runtimes make them (hex, or a name-like id): nothing that could leave the directory
const fileOf = (dir: string, id: string): string => {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(id)) throw new RangeError(`container id ${JSON.stringify(id)}: not a runtime's id`);
  return path.join(dir, `${id}.json`);
};

export function writeRecord(r: HookRecord, dir = recordsDir()): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  replaceFileAtomically(fileOf(dir, r.id), JSON.stringify(r) + '\n');
}

export function readRecord(id: string, dir = recordsDir()): HookRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(fileOf(dir, id), 'utf8')) as HookRecord;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export function removeRecord(id: string, dir = recordsDir()): void {
  fs.rmSync(fileOf(dir, id), { force: true });
}

/** Every record (a file that can't be read or parsed is skipped: a record being replaced). */
export function allRecords(dir = recordsDir()): HookRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch {
    return [];
  }
  const out: HookRecord[] = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as HookRecord);
    } catch {
      /* gone or half-written meanwhile */
    }
  }
  return out;
}

/** The same scope: the same namespace (cookie) or the same cgroup (id). */
export const sameScope = (a: Scope, b: Scope): boolean =>
  a.kind === 'netns' ? b.kind === 'netns' && a.cookie === b.cookie : b.kind === 'cgroup' && a.id === b.id;

const LOG_MAX = 64 * 1024;

/**
 * Appends the hook's line to hook.log beside the records: crun (podman's runtime) does not pass a hook's
 * stderr on, so this is where an operator finds why a container runs on TCP. Kept under 64 KiB (the older
 * half goes). Never throws: the log must not change what the hook decided.
 */
export function logLine(line: string, dir = recordsDir()): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, 'hook.log');
    let size = 0;
    try {
      size = fs.statSync(file).size;
    } catch {
      /* first line */
    }
    if (size > LOG_MAX) {
      const text = fs.readFileSync(file, 'utf8');
      replaceFileAtomically(file, text.slice(text.indexOf('\n', text.length / 2) + 1));
    }
    fs.appendFileSync(file, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 });
  } catch {
    /* a full or read-only cache dir */
  }
}
