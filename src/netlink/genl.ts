// Generic netlink: resolve a family id by name (nlctrl), build and parse genl messages.
import { NETLINK_GENERIC } from '../constants';
import { Attrs, buildStringAttr, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, NetlinkParseError, type NlMessage } from './message';
import { NetlinkError, NetlinkSocket } from './socket';

const GENL_ID_CTRL = 0x10;
const CTRL_CMD_GETFAMILY = 3;
const CTRL_ATTR_FAMILY_ID = 1;
const CTRL_ATTR_FAMILY_NAME = 2;
const GENL_HDRLEN = 4;

export function buildGenl(cmd: number, version: number, attrs: Buffer = Buffer.alloc(0)): Buffer {
  const hdr = Buffer.alloc(GENL_HDRLEN);
  hdr.writeUInt8(cmd, 0);
  hdr.writeUInt8(version, 1);
  return Buffer.concat([hdr, attrs]);
}

export interface GenlMessage {
  cmd: number;
  attrs: Attrs;
}

export function parseGenl(payload: Buffer): GenlMessage {
  if (payload.length < GENL_HDRLEN) throw new NetlinkParseError(`genl message: ${payload.length} bytes`);
  return { cmd: payload.readUInt8(0), attrs: Attrs.parse(payload.subarray(GENL_HDRLEN)) };
}

const getFamilyRequest = (name: string): Buffer => buildGenl(CTRL_CMD_GETFAMILY, 1, buildStringAttr(CTRL_ATTR_FAMILY_NAME, name));

function familyError(e: unknown, name: string): unknown {
  if (e instanceof NetlinkError && e.code === 'ENOENT') return new NetlinkError(e.errno, 'ENOENT', `the kernel has no generic netlink family ${name}`);
  return e;
}

function familyId(replies: readonly NlMessage[], name: string): number {
  const first = replies[0];
  if (!first) throw new NetlinkParseError(`resolve ${name}: no reply`);
  const id = parseGenl(first.payload).attrs.u16(CTRL_ATTR_FAMILY_ID);
  if (id === undefined) throw new NetlinkParseError(`resolve ${name}: no family id in reply`);
  return id;
}

/** A generic netlink family on one socket (resolved once). */
export class GenlFamily {
  private constructor(
    readonly socket: NetlinkSocket,
    readonly id: number,
    readonly version: number,
  ) {}

  /** Resolves `name`; ENOENT (as a NetlinkError) when the kernel does not have that family. */
  static resolve(socket: NetlinkSocket, name: string, version: number): GenlFamily {
    let replies;
    try {
      replies = socket.request(GENL_ID_CTRL, NLM_F_REQUEST, getFamilyRequest(name), `resolve ${name}`);
    } catch (e) {
      throw familyError(e, name);
    }
    return new GenlFamily(socket, familyId(replies, name), version);
  }

  /** resolve() with the request and its receive off the main thread (acked, so the reply has an end). */
  static async resolveAsync(socket: NetlinkSocket, name: string, version: number): Promise<GenlFamily> {
    let replies;
    try {
      replies = await socket.requestAsync(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, getFamilyRequest(name), `resolve ${name}`);
    } catch (e) {
      throw familyError(e, name);
    }
    return new GenlFamily(socket, familyId(replies, name), version);
  }

  dump(cmd: number, what: string, attrs?: Buffer): GenlMessage[] {
    return this.socket.request(this.id, NLM_F_REQUEST | NLM_F_DUMP, buildGenl(cmd, this.version, attrs), what).map((m) => parseGenl(m.payload));
  }

  /** dump() with the request and receives off the main thread (NetlinkSocket.requestAsync). */
  async dumpAsync(cmd: number, what: string, attrs?: Buffer): Promise<GenlMessage[]> {
    const msgs = await this.socket.requestAsync(this.id, NLM_F_REQUEST | NLM_F_DUMP, buildGenl(cmd, this.version, attrs), what);
    return msgs.map((m) => parseGenl(m.payload));
  }

  /** A command acknowledged by the kernel (changes: ADD_UEID, ENABLE_...). */
  doAck(cmd: number, what: string, attrs?: Buffer): void {
    this.socket.request(this.id, NLM_F_REQUEST | NLM_F_ACK, buildGenl(cmd, this.version, attrs), what);
  }

  static open(name: string, version: number, netnsPath?: string): GenlFamily {
    const s = NetlinkSocket.open(NETLINK_GENERIC, netnsPath);
    try {
      return GenlFamily.resolve(s, name, version);
    } catch (e) {
      s.close();
      throw e;
    }
  }

  close(): void {
    this.socket.close();
  }
}
