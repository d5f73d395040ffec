// A netlink socket (optionally opened inside another network namespace) that sends one request and
// collects its replies: multi-part dumps up to NLMSG_DONE, acks, and NLMSG_ERROR as typed errors.
import * as os from 'node:os';
import { addon, type SystemError } from '../native';
import { i32, u64 } from './host-order';
import { NetlinkParseError, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLM_F_ACK, NLM_F_DUMP, NLM_F_MULTI, buildMessage, parseMessages, type NlMessage } from './message';

const ERRNO_NAMES = new Map<number, string>(Object.entries(os.constants.errno).map(([name, n]) => [n, name]));

/** The kernel answered a request with an error (errno in `code`, e.g. "EPERM"). */
export class NetlinkError extends Error implements SystemError {
  readonly syscall = 'netlink';
  constructor(
    readonly errno: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  static fromErrno(errno: number, what: string): NetlinkError {
    const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
    return new NetlinkError(errno, code, `${what}: ${code} (${describe(errno)})`);
  }
}

function describe(errno: number): string {
  // util.getSystemErrorMessage arrived in Node 23; the libuv map has the same texts for these
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const util = require('node:util') as { getSystemErrorMap?: () => Map<number, [string, string]> };
    return util.getSystemErrorMap?.().get(-errno)?.[1] ?? `errno ${errno}`;
  } catch {
    return `errno ${errno}`;
  }
}

const MAX_DATAGRAMS = 1_000_000; // a dump longer than this is a kernel or parser bug, not data

/**
 * Keeps, of a dump's messages of `type`, only those whose host-order u64 at payload `offset` is one of
 * `keys`; messages of other types pass. Applied datagram by datagram as they arrive, so a lookup of a few
 * sockets in a dump of thousands keeps only those few.
 */
export interface ReplyFilter {
  type: number;
  offset: number;
  keys: BigUint64Array;
}

/** Collects one request's reply from its datagrams; the sync and async requests share it. */
class Reply {
  readonly messages: NlMessage[] = [];
  private readonly keep: ((msg: NlMessage) => boolean) | undefined;
  constructor(
    private readonly seq: number,
    private readonly flags: number,
    private readonly what: string,
    filter?: ReplyFilter,
  ) {
    if (filter !== undefined) {
      const keys = new Set(filter.keys);
      const { type, offset } = filter;
      this.keep = (m) => m.type !== type || (m.payload.length >= offset + 8 && keys.has(u64(m.payload, offset)));
    }
  }

  /** Takes one datagram; true once the reply is complete. Throws NetlinkError for a kernel error. */
  take(datagram: Buffer): boolean {
    let multi = false;
    for (const msg of parseMessages(datagram)) {
      if (msg.seq !== this.seq) continue; // a stale reply to an earlier, abandoned request
      if (msg.type === NLMSG_ERROR) {
        if (msg.payload.length < 4) throw new NetlinkParseError(`${this.what}: truncated NLMSG_ERROR`);
        const err = -i32(msg.payload, 0);
        if (err !== 0) throw NetlinkError.fromErrno(err, this.what);
        return true; // an ack
      }
      if (msg.type === NLMSG_DONE) {
        const err = msg.payload.length >= 4 ? -i32(msg.payload, 0) : 0;
        if (err > 0) throw NetlinkError.fromErrno(err, this.what);
        return true;
      }
      if (msg.type === NLMSG_NOOP) continue;
      if (msg.flags & NLM_F_MULTI) multi = true;
      if (this.keep === undefined || this.keep(msg)) this.messages.push(msg);
    }
    // a single-part reply without NLM_F_ACK ends with its one message
    return !multi && !(this.flags & NLM_F_ACK) && this.messages.length > 0;
  }
}

export class NetlinkSocket {
  private seq = Math.floor(Math.random() * 0x7fffffff);
  private closed = false;

  private constructor(
    private readonly fd: number,
    readonly protocol: number,
  ) {}

  /** Opens a socket for the netlink protocol, in the network namespace at netnsPath if given. */
  static open(protocol: number, netnsPath?: string): NetlinkSocket {
    const a = addon();
    const fd = netnsPath === undefined ? a.netlinkOpen(protocol) : a.openInNetns(netnsPath, 'netlink', '', protocol);
    return new NetlinkSocket(fd, protocol);
  }

  /** open() for the promise API: the helper thread that joins another namespace is waited for off the main thread. */
  static async openAsync(protocol: number, netnsPath?: string): Promise<NetlinkSocket> {
    const a = addon();
    const fd = netnsPath === undefined ? a.netlinkOpen(protocol) : await a.openInNetnsAsync(netnsPath, 'netlink', '', protocol);
    return new NetlinkSocket(fd, protocol);
  }

  private nextSeq(): number {
    if (this.closed) throw new Error('netlink socket closed');
    return (this.seq = (this.seq + 1) >>> 0);
  }

  /**
   * Sends one request and returns the reply messages (not the DONE/ACK terminators). A dump ends at
   * NLMSG_DONE; a plain request with NLM_F_ACK ends at its ack. Blocks the calling thread while the
   * kernel builds the reply: requestAsync is the event-loop-friendly twin.
   */
  request(type: number, flags: number, payload: Buffer, what: string): NlMessage[] {
    const seq = this.nextSeq();
    const a = addon();
    a.netlinkSend(this.fd, buildMessage(type, flags, seq, payload));
    const reply = new Reply(seq, flags, what);
    for (let i = 0; i < MAX_DATAGRAMS; i++) if (reply.take(a.netlinkRecv(this.fd))) return reply.messages;
    throw new NetlinkParseError(`${what}: reply never ended`);
  }

  /**
   * request() with the send and every receive on a libuv thread-pool thread, one datagram a job: the
   * event loop keeps running while the kernel builds a large dump or a reply is late. For dumps and acked
   * requests (their reply always ends in NLMSG_DONE or NLMSG_ERROR). One request at a time per socket.
   */
  async requestAsync(type: number, flags: number, payload: Buffer, what: string, filter?: ReplyFilter): Promise<NlMessage[]> {
    if (!(flags & (NLM_F_DUMP | NLM_F_ACK))) throw new TypeError(`${what}: requestAsync needs a dump or an acked request`);
    const seq = this.nextSeq();
    const a = addon();
    const reply = new Reply(seq, flags, what, filter);
    let request: Buffer | null = buildMessage(type, flags, seq, payload);
    for (let i = 0; i < MAX_DATAGRAMS; i++) {
      const datagram = await a.netlinkExchangeAsync(this.fd, request);
      request = null;
      if (reply.take(datagram)) return reply.messages;
    }
    throw new NetlinkParseError(`${what}: reply never ended`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    addon().closeFd(this.fd);
  }

}
