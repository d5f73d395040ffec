// One vocabulary for "where": `--target PID` = the network namespace of that process (as nsenter -t),
// `--netns PATH|NAME` = that namespace (/run/netns/NAME for a bare name). A command opens the namespace
// once, as an fd (a handle), and every later step enters it through /proc/self/fd/N: the PID or path is
// never looked up again between a read, a write and the read-back, so a PID that exits or is reused, or a
// name that is re-created, cannot move a command into another namespace half-way.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NETLINK_ROUTE, SOL_SOCKET, SO_NETNS_COOKIE } from './constants';
import { addon } from './native';
import { SUDO_HINT } from './permission-hint';
import { processStartTime } from './proc/stat';
import { holdForTests } from './test-hooks';

export interface NamespaceTarget {
  /** act in the network namespace of this process */
  target?: number | undefined;
  /** a netns path (/proc/PID/ns/net, /run/netns/NAME) or a name under /run/netns */
  netns?: string | undefined;
  /** a namespace this command opened already: the steps of one command share its handle */
  handle?: NetnsHandle | undefined;
}

export class TargetError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An open network namespace: the fd keeps it, and `path` always leads to it. */
export interface NetnsHandle {
  /** what the native layer enters (setns): /proc/self/fd/N of this handle's fd */
  readonly path: string;
  /** the open fd itself, for a child process that enters the namespace (its stdio slot) */
  readonly fd: number;
  /** for messages: /proc/PID/ns/net or the --netns path as given */
  readonly label: string;
  /** the namespace's inode (what /proc/PID/ns/net reads as net:[INO]) */
  readonly inode: number;
  /** throws ESRCH when the --target process has exited (or its PID now names another process) */
  checkTargetAlive(): void;
  close(): void;
}

/** The initial PID namespace's inode, fixed by the kernel (PROC_PID_INIT_INO in include/linux/proc_ns.h). */
const INITIAL_PID_NS_INODE = 0xeffffffc;

/** This process is in a PID namespace below the initial one (a container's): host PIDs are not visible. */
function inChildPidNamespace(): boolean {
  try {
    return fs.statSync('/proc/self/ns/pid').ino !== INITIAL_PID_NS_INODE;
  } catch {
    return false;
  }
}

function noSuchProcess(pid: number): TargetError {
  const here = inChildPidNamespace() ? ' in this PID namespace (smc-run runs in a PID namespace of its own: give the PID as seen from here)' : '';
  return new TargetError('ESRCH', `no process with PID ${pid}${here}`);
}

function openTarget(pid: number): { fd: number; label: string } {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new TargetError('EUSAGE', `--target ${pid}: not a PID`);
  const label = `/proc/${pid}/ns/net`;
  if (!fs.existsSync(`/proc/${pid}`)) throw noSuchProcess(pid);
  try {
    return { fd: fs.openSync(label, fs.constants.O_RDONLY), label };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new TargetError('EPERM', `cannot open the network namespace of PID ${pid}: not permitted (${SUDO_HINT})`);
    }
    // a zombie still has /proc/PID but no namespaces any more
    if (processStartTime(pid) === undefined) throw noSuchProcess(pid);
    throw new TargetError('ESRCH', `PID ${pid} has no network namespace any more (it is exiting: ${code})`);
  }
}

function openPath(netns: string): { fd: number; label: string } {
  if (!netns.includes('/') && !/^[A-Za-z0-9_.-]+$/.test(netns)) {
    throw new TargetError('EUSAGE', `--netns ${netns}: not a namespace name or path`);
  }
  const label = netns.includes('/') ? netns : path.join('/run/netns', netns);
  let fd: number;
  try {
    fd = fs.openSync(label, fs.constants.O_RDONLY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw new TargetError('EPERM', `cannot open ${label}: not permitted (${SUDO_HINT})`);
    throw new TargetError('ENOENT', `no network namespace at ${label}`);
  }
  return { fd, label };
}

/** Opens the namespace of a target, or returns undefined for the caller's own namespace. */
export function openNetns(t: NamespaceTarget): NetnsHandle | undefined {
  if (t.target !== undefined && t.netns !== undefined) {
    throw new TargetError('EUSAGE', 'give either --target PID or --netns PATH|NAME, not both');
  }
  if (t.handle !== undefined) return { ...t.handle, close: () => undefined }; // the opener closes it
  if (t.target === undefined && t.netns === undefined) return undefined;
  const pid = t.target;
  const { fd, label } = pid !== undefined ? openTarget(pid) : openPath(t.netns!);
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    // a directory, a device...: namespace files are regular files of nsfs (setns tells the kind)
    fs.closeSync(fd);
    throw new TargetError('EINVAL', `${label} is not a network namespace`);
  }
  const started = pid === undefined ? undefined : processStartTime(pid);
  holdForTests('netns');
  let open = true;
  return {
    path: `/proc/self/fd/${fd}`,
    fd,
    label,
    inode: st.ino,
    checkTargetAlive() {
      if (pid === undefined) return;
      const now = processStartTime(pid);
      if (now === undefined || now !== started) {
        throw new TargetError('ESRCH', `PID ${pid} exited while the command ran`);
      }
    },
    close() {
      if (open) fs.closeSync(fd);
      open = false;
    },
  };
}

/**
 * The namespace's cookie (SO_NETNS_COOKIE, Linux 5.14+), the key the BPF switch keeps it under: never
 * reused, unlike the inode. Read from a netlink socket opened in it (the option is a u64 in host order).
 */
export function netnsCookie(ns: NetnsHandle): string {
  const a = addon();
  const fd = a.openInNetns(ns.path, 'netlink', '', NETLINK_ROUTE);
  try {
    const b = a.getSockOptBytes(fd, SOL_SOCKET, SO_NETNS_COOKIE, 8);
    return (os.endianness() === 'LE' ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0)).toString();
  } finally {
    a.closeFd(fd);
  }
}

/** Runs fn with the target's namespace open (undefined = the caller's own), and closes it after. */
export function withNetns<T>(t: NamespaceTarget, fn: (ns: NetnsHandle | undefined) => T): T {
  const ns = openNetns(t);
  try {
    return fn(ns);
  } finally {
    ns?.close();
  }
}

/** A target that is the namespace already open in ns (or the caller's own), for the steps of one command. */
export const pinned = (ns: NetnsHandle | undefined): NamespaceTarget => (ns === undefined ? {} : { handle: ns });

/** Runs fn with a target pinned to the namespace opened once for the whole of fn. */
export function withPinnedNetns<T>(t: NamespaceTarget, fn: (pinnedTarget: NamespaceTarget) => T): T {
  return withNetns(t, (ns) => fn(pinned(ns)));
}

/** withPinnedNetns for work that awaits; the namespace stays open until fn settles. */
export async function withPinnedNetnsAsync<T>(t: NamespaceTarget, fn: (pinnedTarget: NamespaceTarget) => Promise<T>): Promise<T> {
  const ns = openNetns(t);
  try {
    return await fn(pinned(ns));
  } finally {
    ns?.close();
  }
}

/** Checks that a target can be opened (e.g. at start-up of a long-running command), and lets it go. */
export function checkNetns(t: NamespaceTarget): void {
  withNetns(t, () => undefined);
}

/** Turns the setns failure of a handle that is open but no netns into a clear message. */
export function explainNetnsError(e: unknown, ns: NetnsHandle | undefined): unknown {
  const code = (e as { code?: string }).code;
  const syscall = (e as { syscall?: string }).syscall;
  if (ns === undefined || syscall !== 'setns') return e;
  if (code === 'EINVAL') return new TargetError('EINVAL', `${ns.label} is not a network namespace`);
  if (code === 'EPERM') return new TargetError('EPERM', `entering the network namespace ${ns.label} needs CAP_SYS_ADMIN (${SUDO_HINT})`);
  return e;
}
