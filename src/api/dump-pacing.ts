// Pacing of the sock_diag dumps behind the promise API's per-socket lookups. The kernel has no per-socket
// filter for SMC sockets, so every lookup costs a dump of the whole namespace, and at thousands of sockets
// a dump keeps a CPU busy in the kernel for tens of milliseconds under emulation (about 29 ms at 2,000
// sockets under TCG). Under a stream of lookups, dumps back to back would keep that CPU busy all the time,
// taken from the event loop and the connections it serves. Paced, a dump that took T ms is followed by a
// pause of factor x T ms before the next one starts, so with factor 1 dumping takes at most half of a CPU;
// the lookups that arrive meanwhile share that next dump. After a quiet spell there is no pause.
export class DumpPacer {
  private lastEnd = Number.NEGATIVE_INFINITY;
  private lastTook = 0;

  /** factor: the pause after a dump, in multiples of the dump's own duration (0: no pacing) */
  constructor(private readonly factor: number) {}

  /** How long (ms) the next dump must wait at time `now` (same clock as record()); 0 = start it now. */
  delay(now: number): number {
    return Math.max(0, this.lastEnd + this.factor * this.lastTook - now);
  }

  /** A dump ran from `started` to `ended` (ms, e.g. performance.now()). */
  record(started: number, ended: number): void {
    this.lastEnd = ended;
    this.lastTook = Math.max(0, ended - started);
  }
}
