// The policy parser and matchers fuzzed against a reference written with BigInt prefix arithmetic: random
// networks, prefixes, ports and addresses, each spelt in a random textual form (IPv6 compressed or not,
// upper or lower case, zero-padded, a dotted-quad tail, IPv4-mapped), must decide as the reference does.
// Fixed seed (test/helpers/fuzz.ts); npm run bench:fuzz runs the same properties longer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeAddress, parseRule, parseRules, ruleMatches, wantsSmc } from '../../src/policy/rules';
import { fuzzRuns } from '../helpers/fuzz';

type Family = 'ipv4' | 'ipv6';
/** An address as the reference sees it: a family and a number. */
interface Addr { family: Family; value: bigint }
interface RefRule { family: Family | undefined; net: bigint; prefix: number; port: number | undefined }

const MAPPED = 0xffffn << 32n;
const WIDTH = { ipv4: 32, ipv6: 128 } as const;

/** An IPv4-mapped IPv6 address is its IPv4 address. */
function normal(a: Addr): Addr {
  return a.family === 'ipv6' && a.value >> 32n === 0xffffn ? { family: 'ipv4', value: a.value & 0xffffffffn } : a;
}

function refRule(family: Family, net: bigint, prefix: number, port: number | undefined): RefRule {
  // a rule on the mapped range with a prefix of 96 or more is the IPv4 rule it spells
  if (family === 'ipv6' && prefix >= 96 && net >> 32n === 0xffffn) return { family: 'ipv4', net: net & 0xffffffffn, prefix: prefix - 96, port };
  return { family, net, prefix, port };
}

function refMatches(r: RefRule, addr: Addr, port: number): boolean {
  if (r.port !== undefined && r.port !== port) return false;
  if (r.family === undefined) return true;
  const a = normal(addr);
  if (a.value === 0n) return r.prefix === 0; // a wildcard (0.0.0.0, ::, ::ffff:0.0.0.0) serves every peer
  if (a.family !== r.family) return false;
  const shift = BigInt(WIDTH[r.family] - r.prefix);
  return a.value >> shift === r.net >> shift;
}

function refWantsSmc(include: RefRule[], exclude: RefRule[], addr: Addr, port: number): boolean {
  if (exclude.some((r) => refMatches(r, addr, port))) return false;
  if (include.length === 0) return true;
  if (normal(addr).value === 0n) return include.some((r) => r.port === undefined || r.port === port);
  return include.some((r) => refMatches(r, addr, port));
}

const dotted = (v: bigint): string => [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');

interface Style { upper: boolean; pad: boolean; compress: boolean; dottedTail: boolean }
const style = fc.record({ upper: fc.boolean(), pad: fc.boolean(), compress: fc.boolean(), dottedTail: fc.boolean() });

/** An IPv6 address in one of its textual forms. */
function spell6(v: bigint, s: Style): string {
  const h = [...Array(8).keys()].map((i) => Number((v >> BigInt(112 - 16 * i)) & 0xffffn));
  const hex = (x: number): string => {
    const t = s.pad ? x.toString(16).padStart(4, '0') : x.toString(16);
    return s.upper ? t.toUpperCase() : t;
  };
  let parts = h.map(hex);
  if (s.dottedTail) parts = [...parts.slice(0, 6), dotted(v & 0xffffffffn)];
  if (!s.compress) return parts.join(':');
  // the longest run of zero groups (among the hextet groups) becomes "::"
  let best = [-1, 0];
  const groups = s.dottedTail ? 6 : 8;
  for (let i = 0; i < groups; i++) {
    let j = i;
    while (j < groups && h[j] === 0) j++;
    if (j - i > best[1]!) best = [i, j - i];
  }
  const [at, len] = best as [number, number];
  if (len === 0) return parts.join(':');
  return `${parts.slice(0, at).join(':')}::${parts.slice(at + len).join(':')}`;
}

const spell = (a: Addr, s: Style): string => (a.family === 'ipv4' ? dotted(a.value) : spell6(a.value, s));

const v4 = fc.bigInt(0n, 0xffffffffn).map((value): Addr => ({ family: 'ipv4', value }));
const v6 = fc.oneof(
  fc.bigInt(0n, (1n << 128n) - 1n),
  fc.bigInt(0n, 0xffffffffn).map((x) => MAPPED | x), // IPv4-mapped
  fc.bigInt(0n, 0xffffn), // mostly zeros: :: and its neighbours
).map((value): Addr => ({ family: 'ipv6', value }));
const addr = fc.oneof(v4, v6);
const port = fc.oneof(fc.constantFrom(0, 80, 443, 5432, 65535), fc.integer({ min: 0, max: 65535 }));

const ruleSpec = fc.record({ a: addr, prefixFrac: fc.double({ min: 0, max: 1, noNaN: true }), port: fc.option(port, { nil: undefined }), s: style, bracket: fc.boolean(), any: fc.boolean() });
type RuleSpec = typeof ruleSpec extends fc.Arbitrary<infer T> ? T : never;

/** A rule's text and the reference's reading of it. */
function ruleOf({ a, prefixFrac, port: p, s, bracket, any }: RuleSpec): { text: string; ref: RefRule } {
  if (any && p !== undefined) return { text: `*:${p}`, ref: { family: undefined, net: 0n, prefix: 0, port: p } };
  const prefix = Math.round(prefixFrac * WIDTH[a.family]);
  const at = spell(a, s);
  let text: string;
  if (a.family === 'ipv4') text = p === undefined ? `${at}/${prefix}` : `${at}/${prefix}:${p}`;
  else text = p === undefined && !bracket ? `${at}/${prefix}` : `[${at}]/${prefix}${p === undefined ? '' : `:${p}`}`;
  return { text, ref: refRule(a.family, a.value, prefix, p) };
}

/**
 * An address near another, so that prefixes match often: its top bits kept, the low `keep` bits random
 * (keep >= the width: any address of the family); flip: the same address in the other family's spelling
 * (10.0.0.5 as ::ffff:10.0.0.5, a mapped IPv6 address as its IPv4 one).
 */
const near = fc.record({ keep: fc.integer({ min: 0, max: 130 }), noise: fc.bigInt(0n, (1n << 128n) - 1n), s: style, flip: fc.boolean() });
function probeNear(a: Addr, n: typeof near extends fc.Arbitrary<infer T> ? T : never): { addr: Addr; text: string } {
  let base = a;
  if (n.flip) base = a.family === 'ipv4' ? { family: 'ipv6', value: MAPPED | a.value } : normal(a);
  const keep = BigInt(Math.min(n.keep, WIDTH[base.family]));
  const out: Addr = { family: base.family, value: ((base.value >> keep) << keep) | (n.noise & ((1n << keep) - 1n)) };
  return { addr: out, text: spell(out, n.s) };
}

describe('policy rules against a BigInt reference', () => {
  it('every spelling of an address normalises to the reference\'s value', () => {
    fc.assert(fc.property(addr, style, (a, s) => {
      const n = normalizeAddress(spell(a, s));
      const want = normal(a);
      expect(n?.family).toBe(want.family);
      expect(n?.address).toBe(want.family === 'ipv4' ? dotted(want.value) : spell6(want.value, { upper: false, pad: false, compress: false, dottedTail: false }));
    }), { numRuns: fuzzRuns(2000) });
  });

  it('ruleMatches decides as the reference for random rules, addresses and ports', () => {
    fc.assert(fc.property(ruleSpec, near, port, (spec, n, dport) => {
      const r = ruleOf(spec);
      const p = probeNear(spec.a, n);
      expect(ruleMatches(parseRule(r.text), p.text, dport), `${r.text} vs ${p.text}:${dport}`).toBe(refMatches(r.ref, p.addr, dport));
    }), { numRuns: fuzzRuns(3000) });
  });

  it('wantsSmc decides as the reference for random include and exclude lists', () => {
    const rules = fc.array(ruleSpec, { maxLength: 4 });
    fc.assert(fc.property(rules, rules, addr, near, port, (incSpecs, excSpecs, other, n, dport) => {
      const inc = incSpecs.map(ruleOf);
      const exc = excSpecs.map(ruleOf);
      // near one of the rules' networks when there are rules, else anywhere
      const around = [...incSpecs, ...excSpecs][n.keep % Math.max(1, incSpecs.length + excSpecs.length)]?.a ?? other;
      const p = probeNear(around, n);
      const got = wantsSmc(parseRules(inc.map((r) => r.text).join(',')), parseRules(exc.map((r) => r.text).join(' ')), p.text, dport);
      expect(got, `include ${inc.map((r) => r.text).join(',')} exclude ${exc.map((r) => r.text).join(',')} for ${p.text}:${dport}`)
        .toBe(refWantsSmc(inc.map((r) => r.ref), exc.map((r) => r.ref), p.addr, dport));
    }), { numRuns: fuzzRuns(2000) });
  });

  it('any other text is refused with a RangeError naming it, never another error', () => {
    const junk = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF.:/[]*%-x ffff::'.split('')), maxLength: 40 });
    fc.assert(fc.property(fc.oneof(junk, fc.string({ maxLength: 30 })), (text) => {
      try {
        const r = parseRule(text);
        // what parses must be a rule that matches something coherent: its own network (or any address)
        expect(r.prefix).toBeGreaterThanOrEqual(0);
        expect(r.port === undefined || (r.port >= 0 && r.port <= 65535)).toBe(true);
      } catch (e) {
        expect(e).toBeInstanceOf(RangeError);
        expect((e as Error).message).toContain(text.trim());
      }
    }), { numRuns: fuzzRuns(3000) });
  });
});
