// One vocabulary for "where": `--target PID` = the network namespace of that process (as nsenter -t),
// `--netns PATH|NAME` = that namespace (/run/netns/NAME for a bare name). Resolved to a path that the
// native layer opens with setns in a helper thread.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface NamespaceTarget {
  /** act in the network namespace of this process */
  target?: number | undefined;
  /** a netns path (/proc/PID/ns/net, /run/netns/NAME) or a name under /run/netns */
  netns?: string | undefined;
}

export class TargetError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The namespace path for a target, or undefined for the caller's own namespace. */
export function resolveNetns(t: NamespaceTarget): string | undefined {
  if (t.target !== undefined && t.netns !== undefined) {
    throw new TargetError('EUSAGE', 'give either --target PID or --netns PATH|NAME, not both');
  }
  if (t.target !== undefined) {
    if (!Number.isSafeInteger(t.target) || t.target <= 0) throw new TargetError('EUSAGE', `--target ${t.target}: not a PID`);
    const p = `/proc/${t.target}/ns/net`;
    try {
      fs.statSync(`/proc/${t.target}`);
    } catch {
      throw new TargetError('ESRCH', `no process with PID ${t.target}`);
    }
    try {
      fs.readlinkSync(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') {
        throw new TargetError('EPERM', `cannot see the network namespace of PID ${t.target}: not permitted (run as root, e.g. with sudo)`);
      }
      throw new TargetError('ESRCH', `no network namespace for PID ${t.target} (${code})`);
    }
    return p;
  }
  if (t.netns !== undefined) {
    const p = t.netns.includes('/') ? t.netns : path.join('/run/netns', t.netns);
    if (!t.netns.includes('/') && !/^[A-Za-z0-9_.-]+$/.test(t.netns)) {
      throw new TargetError('EUSAGE', `--netns ${t.netns}: not a namespace name or path`);
    }
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      throw new TargetError('ENOENT', `no network namespace at ${p}`);
    }
    if (!st.isFile() && !st.isSymbolicLink()) throw new TargetError('EINVAL', `${p} is not a network namespace`);
    return p;
  }
  return undefined;
}

/** Turns the setns failure of a path that exists but is no netns into a clear message. */
export function explainNetnsError(e: unknown, nsPath: string | undefined): unknown {
  const code = (e as { code?: string }).code;
  const syscall = (e as { syscall?: string }).syscall;
  if (nsPath === undefined || syscall !== 'setns') return e;
  if (code === 'EINVAL') return new TargetError('EINVAL', `${nsPath} is not a network namespace`);
  if (code === 'EPERM') return new TargetError('EPERM', `entering the network namespace ${nsPath} needs CAP_SYS_ADMIN (run as root, e.g. with sudo)`);
  return e;
}
