// smc-run/promises: the per-socket, listing and system API without blocking the event loop, following
// node:fs/promises. Every netlink request and receive runs on a libuv thread-pool thread (the addon's
// netlinkExchangeAsync, a datagram a job; a socket in another namespace is opened by a helper thread the
// pool waits for, openInNetnsAsync); the parsing, policy and types are the sync API's own (src/stats, src/netlink).
// getSmcInfo calls made in the same tick share one sock_diag dump: the kernel has no per-socket filter for
// SMC sockets, so one dump answers them all, and only their rows are kept as the datagrams arrive; dumps are
// paced (api/dump-pacing.ts) so that a stream of lookups does not keep a CPU dumping.
import type * as net from 'node:net';
import { addon } from '../native';
import type { NamespaceTarget } from '../netns';
import { NetlinkSocket } from '../netlink/socket';
import { findSmcMessagesAsync, openSockDiag, parseSmcDiagMessage } from '../netlink/sockdiag';
import { dumpPacingForTests } from '../test-hooks';
import { readSmcSockets } from '../stats/async-readings';
import { familyOf, fdOf, openSockDiagForAsync, tcpInfo, toSocketInfo, withOwnAddresses, type SmcSocketInfo } from '../stats/sockets';
import type { SmcSystemStats } from '../stats/system';
import { DumpPacer } from './dump-pacing';
import { withSmcGenlAsync } from './genl';
import { QUERIES, runQueryAsync, type SmcDevices, type SmcLinkGroups, type SmcSystemInfo } from './queries';
import { kernelReportsSmc } from './smc-socket';

export type { SmcSocketInfo, SmcMode, SmcFallbackInfo } from '../stats/sockets';
export type { SmcSystemStats } from '../stats/system';
export type { SmcDevices, SmcLinkGroups, SmcSystemInfo } from './queries';
export type { NamespaceTarget } from '../netns';

interface Pending {
  socket: net.Socket;
  fd: number;
  inode: bigint;
  family: number;
  /** dumps this call has been looked up in */
  dumps: number;
  resolve: (info: SmcSocketInfo) => void;
  reject: (e: unknown) => void;
}

/**
 * The kernel resumes a multi-part SMC sock_diag dump by position in its socket list, so a socket can be
 * missed when others close while the dump is read (seen in the SMC-D guest under connection churn). An
 * SMC socket a dump did not list is looked up again, up to this many dumps in all.
 */
const MAX_DUMPS = 3;

/** The calls waiting for the next dump, and whether one is being read now (at most one at a time). */
let waiting: Pending[] = [];
let scheduled = false;
let inFlight = false;
/** paced unless the bench compares without (src/test-hooks.ts) */
const pacer = new DumpPacer(dumpPacingForTests() ? 1 : 0);

/** One dump in the caller's namespace, off the main thread, keeping only the rows of these inodes. */
async function dumpRows(inodes: bigint[]): Promise<Map<bigint, Buffer> | undefined> {
  let nl: NetlinkSocket;
  try {
    nl = openSockDiag();
  } catch {
    return undefined; // no sock_diag for netlink here: nothing is an SMC socket
  }
  try {
    return await findSmcMessagesAsync(nl, inodes);
  } catch (e) {
    // ENOENT: this kernel has no SMC sock_diag (smc_diag not loaded): nothing is an SMC socket
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  } finally {
    nl.close();
  }
}

/** The socket is still open and the kernel says it is an SMC socket (so a dump must list it). */
function stillSmc(p: Pending): boolean {
  if (p.socket.destroyed) return false;
  try {
    return kernelReportsSmc(p.fd);
  } catch {
    return false;   // closed meanwhile (EBADF)
  }
}

async function runBatch(batch: Pending[]): Promise<void> {
  inFlight = true;
  const started = performance.now();
  try {
    const rows = await dumpRows(batch.map((p) => p.inode));
    for (const p of batch) {
      try {
        p.dumps++;
        const payload = rows?.get(p.inode);
        if (payload) {
          const row = parseSmcDiagMessage(payload);
          p.resolve(withOwnAddresses(toSocketInfo(row, p.family), row, p.socket));
        }
        else if (rows && p.dumps < MAX_DUMPS && stillSmc(p)) waiting.push(p);
        else p.resolve(tcpInfo(p.socket, p.family, p.inode));
      } catch (e) {
        p.reject(e);
      }
    }
  } catch (e) {
    for (const p of batch) p.reject(e);
  } finally {
    inFlight = false;
    pacer.record(started, performance.now());
    // calls that came while this dump was read need a newer one: their sockets may be younger
    if (waiting.length > 0) schedule();
  }
}

function startBatch(): void {
  scheduled = false;
  const batch = waiting;
  waiting = [];
  void runBatch(batch);
}

function schedule(): void {
  if (scheduled || inFlight) return;
  scheduled = true;
  const wait = pacer.delay(performance.now());
  if (wait >= 1) setTimeout(startBatch, wait);
  else process.nextTick(startBatch);
}

/**
 * The SMC state of one socket, as getSmcInfo() gives it, without blocking the event loop. All calls of
 * one tick are answered from one dump; a call made while a dump is being read, or soon after (the
 * pacing), waits for the next one.
 * Rejects with a TypeError for a destroyed or not yet connected socket, as the sync twin throws.
 */
export function getSmcInfo(socket: net.Socket): Promise<SmcSocketInfo> {
  try {
    const fd = fdOf(socket);
    const inode = addon().fstatInode(fd);
    return new Promise((resolve, reject) => {
      waiting.push({ socket, fd, inode, family: familyOf(socket), dumps: 0, resolve, reject });
      schedule();
    });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Every SMC socket of the caller's or the target's namespace, as listSmcSockets() gives them. */
export async function listSmcSockets(opts: NamespaceTarget = {}): Promise<SmcSocketInfo[]> {
  const nl = await openSockDiagForAsync(opts);
  try {
    return await readSmcSockets(nl);
  } finally {
    nl.close();
  }
}

/** The SMC counters of the namespace, as getSmcSystemStats() gives them. */
export function getSmcSystemStats(target: NamespaceTarget = {}): Promise<SmcSystemStats> {
  return withSmcGenlAsync(target, (g) => runQueryAsync(g, QUERIES.systemStats));
}

/** SMC-D and SMC-R devices and loopback-ism, as getSmcDevices() gives them. */
export function getSmcDevices(target: NamespaceTarget = {}): Promise<SmcDevices> {
  return withSmcGenlAsync(target, (g) => runQueryAsync(g, QUERIES.devices));
}

/** SMC-D and SMC-R link groups (with SMC-R links), as getSmcLinkGroups() gives them. */
export function getSmcLinkGroups(target: NamespaceTarget = {}): Promise<SmcLinkGroups> {
  return withSmcGenlAsync(target, (g) => runQueryAsync(g, QUERIES.linkGroups));
}

/** System info, as getSmcSystemInfo() gives it. */
export function getSmcSystemInfo(target: NamespaceTarget = {}): Promise<SmcSystemInfo> {
  return withSmcGenlAsync(target, (g) => runQueryAsync(g, QUERIES.systemInfo));
}
