// /proc/PID/stat, read in one place: a process's start time identifies it (a PID with another start time
// is another process), for the notice markers (src/hook/notice.ts) and the namespace handles (src/netns.ts).
// bin/smc-run reads the same field in sh, for the session it starts.
import * as fs from 'node:fs';

/**
 * The start time (clock ticks after boot, field 22 of /proc/PID/stat) of a live process, or undefined
 * when there is none or it has exited (a zombie, state Z or X).
 */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // the command (field 2) may hold spaces and parentheses: count from the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
}
