// The SMC sockets of a namespace for the promise API and the exporter, on a sock_diag socket the caller
// already holds (smc-run/promises opens one per call; src/metrics/namespace-reader.ts keeps it open between
// scrapes). The generic netlink readings are src/api/queries.ts's, run with runQueryAsync.
import { dumpTcpSocketsAsync } from '../netlink/inet-diag';
import { dumpSmcMessagesAsync, parseSmcDiagMessage } from '../netlink/sockdiag';
import type { NetlinkSocket } from '../netlink/socket';
import { toSocketInfo, type SmcSocketInfo } from './sockets';
import { lacksAddresses, withTcpAddresses } from './tcp-addresses';

export async function readSmcSockets(nl: NetlinkSocket): Promise<SmcSocketInfo[]> {
  const rows = (await dumpSmcMessagesAsync(nl)).map(parseSmcDiagMessage);
  const tcp = rows.some(lacksAddresses) ? await dumpTcpSocketsAsync(nl) : [];
  return withTcpAddresses(rows, tcp).map(({ row, family }) => toSocketInfo(row, family));
}
