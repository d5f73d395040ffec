// TCP sockets through inet_diag (what `ss -t` reads): request building and the fixed part of the reply.
// smc-run needs it for one thing: the addresses of IPPROTO_SMC sockets, whose smc_diag rows carry the
// ports but zeroed addresses (the kernel copies addresses for AF_SMC sockets only). Each SMC socket has a
// kernel TCP socket below it (its CLC socket, the data path after a fallback) with the same ports, which
// inet_diag lists with its addresses. Layouts from include/uapi/linux/inet_diag.h; integers in the host's
// byte order, ports and addresses in network order; attributes after the fixed part are not read.
import { AF_INET, AF_INET6, IPPROTO_TCP } from '../constants';
import { NetlinkParseError, NLM_F_DUMP, NLM_F_REQUEST } from './message';
import { putU32, u32 } from './host-order';
import { parseSockId, SOCK_DIAG_BY_FAMILY, type SockId } from './sockdiag';
import type { NetlinkSocket } from './socket';

/** struct inet_diag_req_v2: family, protocol, ext, pad (u8 each), states (u32), id (48) */
const INET_DIAG_REQ_V2_LEN = 56;
/** struct inet_diag_msg: family, state, timer, retrans (u8 each), id (48), expires, rqueue, wqueue, uid, inode (u32 each) */
export const INET_DIAG_MSG_LEN = 72;
const ALL_STATES = 0xffffffff;

export interface TcpDiagRow {
  family: number;
  /** TCP_ESTABLISHED = 1, ... TCP_LISTEN = 10 (include/net/tcp_states.h) */
  state: number;
  id: SockId;
  uid: number;
  inode: number;
}

/** A dump request for every TCP socket of one address family. */
export function buildTcpDiagRequest(family: number): Buffer {
  if (family !== AF_INET && family !== AF_INET6) throw new RangeError(`inet_diag: family ${family} is not AF_INET or AF_INET6`);
  const req = Buffer.alloc(INET_DIAG_REQ_V2_LEN);
  req.writeUInt8(family, 0);
  req.writeUInt8(IPPROTO_TCP, 1);
  putU32(req, ALL_STATES, 4);
  // no socket filter: cookie "none" is all ones
  putU32(req, 0xffffffff, 8 + 40);
  putU32(req, 0xffffffff, 8 + 44);
  return req;
}

export function parseTcpDiagMessage(payload: Buffer): TcpDiagRow {
  if (payload.length < INET_DIAG_MSG_LEN) throw new NetlinkParseError(`inet_diag_msg: ${payload.length} bytes, need ${INET_DIAG_MSG_LEN}`);
  return { family: payload.readUInt8(0), state: payload.readUInt8(1), id: parseSockId(payload, 4), uid: u32(payload, 64), inode: u32(payload, 68) };
}

function rowsOf(msgs: { type: number; payload: Buffer }[]): TcpDiagRow[] {
  return msgs.filter((m) => m.type === SOCK_DIAG_BY_FAMILY).map((m) => parseTcpDiagMessage(m.payload));
}

/** Every TCP socket of both families in the namespace of the sock_diag socket. */
export function dumpTcpSockets(nl: NetlinkSocket): TcpDiagRow[] {
  return [AF_INET, AF_INET6].flatMap((f) => rowsOf(nl.request(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildTcpDiagRequest(f), 'TCP sock_diag dump')));
}

/** dumpTcpSockets, received off the main thread. */
export async function dumpTcpSocketsAsync(nl: NetlinkSocket): Promise<TcpDiagRow[]> {
  const out: TcpDiagRow[] = [];
  for (const f of [AF_INET, AF_INET6]) out.push(...rowsOf(await nl.requestAsync(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, buildTcpDiagRequest(f), 'TCP sock_diag dump')));
  return out;
}
