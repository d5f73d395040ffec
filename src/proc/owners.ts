// Which processes hold which socket inodes: /proc/PID/fd/* links read "socket:[INODE]". Processes
// we may not inspect are skipped (the column then stays empty), as ss -p does.
import * as fs from 'node:fs';

export interface Owner {
  pid: number;
  command: string;
}

/** A process's command (comm), '?' when it is gone or not ours to see. */
export function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** Socket inodes of one process (empty when it is gone or not ours to see). */
export function socketInodesOf(pid: number): Set<number> {
  const out = new Set<number>();
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(Number(m[1]));
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** inode -> owners, for the inodes asked about; scans every process once (read: what the caller already read of some). */
export function socketOwners(inodes: ReadonlySet<number>, read: ReadonlyMap<number, ReadonlySet<number>> = new Map()): Map<number, Owner[]> {
  const map = new Map<number, Owner[]>();
  if (inodes.size === 0) return map;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    let command: string | undefined;
    for (const inode of read.get(pid) ?? socketInodesOf(pid)) {
      if (!inodes.has(inode)) continue;
      command ??= commandOf(pid);
      const list = map.get(inode) ?? [];
      list.push({ pid, command });
      map.set(inode, list);
    }
  }
  return map;
}
