// getSmcInfo on an IPPROTO_SMC socket: the kernel's smc_diag row has the right ports but zeroed addresses
// (it copies them for AF_SMC sockets only), so the addresses come from the socket itself. AF_SMC rows and
// listeners keep what the kernel said.
import type * as net from 'node:net';
import { describe, expect, it } from 'vitest';
import { AF_INET } from '../../src/constants';
import type { SmcDiagRow } from '../../src/netlink/sockdiag';
import { toSocketInfo, withOwnAddresses } from '../../src/stats/sockets';
import { smcRow } from '../helpers/diag-rows';

const lo = Buffer.from([127, 0, 0, 1, ...new Array(12).fill(0)]);
const zero = Buffer.alloc(16);

const row = (family: number, src: Buffer, dst: Buffer, state = 'ACTIVE'): SmcDiagRow => smcRow({ family, sport: 40000, dport: 5000, src, dst, state });
const socket = { localAddress: '127.0.0.1', remoteAddress: '127.0.0.2' } as net.Socket;
const ends = (r: SmcDiagRow) => {
  const i = withOwnAddresses(toSocketInfo(r, AF_INET), r, socket);
  return [`${i.local.address}:${i.local.port}`, `${i.remote.address}:${i.remote.port}`];
};

describe('addresses of IPPROTO_SMC sockets', () => {
  it('zeroed in the row (IPPROTO_SMC, client family 2 or accepted 43): taken from the socket, ports from the row', () => {
    expect(ends(row(2, zero, zero))).toEqual(['127.0.0.1:40000', '127.0.0.2:5000']);
    expect(ends(row(43, zero, zero))).toEqual(['127.0.0.1:40000', '127.0.0.2:5000']);
  });

  it('an AF_SMC row keeps the kernel addresses; a listener stays a wildcard', () => {
    expect(ends(row(43, lo, lo))).toEqual(['127.0.0.1:40000', '127.0.0.1:5000']);
    expect(ends(row(43, zero, zero, 'LISTEN'))).toEqual(['0.0.0.0:40000', '0.0.0.0:5000']);
  });
});
