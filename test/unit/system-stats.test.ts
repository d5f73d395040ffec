// The system statistics parsers on replies recorded from a real 6.12 kernel (SMC-D guest), on
// synthetic SMC-R replies built to the uapi layout, and fuzzed: random, mutated and truncated
// messages give a typed result or a NetlinkParseError, nothing else. Every netlink test runs in both
// byte orders (little-endian as recorded, big-endian as s390x receives it) with the same expectations.
import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz';
import { describe, expect, it } from 'vitest';
import { parseGenl, type GenlMessage } from '../../src/netlink/genl';
import { NetlinkParseError, buildAttr, parseAttrs } from '../../src/netlink/message';
import { SMC_CMD, parseSysInfo } from '../../src/netlink/smc-genl';
import { SIZE_BUCKETS, parseFallbackStats, parseStats, parseSystemStats, type SmcSystemStats } from '../../src/stats/system';
import { parseDevices } from '../../src/topology/devices';
import { parseSmcdLinkGroups, parseSmcrLinkGroups } from '../../src/topology/link-groups';
import { SnapshotError, checkScope, diffSystemStats, makeSnapshot, parseSnapshot, statsFrom } from '../../src/cli/snapshot';
import { renderSystemStats } from '../../src/cli/system-view';
import { forEachByteOrder } from '../helpers/byte-orders';
import { a16, a32, a64, a8, anest, astr, fixture, genl, messages, payloads } from '../helpers/genl-fixtures';

const zeroHistogram = Object.fromEntries(SIZE_BUCKETS.map((b) => [b, 0]));
const PEERNOSMC = 0x03010000;

const recorded = (): SmcSystemStats => parseSystemStats(messages('get-stats'), messages('get-fback-stats'));
const empty = (): SmcSystemStats => parseSystemStats(messages('empty-get-stats'), messages('empty-get-fback-stats'));

forEachByteOrder(() => {
  describe('recorded replies (6.12, loopback-ism)', () => {
    it('are from the SMC-D guest kernel', () => {
      expect(fixture('get-stats').kernel).toMatch(/^6\.12\./);
      expect(fixture('get-stats').cmd).toBe(SMC_CMD.GET_STATS);
    });

    it('GET_STATS after a 1 MiB SMC-D echo: one client + one server v2 connection, 2 MiB each way', () => {
      const s = recorded();
      expect(s.smcd.connections).toEqual({ clientV1: 0, clientV2: 1, serverV1: 0, serverV2: 1 });
      // the echo sends 1 MiB and gets it back: both ends' bytes add up to 2 MiB per direction
      expect(s.smcd.bytes).toEqual({ rx: 2 << 20, tx: 2 << 20 });
      expect(s.smcd.requests).toEqual({ rx: 36, tx: 37 });
      expect(s.smcd.bufferSize.rx).toEqual({ ...zeroHistogram, '64K': 2 });
      // loopback-ism writes into the peer's DMB: no send buffers of its own
      expect(s.smcd.bufferSize.tx).toEqual(zeroHistogram);
      expect(s.smcd.payloadSize.tx).toEqual({ ...zeroHistogram, '8K': 2, '64K': 16, '128K': 1, '256K': 2, '512K': 4, '1024K': 9 });
      expect(s.smcd.payloadSize.rx).toEqual({ ...zeroHistogram, '8K': 2, '64K': 32 });
      expect(s.smcd.buffers.rx).toEqual({ alloc: 2, reuse: 0, downgrade: 0, full: 32, peerFull: 0, sizeSmall: 0, peerSizeSmall: 0 });
      expect(s.smcd.buffers.tx).toEqual({ alloc: 0, reuse: 0, downgrade: 0, full: 22, peerFull: 0, sizeSmall: 17, peerSizeSmall: 17 });
      expect(s.smcd.calls).toEqual({ cork: 0, nodelay: 0, splice: 0, sendpage: 0, urgent: 0 });
      expect(s.smcd.bufferUsage).toEqual({ rx: 0, tx: 0 });
      expect(s.smcr.connections).toEqual({ clientV1: 0, clientV2: 0, serverV1: 0, serverV2: 0 });
      expect(s.smcr.bytes).toEqual({ rx: 0, tx: 0 });
      expect(s.handshakeErrors).toEqual({ client: 0, server: 0 });
    });

    it('GET_FBACK_STATS: PEERNOSMC once per side, in words, totals from the first message', () => {
      const f = recorded().fallbacks;
      for (const side of [f.server, f.client]) {
        expect(side.total).toBe(1);
        expect(side.countsWrap).toBe(false);
        expect(side.reasons).toEqual([expect.objectContaining({ code: PEERNOSMC, name: 'PEERNOSMC', count: 1 })]);
        expect(side.reasons[0]?.description).toMatch(/does not speak SMC/);
      }
    });

    it('a fresh namespace: every counter zero, no fallback messages at all', () => {
      const s = empty();
      expect(payloads('empty-get-fback-stats')).toHaveLength(0);
      expect(s.smcd.bytes).toEqual({ rx: 0, tx: 0 });
      expect(s.smcd.payloadSize.tx).toEqual(zeroHistogram);
      expect(s.fallbacks).toEqual({
        client: { total: 0, countsWrap: false, reasons: [] },
        server: { total: 0, countsWrap: false, reasons: [] },
      });
    });

    it('GET_SYS_INFO: SMC v2.1 with ISMv2 (loopback-ism) and SMC-Rv2, no SEID off s390', () => {
      expect(parseSysInfo(messages('get-sys-info')[0])).toEqual({
        version: 2, release: 1, ismV2: true, smcrV2: true, localHost: 'smcd', seid: '',
      });
    });

    it('GET_DEV_SMCD leaves loopback-ism out; the SMC-D guest has no RDMA device', () => {
      expect(parseDevices(messages('get-dev-smcd'), 'smcd')).toEqual([]);
      expect(parseDevices(messages('get-dev-smcr'), 'smcr')).toEqual([]);
      expect(parseSmcrLinkGroups(messages('get-link-smcr'))).toEqual([]);
    });

    it('GET_LGR_SMCD: the client and the server link group of the loopback connection', () => {
      const groups = parseSmcdLinkGroups(messages('get-lgr-smcd'));
      expect(groups.map((g) => g.id)).toEqual([0x100, 0x200]);
      expect(groups[0]).toEqual({
        id: 0x100,
        gid: '0x4d463237ed1cdaf2',
        gidExt: '0xdb94feb3753dd4a7',
        peerGid: '0x4d463237ed1cdaf2',
        peerGidExt: '0xdb94feb3753dd4a7',
        vlanId: 0,
        connections: 0,
        pnetId: '',
        chid: 0xffff,
        sndbufBytes: 0,
        dmbBytes: 65536,
        v2: { version: 2, release: 1, peerOs: 'Linux', peerHost: 'smcd', negotiatedEid: 'SMC-RUN-TEST' },
      });
    });

    it('renders the fallback reason and the byte counts for people', () => {
      const text = renderSystemStats(recorded());
      expect(text).toMatch(/server\s+PEERNOSMC\s+1\s+the peer does not speak SMC/);
      expect(text).toContain('2097152 (2.0 MiB)');
      expect(text).toContain('SMC-R: nothing yet');
    });
  });

  describe('synthetic replies', () => {
    const fback = (server: boolean, code: number, count: number, totals?: [number, number]): GenlMessage =>
      genl(SMC_CMD.GET_FBACK_STATS, anest(8, a8(1, server ? 1 : 0), ...(totals ? [a64(2, totals[0]), a64(3, totals[1])] : []), a32(4, code), a16(5, count)));

    it('fallback counts wrap at 65536 per reason: said so once a side has that many', () => {
      const f = parseFallbackStats([fback(true, PEERNOSMC, 70000 % 65536, [70000, 2]), fback(false, 0x03030008, 2), fback(true, 0x03030000, 0)]);
      expect(f.server.total).toBe(70000);
      expect(f.server.countsWrap).toBe(true);
      expect(f.server.reasons.map((r) => [r.name, r.count])).toEqual([['PEERNOSMC', 4464], ['NOSMCDEV', 0]]);
      expect(f.client).toMatchObject({ total: 2, countsWrap: false, reasons: [{ name: 'NOUEID', count: 2 }] });
      expect(renderSystemStats({ ...empty(), fallbacks: f })).toMatch(/modulo 65536/);
    });

    it('fallback messages without the totals are malformed', () => {
      expect(() => parseFallbackStats([fback(true, PEERNOSMC, 1)])).toThrow(NetlinkParseError);
    });

    it('GET_LINK_SMCR: links belong to the link group before them', () => {
      const lgr = (id: number, role: number) =>
        genl(SMC_CMD.GET_LGR_SMCR, anest(2, a32(1, id), a8(2, role), a8(3, 1), astr(4, 'NET1'), a8(5, 0), a32(6, 3),
          anest(7, a8(0, 2), a8(1, 1), a8(2, 2), astr(3, 'SMC-RUN-UEID'), astr(4, 'peer')), anest(8, a8(1, 1)), a64(9, 7), a8(11, 1), a32(12, 65536), a32(13, 131072)));
      const link = (id: number, state: number) =>
        genl(SMC_CMD.GET_LINK_SMCR, anest(3, a8(1, id), astr(2, 'rxe0'), a8(3, 1), astr(4, 'fe80::1'), astr(5, 'fe80::2'), a32(6, 3), a32(7, 2), a32(8, 0xdeadbeef), a32(9, 1), a32(10, state)));
      const groups = parseSmcrLinkGroups([lgr(0x100, 1), link(1, 3), link(2, 1), lgr(0x200, 0)]);
      expect(groups).toHaveLength(2);
      expect(groups[0]).toMatchObject({
        id: 0x100, role: 'server', type: 'single', pnetId: 'NET1', connections: 3, netCookie: 7, bufferType: 'virtual',
        sndbufBytes: 65536, rmbBytes: 131072, direct: true,
        v2: { version: 2, release: 1, peerOs: 'Linux', negotiatedEid: 'SMC-RUN-UEID', peerHost: 'peer' },
      });
      expect(groups[0]?.links.map((l) => [l.id, l.ibDevice, l.state, l.uid])).toEqual([[1, 'rxe0', 'active', '0xdeadbeef'], [2, 'rxe0', 'inactive', '0xdeadbeef']]);
      expect(groups[1]).toMatchObject({ role: 'client', links: [] });
      expect(() => parseSmcrLinkGroups([link(1, 3)])).toThrow(NetlinkParseError);
    });

    it('GET_DEV_SMCR: a device with its ports', () => {
      const port = (t: number, state: number) => anest(t, a8(1, 0), astr(2, 'NET1'), a32(3, 2), a8(4, state), a8(5, 1), a32(6, 1));
      const [dev] = parseDevices([genl(SMC_CMD.GET_DEV_SMCR, anest(6, a32(1, 1), a8(2, 0), a32(3, 0), a16(4, 0), a16(5, 0x15b3), a16(6, 0x1017), astr(7, '0000:00:03.0'), port(8, 1), port(9, 0), astr(10, 'mlx5_0')))], 'smcr');
      expect(dev).toMatchObject({ kind: 'smcr', name: 'mlx5_0', pciId: '0000:00:03.0', pciVendor: 0x15b3, useCount: 1, critical: false });
      expect(dev?.ports.map((p) => [p.port, p.state, p.valid, p.netdevIndex, p.pnetId])).toEqual([[1, 'active', true, 2, 'NET1'], [2, 'inactive', true, 2, 'NET1']]);
    });

    it('kernels before 6.10 have no buffer usage level: null, not zero', () => {
      // the recorded reply without attributes 20/21 in the technology nests (depth 2)
      const rebuild = (buf: Buffer, depth: number): Buffer =>
        Buffer.concat(
          parseAttrs(buf)
            .filter((a) => !(depth === 2 && (a.type === 20 || a.type === 21)))
            .map((a) => buildAttr(a.type | (a.nested ? 0x8000 : 0), depth < 2 && a.nested ? rebuild(a.data, depth + 1) : a.data)),
        );
      const raw = payloads('get-stats')[0] as Buffer;
      const old = parseStats([parseGenl(Buffer.concat([raw.subarray(0, 4), rebuild(raw.subarray(4), 0)]))]);
      expect(old.smcd.bufferUsage).toBeNull();
      expect(old.smcd.bytes).toEqual({ rx: 2 << 20, tx: 2 << 20 });
    });
  });
});

describe('snapshots and deltas', () => {
  const scope = { bootId: 'b1', netns: 'net:[1]' };

  it('a snapshot round-trips and the delta from a fresh namespace is the counters themselves', () => {
    const snap = parseSnapshot(JSON.stringify(makeSnapshot(empty(), scope)), 'f');
    const d = diffSystemStats(recorded(), snap.stats);
    expect(d).toEqual(recorded());
    const none = diffSystemStats(recorded(), recorded());
    expect(none.smcd.bytes).toEqual({ rx: 0, tx: 0 });
    expect(none.fallbacks.server).toEqual({ total: 0, countsWrap: false, reasons: [] });
  });

  it('counters that went down mean another namespace or boot: an error, never a negative delta', () => {
    expect(() => diffSystemStats(empty(), recorded())).toThrow(SnapshotError);
    const snap = makeSnapshot(empty(), scope);
    expect(() => checkScope(snap, { bootId: 'b2', netns: 'net:[1]' }, 'f')).toThrow(/reboot/);
    expect(() => checkScope(snap, { bootId: 'b1', netns: 'net:[2]' }, 'f')).toThrow(/another network namespace/);
    expect(() => checkScope(snap, { bootId: null, netns: null }, 'f')).not.toThrow();
  });

  it('per-reason deltas are taken modulo 65536', () => {
    const before = recorded();
    const now = structuredClone(before);
    now.fallbacks.server.total += 3;
    (now.fallbacks.server.reasons[0] as { count: number }).count = 2; // 65535 -> 2 after 3 more fallbacks
    (before.fallbacks.server.reasons[0] as { count: number }).count = 65535;
    expect(diffSystemStats(now, before).fallbacks.server.reasons.map((r) => [r.name, r.count])).toEqual([['PEERNOSMC', 3]]);
  });

  it('rejects files that are not snapshots with a sentence', () => {
    expect(() => parseSnapshot('nope', 'f')).toThrow(/not a snapshot/);
    expect(() => parseSnapshot('{"format":"x"}', 'f')).toThrow(/not a snapshot/);
    const snap = JSON.parse(JSON.stringify(makeSnapshot(recorded(), scope)));
    snap.stats.smcd.bytes.rx = -1;
    expect(() => parseSnapshot(JSON.stringify(snap), 'f')).toThrow(/damaged snapshot.*smcd\.bytes\.rx/);
    fc.assert(
      fc.property(fc.json(), (text) => {
        try {
          parseSnapshot(text, 'f');
        } catch (e) {
          expect(e).toBeInstanceOf(SnapshotError);
        }
      }),
    );
  });
});

forEachByteOrder(() => {
  describe('fuzz: malformed replies give NetlinkParseError, never a crash or garbage', () => {
    const parsers: [string, (m: GenlMessage[]) => unknown][] = [
      ['stats', (m) => parseStats(m)],
      ['fallback stats', parseFallbackStats],
      ['SMC-D devices', (m) => parseDevices(m, 'smcd')],
      ['SMC-R devices', (m) => parseDevices(m, 'smcr')],
      ['SMC-D link groups', parseSmcdLinkGroups],
      ['SMC-R link groups', parseSmcrLinkGroups],
      ['system info', (m) => parseSysInfo(m[0])],
    ];

    /** Parses raw payloads (genl header included) the way the socket layer would. */
    function attempt(parse: (m: GenlMessage[]) => unknown, raw: Buffer[]): unknown {
      try {
        return parse(raw.map(parseGenl));
      } catch (e) {
        if (!(e instanceof NetlinkParseError)) throw e;
        return e;
      }
    }

    /** A parsed stats object must hold only exact, non-negative counters: statsFrom checks every one. */
    function checkStats(result: unknown): void {
      if (result instanceof NetlinkParseError) return;
      const s = { ...(result as Omit<SmcSystemStats, 'fallbacks'>), fallbacks: parseFallbackStats([]) };
      expect(() => statsFrom(JSON.parse(JSON.stringify(s)))).not.toThrow();
    }

    it('random bytes', () => {
      for (const [, parse] of parsers) {
        fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 256 }), { maxLength: 4 }), (arrays) => {
          attempt(parse, arrays.map((a) => Buffer.from(a)));
        }), { numRuns: fuzzRuns(300) });
      }
    });

    it('every truncation of a recorded reply', () => {
      for (const [name, parse] of [['get-stats', parsers[0]![1]], ['get-fback-stats', parsers[1]![1]], ['get-lgr-smcd', parsers[4]![1]], ['get-sys-info', parsers[6]![1]]] as const) {
        const all = payloads(name);
        all.forEach((full, i) => {
          for (let len = 0; len < full.length; len++) {
            const cut = all.map((p, j) => (j === i ? p.subarray(0, len) : p));
            const r = attempt(parse, cut);
            // system info tolerates missing fields (undefined), everything else must notice the cut
            if (name !== 'get-sys-info') expect(r, `${name} message ${i} cut at ${len}`).toBeInstanceOf(NetlinkParseError);
          }
        });
      }
    });

    it('recorded replies with random bytes changed', () => {
      const stats = payloads('get-stats');
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
          const p = Buffer.from(stats[0] as Buffer);
          for (const [at, v] of edits) p[at % p.length] = v;
          checkStats(attempt(parsers[0]![1], [p]));
        }),
        { numRuns: fuzzRuns(500) },
      );
      for (const name of ['get-fback-stats', 'get-lgr-smcd'] as const) {
        const raw = payloads(name);
        const parse = name === 'get-fback-stats' ? parseFallbackStats : parseSmcdLinkGroups;
        fc.assert(
          fc.property(fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
            const copy = raw.map((b) => Buffer.from(b));
            for (const [m, at, v] of edits) {
              const b = copy[m % copy.length] as Buffer;
              b[at % b.length] = v;
            }
            attempt(parse, copy);
          }),
          { numRuns: fuzzRuns(500) },
        );
      }
    });
  });
});
