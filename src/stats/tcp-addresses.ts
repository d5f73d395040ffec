// Addresses for SMC rows that sock_diag gives without them. A connected IPPROTO_SMC socket's smc_diag row
// has its ports but zeroed addresses (6.11+, the kernel copies addresses for AF_SMC sockets only); the
// kernel TCP socket below it (same ports) is listed by inet_diag with both addresses. A row takes them
// only from a single TCP socket with its exact (local port, remote port): with none or several it stays
// as the kernel gave it, a wildcard, rather than borrowing another connection's addresses.
import type { SmcDiagRow } from '../netlink/sockdiag';
import type { TcpDiagRow } from '../netlink/inet-diag';

const TCP_LISTEN = 10;

const isZero = (b: Buffer): boolean => b.every((x) => x === 0);

/** A connected row whose addresses the kernel left out. */
export function lacksAddresses(row: SmcDiagRow): boolean {
  return row.state !== 'LISTEN' && isZero(row.id.src) && isZero(row.id.dst);
}

export interface AddressedRow {
  row: SmcDiagRow;
  /** the IP family, when the addresses came from the TCP socket (undefined: the kernel's row as it is) */
  family: number | undefined;
}

export function withTcpAddresses(rows: readonly SmcDiagRow[], tcp: readonly TcpDiagRow[]): AddressedRow[] {
  const byPorts = new Map<string, TcpDiagRow[]>();
  for (const t of tcp) {
    if (t.state === TCP_LISTEN) continue;
    const k = `${t.id.sport}/${t.id.dport}`;
    byPorts.set(k, [...(byPorts.get(k) ?? []), t]);
  }
  return rows.map((row) => {
    if (!lacksAddresses(row)) return { row, family: undefined };
    const found = byPorts.get(`${row.id.sport}/${row.id.dport}`);
    const t = found?.length === 1 ? found[0] : undefined;
    if (!t) return { row, family: undefined };
    return { row: { ...row, id: { ...row.id, src: t.id.src, dst: t.id.dst } }, family: t.family };
  });
}
