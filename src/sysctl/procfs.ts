// The files under /proc/sys/net/smc of one network namespace, and nothing else. /proc/sys/net shows
// the sysctls of the netns of the task that opens a file, so for another namespace the addon opens it
// from a helper thread that joined the namespace (setns); the fd keeps that namespace and is read or
// written here with plain fs calls. Names are checked against the directory's own listing before any
// file is opened, so no input can make this open a path outside /proc/sys/net/smc.
import * as fs from 'node:fs';
import { NoSmcError } from '../api/errors';
import { addon, isSystemError } from '../native';
import { explainNetnsError, type NetnsHandle } from '../netns';
import { SysctlError } from './errors';
import { keyOf, SYSCTL_NAME } from './schema';
import { SUDO_HINT } from '../permission-hint';
import { holdForTests } from '../test-hooks';

export const SMC_SYSCTL_DIR = '/proc/sys/net/smc';

/** The net.smc sysctls of one namespace: names discovered there, values read and written there. */
export interface SmcSysctlFiles {
  /** the open namespace, undefined for the caller's own */
  readonly ns: NetnsHandle | undefined;
  /** sorted names present in this namespace's /proc/sys/net/smc */
  readonly names: readonly string[];
  /** the value's text without its trailing newline */
  read(name: string): string;
  write(name: string, text: string): void;
  /**
   * Writes an old value back after a later write failed: like write, but also when a --target has exited
   * since, as the namespace held open is the one that was changed.
   */
  restore(name: string, text: string): void;
}

const where = (ns: NetnsHandle | undefined): string => (ns === undefined ? '' : ` in the network namespace ${ns.label}`);

function open(ns: NetnsHandle | undefined, path: string, flags: number): number {
  if (ns === undefined) return fs.openSync(path, flags);
  try {
    return addon().openInNetns(ns.path, 'file', path, flags);
  } catch (e) {
    throw explainNetnsError(e, ns);
  }
}

/** Runs fn on an open fd and closes it, whatever fn does. */
function withFd<T>(ns: NetnsHandle | undefined, path: string, flags: number, fn: (fd: number) => T): T {
  const fd = open(ns, path, flags);
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

const errnoOf = (e: unknown): string | undefined => (isSystemError(e) ? e.code : undefined);
const isPermission = (e: unknown): boolean => errnoOf(e) === 'EACCES' || errnoOf(e) === 'EPERM';

function permissionError(e: unknown, action: 'read' | 'write', name: string, ns: NetnsHandle | undefined): SysctlError {
  const code = errnoOf(e) === 'EPERM' ? 'EPERM' : 'EACCES';
  const enter = ns === undefined ? '' : '; entering another network namespace needs CAP_SYS_ADMIN';
  const what = action === 'write' ? `writing ${keyOf(name)} needs CAP_NET_ADMIN over its network namespace${enter}` : `reading ${keyOf(name)}${where(ns)} was refused${enter}`;
  return new SysctlError(code, `${what} (${SUDO_HINT})`);
}

function listDir(ns: NetnsHandle | undefined): string[] {
  if (ns === undefined) return fs.readdirSync(SMC_SYSCTL_DIR);
  // Node cannot list an fd, but /proc/self/fd/N leads to the very directory the fd holds (that of the
  // other namespace), without a new lookup in ours.
  return withFd(ns, SMC_SYSCTL_DIR, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY, (fd) => fs.readdirSync(`/proc/self/fd/${fd}`));
}

function discover(ns: NetnsHandle | undefined): string[] {
  let entries: string[];
  try {
    entries = listDir(ns);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') {
      throw new NoSmcError(`no SMC sysctls${where(ns)}: ${SMC_SYSCTL_DIR} does not exist; SMC needs CONFIG_SMC (try: modprobe smc)`);
    }
    if (isPermission(e) && ns !== undefined) {
      throw new SysctlError(errnoOf(e) === 'EPERM' ? 'EPERM' : 'EACCES', `entering the network namespace ${ns.label} needs CAP_SYS_ADMIN (${SUDO_HINT})`);
    }
    throw e;
  }
  // a name that could not be a sysctl is never offered, so it can never be opened
  return entries.filter((n) => SYSCTL_NAME.test(n)).sort();
}

function readFd(fd: number): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(4096);
  for (let total = 0; total < 1 << 20; ) {
    const n = fs.readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
  }
  return Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
}

/** Opens the sysctl directory of a namespace (a handle from openNetns, undefined = our own). */
export function openSmcSysctls(ns: NetnsHandle | undefined): SmcSysctlFiles {
  const names = discover(ns);
  const pathOf = (name: string): string => {
    // the callers check names first; this keeps the guarantee even if one does not
    if (!SYSCTL_NAME.test(name) || !names.includes(name)) throw new SysctlError('ENOSYSCTL', `${keyOf(name)} is not a sysctl${where(ns)}`);
    return `${SMC_SYSCTL_DIR}/${name}`;
  };
  const writeValue = (name: string, text: string): void => {
    const path = pathOf(name);
    try {
      withFd(ns, path, fs.constants.O_WRONLY, (fd) => {
        // one write from offset 0: the kernel parses each write() as a whole value
        const data = Buffer.from(`${text}\n`);
        const n = fs.writeSync(fd, data, 0, data.length, null);
        if (n !== data.length) throw new SysctlError('EINVAL', `${keyOf(name)}: the kernel took ${n} of ${data.length} bytes of "${text}"`);
      });
    } catch (e) {
      if (isPermission(e)) throw permissionError(e, 'write', name, ns);
      if (errnoOf(e) === 'EINVAL' && !(e instanceof SysctlError) && (e as { syscall?: string }).syscall === 'write') {
        // hs_ctrl takes the name of a loaded BPF struct_ops smc_hs_ctrl: EINVAL means none has that name
        const why = name === 'hs_ctrl' ? ': no BPF handshake controller (struct_ops smc_hs_ctrl) of that name is loaded' : '';
        throw new SysctlError('EINVAL', `the kernel refused "${text}" for ${keyOf(name)}${where(ns)} (EINVAL)${why}`, true);
      }
      throw e;
    }
  };
  return {
    ns,
    names,
    read(name) {
      const path = pathOf(name);
      try {
        return withFd(ns, path, fs.constants.O_RDONLY, readFd);
      } catch (e) {
        throw isPermission(e) ? permissionError(e, 'read', name, ns) : e;
      }
    },
    write(name, text) {
      // a --target that exited since the namespace was opened: nothing more is written for it
      ns?.checkTargetAlive();
      writeValue(name, text);
      holdForTests('sysctl');
    },
    restore(name, text) {
      writeValue(name, text);
    },
  };
}
