// The destination policy's map value (native/bpf/smc-policy.bpf.c, struct smc_policy) as src/bpf/policy.ts
// writes and reads it, in both byte orders on every host: s390x's kernel reads counts and ports
// big-endian, addresses are network order everywhere.
import { describe, expect, it } from 'vitest';
import { decodePolicy, encodePolicy, HOST_ORDER, kernelRuleText, POLICY_RULES, POLICY_SIZE, type ByteOrder } from '../../src/bpf/policy';
import { parseRules } from '../../src/policy/rules';

describe('destination policy encoding', () => {
  it('is 408 bytes: the size smc-policy.bpf.c and smc-bpf.c assert for struct smc_policy', () => {
    expect(POLICY_SIZE).toBe(408);
    expect(encodePolicy([], [])).toHaveLength(408);
    expect(HOST_ORDER).toBe(process.arch === 's390x' ? 'BE' : 'LE');
  });

  for (const order of ['LE', 'BE'] as ByteOrder[]) {
    it(`${order}: counts and ports in that order, addresses in network order`, () => {
      const b = encodePolicy(parseRules('10.1.2.0/24:5432'), parseRules('*:6379,[fd00::1]/64'), order);
      const u32 = (at: number) => (order === 'LE' ? b.readUInt32LE(at) : b.readUInt32BE(at));
      const u16 = (at: number) => (order === 'LE' ? b.readUInt16LE(at) : b.readUInt16BE(at));
      expect([u32(0), u32(4)]).toEqual([1, 2]);
      // rule 0: 10.1.2.0/24 port 5432
      expect([...b.subarray(24, 28)]).toEqual([10, 1, 2, 0]);
      expect([b[24 + 16], b[24 + 17], b[24 + 18], u16(24 + 20)]).toEqual([4, 24, 1, 5432]);
      // rule 1: any address, port 6379
      expect([b[48 + 16], b[48 + 17], b[48 + 18], u16(48 + 20)]).toEqual([0, 0, 1, 6379]);
      expect(b.subarray(48, 64).every((x) => x === 0)).toBe(true);
      // rule 2: fd00::1/64, no port
      expect(b.subarray(72, 88).toString('hex')).toBe('fd000000000000000000000000000001');
      expect([b[72 + 16], b[72 + 17], b[72 + 18]]).toEqual([6, 64, 0]);
      // the counters start at zero, the rest of the rules are empty
      expect(b.subarray(8, 24).every((x) => x === 0)).toBe(true);
      expect(b.subarray(96).every((x) => x === 0)).toBe(true);
    });

    it(`${order}: reads back what it wrote, counters included`, () => {
      const b = encodePolicy(parseRules('::ffff:10.0.0.0/104'), parseRules('192.168.7.9:443,*:22'), order);
      if (order === 'LE') { b.writeBigUInt64LE(7n, 8); b.writeBigUInt64LE(3n, 16); } else { b.writeBigUInt64BE(7n, 8); b.writeBigUInt64BE(3n, 16); }
      const p = decodePolicy(b, order);
      expect(p).toEqual({
        include: [{ family: 4, address: '10.0.0.0', prefix: 8, port: undefined }],
        exclude: [{ family: 4, address: '192.168.7.9', prefix: 32, port: 443 }, { family: 0, address: undefined, prefix: 0, port: 22 }],
        proposed: 7,
        held: 3,
      });
      expect([...p.include, ...p.exclude].map(kernelRuleText)).toEqual(['10.0.0.0/8', '192.168.7.9/32:443', '*:22']);
      // the other order reads other counts: the order matters
      expect(() => decodePolicy(b, order === 'LE' ? 'BE' : 'LE')).toThrow(/rules, at most 16/);
    });
  }

  it('IPv6 rules read back in the launcher syntax, bracketed', () => {
    const p = decodePolicy(encodePolicy([], parseRules('[fd00::]/8:443')));
    expect(p.exclude.map(kernelRuleText)).toEqual(['[fd00:0:0:0:0:0:0:0]/8:443']);
    expect(parseRules(kernelRuleText(p.exclude[0]!))[0]).toMatchObject({ family: 'ipv6', prefix: 8, port: 443 });
  });

  it(`holds at most ${POLICY_RULES} rules, and refuses a value of another size`, () => {
    const many = parseRules(Array.from({ length: POLICY_RULES }, (_, i) => `10.0.${i}.0/24`).join(','));
    expect(decodePolicy(encodePolicy(many, [])).include).toHaveLength(POLICY_RULES);
    expect(() => encodePolicy(many, parseRules('*:1'))).toThrow(/at most 16 rules .* not 17/);
    expect(() => decodePolicy(Buffer.alloc(407))).toThrow(/407 bytes, expected 408/);
  });
});
