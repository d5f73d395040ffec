// The cgroup scope of the BPF switch (`smc-run enable --cgroup PATH | --unit NAME`): which cgroup v2
// directory a command names. systemd puts a service in a directory named after its unit
// (/sys/fs/cgroup/system.slice/redis.service, user services deeper under user.slice); no systemd is asked.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const CGROUP_ROOT = '/sys/fs/cgroup';

export class CgroupError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly isUsage = false,
  ) {
    super(message);
  }
}

// the characters systemd allows in a unit name
const UNIT = '[A-Za-z0-9:_.\\\\@-]+';

/** A unit name as systemd spells it: NAME.service / .scope / .slice (a bare NAME means NAME.service). */
export function unitName(unit: string): string {
  if (!new RegExp(`^${UNIT}$`).test(unit)) throw new CgroupError('EUSAGE', `--unit ${JSON.stringify(unit)}: not a systemd unit name`, true);
  return /\.(service|scope|slice)$/.test(unit) ? unit : `${unit}.service`;
}

/**
 * The cgroup directory of a unit: the one directory named after it under root, found breadth first
 * (system services sit two levels down, user services deeper). Several: a usage error naming them.
 */
export function unitCgroup(unit: string, root = CGROUP_ROOT, maxDepth = 6): string {
  const name = unitName(unit);
  const found: string[] = [];
  let level = [root];
  for (let depth = 0; depth < maxDepth && level.length > 0 && found.length === 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const p = path.join(dir, e.name);
        if (e.name === name) found.push(p);
        else next.push(p);
      }
    }
    level = next;
  }
  if (found.length === 0) throw new CgroupError('ENOENT', `--unit ${name}: no cgroup of that name under ${root} (is the unit running? systemctl status ${name})`);
  if (found.length > 1) throw new CgroupError('EUSAGE', `--unit ${name}: several cgroups of that name (${found.join(', ')}): name one with --cgroup PATH`, true);
  return found[0]!;
}

/** A --cgroup argument: an absolute path, or one relative to the cgroup root; must be a directory there. */
export function cgroupPath(given: string, root = CGROUP_ROOT): string {
  const p = path.isAbsolute(given) ? given : path.join(root, given);
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    throw new CgroupError('ENOENT', `--cgroup ${given}: no such directory`);
  }
  if (!st.isDirectory()) throw new CgroupError('EUSAGE', `--cgroup ${given}: not a directory`, true);
  return p;
}

/** The systemd unit a cgroup directory belongs to, by its name (undefined: not a unit's directory). */
export function unitOfCgroup(dir: string | undefined): string | undefined {
  const base = dir === undefined ? '' : path.basename(dir);
  return new RegExp(`^${UNIT}\\.(service|scope)$`).test(base) ? base : undefined;
}
