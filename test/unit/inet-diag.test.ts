// inet_diag (TCP) on replies recorded from a real kernel (test/fixtures/sockdiag/tcp.json), in both byte
// orders, and the addresses it gives IPPROTO_SMC rows (which the kernel's smc_diag leaves zeroed).
import * as fc from 'fast-check';
import { fuzzRuns, mutatedMessage } from '../helpers/fuzz';
import { beforeEach, describe, expect, it } from 'vitest';
import { AF_INET, AF_INET6, IPPROTO_TCP } from '../../src/constants';
import { u32 } from '../../src/netlink/host-order';
import { buildTcpDiagRequest, parseTcpDiagMessage, type TcpDiagRow } from '../../src/netlink/inet-diag';
import { NetlinkParseError } from '../../src/netlink/message';
import { addressText, type SmcDiagRow } from '../../src/netlink/sockdiag';
import { toSocketInfo } from '../../src/stats/sockets';
import { lacksAddresses, withTcpAddresses } from '../../src/stats/tcp-addresses';
import { forEachByteOrder, inetDiagPayloads, sockDiagFixture } from '../helpers/byte-orders';
import { smcRow } from '../helpers/diag-rows';

const FIXTURE = 'tcp';
const { v4ListenPort, v6ListenPort, v4ClientPort, v6ClientPort } = sockDiagFixture(FIXTURE).expect as { v4ListenPort: number; v6ListenPort: number; v4ClientPort: number; v6ClientPort: number };
const TCP_ESTABLISHED = 1;
const TCP_LISTEN = 10;

/** An SMC row as 6.12's smc_diag gives an IPPROTO_SMC socket: ports, zeroed addresses. */
const ipprotoRow = (sport: number, dport: number, state = 'ACTIVE'): SmcDiagRow => smcRow({ family: AF_INET, sport, dport, state, inode: 9n });

forEachByteOrder(() => {
  describe('inet_diag on a recorded TCP dump', () => {
    let rows: TcpDiagRow[] = [];
    beforeEach(() => {
      rows = inetDiagPayloads(FIXTURE).map(parseTcpDiagMessage);
    });

    it('decodes both listeners and both ends of each connection, with addresses, states and inodes', () => {
      expect(rows).toHaveLength(6);
      const text = (r: TcpDiagRow): string => `${r.family} ${r.state} ${addressText(r.id.src, r.family)}:${r.id.sport} ${addressText(r.id.dst, r.family)}:${r.id.dport}`;
      expect(rows.map(text).sort()).toEqual([
        `${AF_INET6} ${TCP_ESTABLISHED} ::1:${v6ClientPort} ::1:${v6ListenPort}`,
        `${AF_INET6} ${TCP_ESTABLISHED} ::1:${v6ListenPort} ::1:${v6ClientPort}`,
        `${AF_INET6} ${TCP_LISTEN} ::1:${v6ListenPort} :::0`,
        `${AF_INET} ${TCP_ESTABLISHED} 127.0.0.1:${v4ClientPort} 127.0.0.1:${v4ListenPort}`,
        `${AF_INET} ${TCP_ESTABLISHED} 127.0.0.1:${v4ListenPort} 127.0.0.1:${v4ClientPort}`,
        `${AF_INET} ${TCP_LISTEN} 127.0.0.1:${v4ListenPort} 0.0.0.0:0`,
      ].sort());
      // every socket of the capturing process has a file, so an inode; all were the same user's
      for (const r of rows) expect(r.inode).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.uid)).size).toBe(1);
    });

    it('gives an IPPROTO_SMC row the addresses of the one TCP socket with its ports, and its family', () => {
      const [v4, v6] = withTcpAddresses([ipprotoRow(v4ClientPort, v4ListenPort), ipprotoRow(v6ListenPort, v6ClientPort)], rows);
      expect(v4?.family).toBe(AF_INET);
      expect(v6?.family).toBe(AF_INET6);
      const i4 = toSocketInfo(v4!.row, v4!.family);
      const i6 = toSocketInfo(v6!.row, v6!.family);
      expect([i4.family, i4.local, i4.remote]).toEqual(['IPv4', { address: '127.0.0.1', port: v4ClientPort }, { address: '127.0.0.1', port: v4ListenPort }]);
      expect([i6.family, i6.local, i6.remote]).toEqual(['IPv6', { address: '::1', port: v6ListenPort }, { address: '::1', port: v6ClientPort }]);
    });

    it('leaves a row as the kernel gave it when no TCP socket or several have its ports, and never touches listeners or AF_SMC rows', () => {
      const none = ipprotoRow(1, 2);
      const listener = ipprotoRow(v4ListenPort, 0, 'LISTEN');
      const twice = [...rows, ...rows.filter((r) => r.id.sport === v4ClientPort)];
      const out = withTcpAddresses([none, listener, ipprotoRow(v4ClientPort, v4ListenPort)], twice);
      expect(out.map((x) => x.family)).toEqual([undefined, undefined, undefined]);
      expect(out.map((x) => x.row)).toEqual([none, listener, ipprotoRow(v4ClientPort, v4ListenPort)]);
      expect(toSocketInfo(none).local.address).toBe('*');
      const afSmc = { ...ipprotoRow(v4ClientPort, v4ListenPort), id: { ...ipprotoRow(0, 0).id, sport: v4ClientPort, dport: v4ListenPort, src: Buffer.from([127, 0, 0, 9, ...new Array(12).fill(0)]) } };
      expect(lacksAddresses(afSmc)).toBe(false);
      expect(withTcpAddresses([afSmc], rows)[0]?.row).toBe(afSmc);
    });

    it('builds a dump request for every TCP socket of one family, in host order', () => {
      for (const family of [AF_INET, AF_INET6]) {
        const req = buildTcpDiagRequest(family);
        expect(req).toHaveLength(56);
        expect([req[0], req[1], req[2]]).toEqual([family, IPPROTO_TCP, 0]);
        expect(u32(req, 4)).toBe(0xffffffff);
        expect([u32(req, 8 + 40), u32(req, 8 + 44)]).toEqual([0xffffffff, 0xffffffff]);
      }
      expect(() => buildTcpDiagRequest(43)).toThrow(RangeError);
    });

    it('short or random input: a NetlinkParseError or a row, never anything else', () => {
      expect(() => parseTcpDiagMessage(Buffer.alloc(71))).toThrow(NetlinkParseError);
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
          try {
            const r = parseTcpDiagMessage(Buffer.from(bytes));
            expect(bytes.length).toBeGreaterThanOrEqual(72);
            expect(r.id.src).toHaveLength(16);
          } catch (e) {
            expect(e).toBeInstanceOf(NetlinkParseError);
          }
        }),
      );
    });

    it('recorded messages with bytes changed, cut or extended: a row or a NetlinkParseError', () => {
      const recorded = inetDiagPayloads(FIXTURE);
      fc.assert(
        fc.property(mutatedMessage(recorded), (b) => {
          try {
            const r = parseTcpDiagMessage(b);
            expect(b.length).toBeGreaterThanOrEqual(72);
            expect(r.id.src).toHaveLength(16);
          } catch (e) {
            expect(e).toBeInstanceOf(NetlinkParseError);
          }
        }),
        { numRuns: fuzzRuns(2000) },
      );
    });
  });
});
