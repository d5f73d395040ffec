// The byte-order layer itself: netlink is read and written in the host's order (decided once, in
// src/netlink/host-order.ts), the fixture converter really changes every host-order field, and builders
// round-trip in both orders. The parser tests (sockdiag, system-stats) run in both orders on top of this.
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { HOST_BYTE_ORDER, currentByteOrder, withByteOrder } from '../../src/netlink/host-order';
import { Attrs, buildAttr, buildMessage, parseMessages, readUint, NetlinkParseError } from '../../src/netlink/message';
import { buildSmcDiagRequest, parseSmcDiagMessage } from '../../src/netlink/sockdiag';
import { BYTE_ORDERS, forEachByteOrder, sockDiagPayloads } from '../helpers/byte-orders';
import { genlToBigEndian, sockDiagToBigEndian } from '../tools/to-big-endian';
import { fixture } from '../helpers/genl-fixtures';

describe('the host byte order', () => {
  it('is this machine\'s, and readers use it unless a test overrides it', () => {
    expect(HOST_BYTE_ORDER).toBe(os.endianness());
    expect(currentByteOrder()).toBe(HOST_BYTE_ORDER);
    expect(withByteOrder('BE', currentByteOrder)).toBe('BE');
    expect(currentByteOrder()).toBe(HOST_BYTE_ORDER);
  });

  it('a big-endian reply read in little-endian order is refused, as on s390x before host order', () => {
    const le = withByteOrder('LE', () => buildMessage(20, 2, 7, Buffer.alloc(64)));
    const be = withByteOrder('BE', () => buildMessage(20, 2, 7, Buffer.alloc(64)));
    expect(le.readUInt32LE(0)).toBe(80);
    expect(be.readUInt32BE(0)).toBe(80);
    expect(() => withByteOrder('LE', () => parseMessages(be))).toThrow(/bad netlink message length 1342177280/);
    expect(withByteOrder('BE', () => parseMessages(be))[0]).toMatchObject({ type: 20, flags: 2, seq: 7 });
  });
});

describe('the fixture converter (test/tools/to-big-endian.ts)', () => {
  it('changes every recorded sock_diag message, and the BE bytes read as LE give other values', () => {
    const le = withByteOrder('LE', () => sockDiagPayloads('smcd-6.12'));
    const be = withByteOrder('BE', () => sockDiagPayloads('smcd-6.12'));
    expect(be).toHaveLength(le.length);
    le.forEach((m, i) => {
      expect(be[i]?.equals(m)).toBe(false);
      expect(be[i]).toHaveLength(m.length);
      const right = withByteOrder('LE', () => parseSmcDiagMessage(m));
      expect(withByteOrder('BE', () => parseSmcDiagMessage(be[i] as Buffer))).toEqual(right);
      // ports and addresses are network order in both: only host-order fields moved
      expect((be[i] as Buffer).subarray(4, 40).equals(m.subarray(4, 40))).toBe(true);
      let wrong: unknown;
      try {
        wrong = withByteOrder('LE', () => parseSmcDiagMessage(be[i] as Buffer));
      } catch (e) {
        wrong = e;
      }
      expect(wrong).not.toEqual(right);
    });
  });

  it('converts every recorded genl reply and refuses attributes it has no layout for', () => {
    const raw = (name: string): Buffer[] => fixture(name).messages.map((m) => Buffer.from(m, 'base64'));
    for (const name of ['get-stats', 'get-fback-stats', 'get-lgr-smcd', 'get-sys-info']) {
      for (const p of raw(name)) {
        const be = genlToBigEndian(p, fixture(name).cmd);
        expect(be).toHaveLength(p.length);
        expect(be.equals(p)).toBe(false);
      }
    }
    const unknown = withByteOrder('LE', () => Buffer.concat([Buffer.alloc(4), buildAttr(7, buildAttr(99, Buffer.alloc(4)))]));
    expect(() => genlToBigEndian(unknown, 7)).toThrow(/no layout for attribute 99/);
    expect(() => sockDiagToBigEndian(Buffer.alloc(10))).toThrow(/64|bytes/);
  });
});

forEachByteOrder((order) => {
  describe('builders write the order in force and round-trip', () => {
    it('message header and attributes', () => {
      const attrs = Buffer.concat([buildAttr(1, Buffer.from([1, 2, 3])), buildAttr(2 | 0x8000, buildAttr(3, Buffer.alloc(8, 0xab)))]);
      const msg = buildMessage(0x1234, 0x0305, 0xdeadbeef, attrs);
      const len = order === 'LE' ? msg.readUInt32LE(0) : msg.readUInt32BE(0);
      expect(len).toBe(16 + attrs.length);
      const [m] = parseMessages(msg);
      expect(m).toMatchObject({ type: 0x1234, flags: 0x0305, seq: 0xdeadbeef, pid: 0 });
      const a = Attrs.parse(m!.payload);
      expect([...(a.map.get(1) ?? [])]).toEqual([1, 2, 3]);
      expect(a.nested(2)?.hex64(3)).toBe('0xabababababababab');
    });

    it('NLA_UINT of 4 and 8 bytes', () => {
      const four = Buffer.alloc(4);
      const eight = Buffer.alloc(8);
      if (order === 'LE') {
        four.writeUInt32LE(65504);
        eight.writeBigUInt64LE(2n ** 40n);
      } else {
        four.writeUInt32BE(65504);
        eight.writeBigUInt64BE(2n ** 40n);
      }
      expect(readUint(four)).toBe(65504);
      expect(readUint(eight)).toBe(2 ** 40);
      expect(() => readUint(Buffer.alloc(2))).toThrow(NetlinkParseError);
    });

    it('the sock_diag dump request: family and extensions as bytes, the "no cookie" marker in host order', () => {
      const req = buildSmcDiagRequest();
      expect(req[0]).toBe(43);
      expect(req.readUInt32LE(44)).toBe(0xffffffff);
      const framed = parseMessages(buildMessage(20, 0x301, 1, req))[0];
      expect(framed?.payload.subarray(0, req.length).equals(req)).toBe(true);
    });
  });
});

it('both orders are covered', () => {
  expect(BYTE_ORDERS).toEqual(['LE', 'BE']);
});
