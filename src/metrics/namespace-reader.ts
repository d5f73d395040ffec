// One namespace of a long-running exporter, opened once: the namespace handle (an fd, so a --target PID is
// resolved at start and never again), a generic netlink socket with the SMC family resolved once, and a
// sock_diag socket, all kept between scrapes. A target that exits (or whose --netns path is removed or
// re-created) is gone for good: smc_up 0 with that reason, its handle and sockets closed, never the
// namespace its PID or path leads to now.
import * as fs from 'node:fs';
import { NETLINK_GENERIC, NETLINK_SOCK_DIAG } from '../constants';
import { noSmcError } from '../api/errors';
import { explainNetnsError, openNetns, TargetError, type NetnsHandle } from '../netns';
import { SmcGenl } from '../netlink/smc-genl';
import { NetlinkSocket } from '../netlink/socket';
import { QUERIES, runQueryAsync } from '../api/queries';
import { readSmcSockets } from '../stats/async-readings';
import { labelOf, type MetricsTarget } from './collect';
import type { NamespaceReading } from './families';
import { sharedWhileRunning } from './shared-call';

const codeOf = (e: unknown): string | undefined => (e as { code?: unknown }).code as string | undefined;

function errorOf(e: unknown): { code: string; message: string } {
  const err = e as { code?: unknown; message?: unknown };
  return { code: typeof err.code === 'string' ? err.code : 'EUNKNOWN', message: String(err.message ?? e) };
}

export class NamespaceReader {
  private genlSocket: NetlinkSocket | undefined;
  private genl: SmcGenl | undefined;
  private diag: NetlinkSocket | undefined;
  private gone: { code: string; message: string; reason: string } | undefined;
  /** family resolutions so far (one per namespace unless the family went away) */
  resolutions = 0;

  private constructor(
    readonly label: string,
    /** the namespace's inode (what /proc/PID/ns/net reads as net:[INO]) */
    readonly inode: number,
    private handle: NetnsHandle | undefined,
    private readonly target: MetricsTarget,
  ) {}

  /** Opens the target's namespace now; a PID or path that is not there is a TargetError (one line). */
  static open(t: MetricsTarget): NamespaceReader {
    const handle = openNetns(t);
    const inode = handle?.inode ?? fs.statSync('/proc/self/ns/net').ino;
    return new NamespaceReader(labelOf(t), inode, handle, t);
  }

  /** One reading of the namespace; calls while one runs share it (the sockets take one request at a time). */
  readonly read: () => Promise<NamespaceReading> = sharedWhileRunning(() => this.readOnce());

  private async readOnce(): Promise<NamespaceReading> {
    const start = process.hrtime.bigint();
    const reading: NamespaceReading = { netns: this.label, seconds: 0 };
    try {
      this.checkStillThere();
      reading.stats = await this.withGenl((g) => runQueryAsync(g, QUERIES.systemStats));
      reading.sockets = await this.withDiag(readSmcSockets);
      reading.devices = await this.withGenl((g) => runQueryAsync(g, QUERIES.devices));
      reading.linkGroups = await this.withGenl((g) => runQueryAsync(g, QUERIES.linkGroups));
    } catch (e) {
      reading.error = this.gone ?? errorOf(noSmcError(e));
    }
    reading.seconds = Number(process.hrtime.bigint() - start) / 1e9;
    return reading;
  }

  /** Throws (and closes everything) once the target has gone: its PID exited, or its path leads elsewhere. */
  private checkStillThere(): void {
    if (this.gone) throw new TargetError(this.gone.code, this.gone.message);
    const h = this.handle;
    if (h === undefined) return;
    try {
      if (this.target.target !== undefined) {
        h.checkTargetAlive();
      } else {
        let ino: number | undefined;
        try {
          ino = fs.statSync(h.label).ino;
        } catch {
          ino = undefined;
        }
        if (ino !== this.inode) throw new TargetError('ENOENT', `${h.label} no longer leads to the network namespace this exporter started with (removed or re-created)`);
      }
    } catch (e) {
      const err = errorOf(e);
      const reason = this.target.target !== undefined ? 'target_exited' : 'netns_gone';
      const message = this.target.target !== undefined ? `PID ${this.target.target} exited (or its PID now names another process)` : err.message;
      this.gone = { code: err.code, message, reason };
      this.close();
      throw e;
    }
  }

  private openSocket(protocol: number): NetlinkSocket {
    try {
      return NetlinkSocket.open(protocol, this.handle?.path);
    } catch (e) {
      throw explainNetnsError(e, this.handle);
    }
  }

  /**
   * Runs fn on the SMC family, resolved once per namespace. ENOENT from a request on a resolved family
   * means the family went away (the smc module unloaded, maybe loaded again with another id): resolved
   * again, once. Any other error discards the socket, which may still hold the rest of a reply.
   */
  private async withGenl<T>(fn: (g: SmcGenl) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      this.genlSocket ??= this.openSocket(NETLINK_GENERIC);
      if (this.genl === undefined) {
        this.resolutions++;
        try {
          this.genl = await SmcGenl.resolveAsync(this.genlSocket);
        } catch (e) {
          if (codeOf(e) !== 'ENOENT') this.dropGenlSocket();
          throw e;
        }
      }
      try {
        return await fn(this.genl);
      } catch (e) {
        const familyGone = codeOf(e) === 'ENOENT';
        if (familyGone) this.genl = undefined;
        else this.dropGenlSocket();
        if (!familyGone || attempt > 0) throw e;
      }
    }
  }

  private async withDiag<T>(fn: (nl: NetlinkSocket) => Promise<T>): Promise<T> {
    this.diag ??= this.openSocket(NETLINK_SOCK_DIAG);
    try {
      return await fn(this.diag);
    } catch (e) {
      // ENOENT (no SMC sock_diag) is a complete reply; anything else may leave the rest of a dump behind
      if (codeOf(e) !== 'ENOENT') {
        this.diag.close();
        this.diag = undefined;
      }
      throw e;
    }
  }

  private dropGenlSocket(): void {
    this.genl = undefined;
    this.genlSocket?.close();
    this.genlSocket = undefined;
  }

  /** Closes the sockets and the namespace handle (a gone target's namespace is not kept alive by us). */
  close(): void {
    this.dropGenlSocket();
    this.diag?.close();
    this.diag = undefined;
    this.handle?.close();
    this.handle = undefined;
  }

  /** Whether the target was found gone (then it stays gone). */
  get goneReason(): string | undefined {
    return this.gone?.reason;
  }
}
