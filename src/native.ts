// The only door to the C++ addon: loads it once and declares its whole surface with exact types.
// Everything above this file is typed TypeScript; the addon does syscalls only.
import * as path from 'node:path';

export interface NativeAddon {
  /** socket(domain, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, protocol) -> fd */
  createSocket(domain: number, protocol: number): number;
  closeFd(fd: number): void;
  /** dup3 a fresh plain TCP socket (domain, non-blocking, close-on-exec) onto fd, closing the old one */
  replaceWithTcp(fd: number, domain: number): void;
  getSockOptInt(fd: number, level: number, name: number): number;
  setSockOptInt(fd: number, level: number, name: number, value: number): void;
  /** st_ino of the fd, the key sock_diag reports per socket */
  fstatInode(fd: number): bigint;
  netlinkOpen(protocol: number): number;
  netlinkSend(fd: number, request: Uint8Array): void;
  /** one datagram, possibly holding several netlink messages */
  netlinkRecv(fd: number): Buffer;
  /** send one request and receive its whole reply off the main thread (libuv thread pool) */
  netlinkRequestAsync(fd: number, request: Uint8Array, seq: number): Promise<Buffer[]>;
  /** open a file (flags) or a netlink socket (protocol) inside the network namespace at nsPath */
  openInNetns(nsPath: string, kind: 'file' | 'netlink', filePath: string, flagsOrProtocol: number): number;
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

export type AddonState = { ok: true; addon: NativeAddon } | { ok: false; error: Error };

let state: AddonState | undefined;

/** Path of the compiled addon; SMC_RUN_ADDON overrides it (tests of the missing-addon path). */
export function addonPath(): string {
  return process.env.SMC_RUN_ADDON ?? path.join(__dirname, '..', 'build', 'Release', 'smc_run.node');
}

/** Loads the addon once; never throws (the shim must not break a program when the addon is absent). */
export function loadAddon(): AddonState {
  if (state) return state;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    state = { ok: true, addon: require(addonPath()) as NativeAddon };
  } catch (e) {
    state = { ok: false, error: e instanceof Error ? e : new Error(String(e)) };
  }
  return state;
}

/** The addon, or an Error with code ENOADDON saying how to build it. */
export function addon(): NativeAddon {
  const s = loadAddon();
  if (s.ok) return s.addon;
  const err = new Error(
    `smc-run's native addon is not built or cannot load (${firstLine(s.error.message)}); run "npm rebuild smc-run" with a C++ toolchain (python3, make, g++)`,
  ) as SystemError;
  err.code = 'ENOADDON';
  throw err;
}

export function firstLine(s: string): string {
  return s.split('\n', 1)[0] ?? s;
}
