// smc-run/promises: the per-socket and listing API without blocking the event loop, following
// node:fs/promises. Every netlink request and receive runs on a libuv thread-pool thread (the addon's
// netlinkRequestAsync); the parsing, policy and types are the sync API's own (src/stats, src/netlink).
// getSmcInfo calls made in the same tick share one sock_diag dump: the kernel has no per-socket filter for
// SMC sockets, so one dump answers them all.
import type * as net from 'node:net';
import { addon } from './native';
import { explainNetnsError, resolveNetns, type NamespaceTarget } from './netns';
import { NetlinkSocket } from './netlink/socket';
import { dumpSmcMessagesAsync, openSockDiag, parseSmcDiagMessage, payloadsByInode } from './netlink/sockdiag';
import { familyOf, fdOf, tcpInfo, toSocketInfo, type SmcSocketInfo } from './stats/sockets';

export type { SmcSocketInfo, SmcMode, SmcFallbackInfo } from './stats/sockets';

interface Pending {
  socket: net.Socket;
  inode: bigint;
  family: number;
  resolve: (info: SmcSocketInfo) => void;
  reject: (e: unknown) => void;
}

/** The calls waiting for the next dump, and whether one is being read now (at most one at a time). */
let waiting: Pending[] = [];
let scheduled = false;
let inFlight = false;

/** Dumps one generation of SMC sockets in the caller's namespace, off the main thread. */
async function dumpPayloads(): Promise<Map<bigint, Buffer> | undefined> {
  let nl: NetlinkSocket;
  try {
    nl = openSockDiag();
  } catch {
    return undefined; // no sock_diag for netlink here: nothing is an SMC socket
  }
  try {
    return payloadsByInode(await dumpSmcMessagesAsync(nl));
  } catch (e) {
    // ENOENT: this kernel has no SMC sock_diag (smc_diag not loaded): nothing is an SMC socket
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  } finally {
    nl.close();
  }
}

async function runBatch(batch: Pending[]): Promise<void> {
  inFlight = true;
  try {
    const byInode = await dumpPayloads();
    for (const p of batch) {
      try {
        const payload = byInode?.get(p.inode);
        p.resolve(payload ? toSocketInfo(parseSmcDiagMessage(payload), p.family) : tcpInfo(p.socket, p.family, p.inode));
      } catch (e) {
        p.reject(e);
      }
    }
  } catch (e) {
    for (const p of batch) p.reject(e);
  } finally {
    inFlight = false;
    // calls that came while this dump was read need a newer one: their sockets may be younger
    if (waiting.length > 0) schedule();
  }
}

function schedule(): void {
  if (scheduled || inFlight) return;
  scheduled = true;
  process.nextTick(() => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    void runBatch(batch);
  });
}

/**
 * The SMC state of one socket, as getSmcInfo() gives it, without blocking the event loop. All calls of
 * one tick are answered from one dump; a call made while a dump is being read waits for the next one.
 * Rejects with a TypeError for a destroyed or not yet connected socket, as the sync twin throws.
 */
export function getSmcInfo(socket: net.Socket): Promise<SmcSocketInfo> {
  try {
    const fd = fdOf(socket);
    const inode = addon().fstatInode(fd);
    return new Promise((resolve, reject) => {
      waiting.push({ socket, inode, family: familyOf(socket), resolve, reject });
      schedule();
    });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Every SMC socket of the caller's or the target's namespace, as listSmcSockets() gives them. */
export async function listSmcSockets(opts: NamespaceTarget = {}): Promise<SmcSocketInfo[]> {
  const ns = resolveNetns(opts);
  let nl: NetlinkSocket;
  try {
    nl = openSockDiag(ns);
  } catch (e) {
    throw explainNetnsError(e, ns);
  }
  try {
    return (await dumpSmcMessagesAsync(nl)).map((p) => toSocketInfo(parseSmcDiagMessage(p)));
  } finally {
    nl.close();
  }
}
