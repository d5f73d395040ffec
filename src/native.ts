// The only door to the C++ addon: loads it once and declares its whole surface with exact types.
// Everything above this file is typed TypeScript; the addon does syscalls only.
import { PACKAGE_ROOT } from './package-root';

export interface NativeAddon {
  /** socket(domain, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, protocol) -> fd */
  createSocket(domain: number, protocol: number): number;
  closeFd(fd: number): void;
  /** dup3 a fresh plain TCP socket (domain, non-blocking, close-on-exec) onto fd, closing the old one */
  replaceWithTcp(fd: number, domain: number): void;
  /** the same for any stream socket: socket(domain, SOCK_STREAM|..., protocol) dup3'd onto fd; throws with fd untouched */
  replaceSocket(fd: number, domain: number, protocol: number): void;
  getSockOptInt(fd: number, level: number, name: number): number;
  setSockOptInt(fd: number, level: number, name: number, value: number): void;
  /** the option's bytes (at most maxLength), e.g. struct tcp_info */
  getSockOptBytes(fd: number, level: number, name: number, maxLength: number): Buffer;
  /** st_ino of the fd, the key sock_diag reports per socket */
  fstatInode(fd: number): bigint;
  netlinkOpen(protocol: number): number;
  netlinkSend(fd: number, request: Uint8Array): void;
  /** one datagram, possibly holding several netlink messages */
  netlinkRecv(fd: number): Buffer;
  /**
   * off the main thread (a libuv pool job): send request when given, then receive one datagram; the
   * caller reads where the reply ends (NetlinkSocket.requestAsync)
   */
  netlinkExchangeAsync(fd: number, request?: Uint8Array | null): Promise<Buffer>;
  /** open a file (flags) or a netlink socket (protocol) inside the network namespace at nsPath */
  openInNetns(nsPath: string, kind: 'file' | 'netlink', filePath: string, flagsOrProtocol: number): number;
  /** openInNetns on a libuv pool thread: the event loop never waits for the helper thread */
  openInNetnsAsync(nsPath: string, kind: 'file' | 'netlink', filePath: string, flagsOrProtocol: number): Promise<number>;
  /** flock(2): operation LOCK_EX (2) or LOCK_UN (8), | LOCK_NB (4); a held lock with LOCK_NB throws code EAGAIN */
  flock(fd: number, operation: number): void;
}

/** An Error from the addon: errno name in `code`, like Node's own system errors. */
export interface SystemError extends Error {
  code: string;
  errno?: number;
  syscall?: string;
}

export function isSystemError(e: unknown): e is SystemError {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}

export type AddonState = { ok: true; addon: NativeAddon; path: string } | { ok: false; error: Error };

let state: AddonState | undefined;

/** Architectures with a prebuilt addon in the npm tarball (linux, glibc). */
export const PREBUILT_ARCHS = ['x64', 'arm64', 's390x'] as const;

/**
 * Path of the addon to load: SMC_RUN_ADDON when set (tests of the missing-addon path), else what
 * node-gyp-build picks: build/Release (built from source) first, then prebuilds/linux-<arch>/ of the tarball.
 * Throws when there is neither.
 */
export function addonPath(): string {
  if (process.env.SMC_RUN_ADDON) return process.env.SMC_RUN_ADDON;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nodeGypBuild = require('node-gyp-build') as { resolve(dir: string): string };
  try {
    return nodeGypBuild.resolve(PACKAGE_ROOT);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (!msg.startsWith('No native build was found')) throw e;
    const libc = /libc=(\w+)/.exec(msg)?.[1] ?? 'glibc';
    throw new Error(`no prebuilt addon for linux-${process.arch} (${libc}; prebuilt: linux ${PREBUILT_ARCHS.join(', ')} with glibc) and none built from source`);
  }
}

/** The one command that builds the addon from source for this installation (needs python3, make, g++). */
export function buildFromSourceCommand(): string {
  return `npm run build:native --prefix ${shellQuote(PACKAGE_ROOT)}`;
}

/** The fix named by the notice, doctor and ENOADDON: build from source. */
export function addonFix(): string {
  return `build it from source: ${buildFromSourceCommand()} (needs python3, make, g++)`;
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Loads the addon once; never throws (the shim must not break a program when the addon is absent). */
export function loadAddon(): AddonState {
  if (state) return state;
  try {
    const file = addonPath();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    state = { ok: true, addon: require(file) as NativeAddon, path: file };
  } catch (e) {
    state = { ok: false, error: e instanceof Error ? e : new Error(String(e)) };
  }
  return state;
}

/** The addon, or an Error with code ENOADDON saying how to build it. */
export function addon(): NativeAddon {
  const s = loadAddon();
  if (s.ok) return s.addon;
  const err = new Error(`smc-run's native addon cannot load (${firstLine(s.error.message)}); ${addonFix()}`) as SystemError;
  err.code = 'ENOADDON';
  throw err;
}

export function firstLine(s: string): string {
  return s.split('\n', 1)[0] ?? s;
}
