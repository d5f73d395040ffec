// Who is in a network namespace, by its inode: the names under /run/netns (ip netns) and the processes
// whose /proc/PID/ns/net reads net:[INODE]. For `smc-run status`, so that an inode reads as a container
// or a name; processes we may not inspect are skipped, as ss -p does.
import * as fs from 'node:fs';
import { commandOf } from './owners';

export interface NetnsMembers {
  names: string[];
  pids: number[];
  /** comm of the first few processes */
  commands: string[];
}

export function netnsMembers(inodes: ReadonlySet<number>, maxCommands = 3): Map<number, NetnsMembers> {
  const out = new Map<number, NetnsMembers>();
  for (const ino of inodes) out.set(ino, { names: [], pids: [], commands: [] });
  if (inodes.size === 0) return out;
  let names: string[] = [];
  try {
    names = fs.readdirSync('/run/netns');
  } catch {
    /* no named namespaces */
  }
  for (const name of names) {
    try {
      out.get(fs.statSync(`/run/netns/${name}`).ino)?.names.push(name);
    } catch {
      /* removed meanwhile */
    }
  }
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/${entry}/ns/net`);
    } catch {
      continue;
    }
    const m = /^net:\[(\d+)\]$/.exec(link);
    const members = m?.[1] === undefined ? undefined : out.get(Number(m[1]));
    if (members === undefined) continue;
    members.pids.push(Number(entry));
    const command = members.commands.length < maxCommands ? commandOf(Number(entry)) : '?';
    if (command !== '?') members.commands.push(command); // '?': exited meanwhile
  }
  return out;
}
