// Every spelling of an IPv4-mapped IPv6 address is the IPv4 address for --include/--exclude: one
// normalisation (normalizeAddress) feeds every matcher path (ruleMatches, wantsSmc, wildcard listeners).
import { describe, expect, it } from 'vitest';
import { normalizeAddress, parseRule, parseRules, ruleMatches, wantsSmc } from '../../src/policy/rules';

const MAPPED_10_0_0_5 = [
  '::ffff:10.0.0.5',
  '::ffff:a00:5',
  '::ffff:0a00:0005',
  '::FFFF:A00:5',
  '::ffff:0A00:0005',
  '0:0:0:0:0:ffff:a00:5',
  '0000:0000:0000:0000:0000:FFFF:0A00:0005',
  '0:0:0:0:0:ffff:10.0.0.5',
  '::0:ffff:a00:5',
];

describe('IPv4-mapped addresses in every spelling', () => {
  it.each(MAPPED_10_0_0_5)('%s normalises to 10.0.0.5', (text) => {
    expect(normalizeAddress(text)).toEqual({ address: '10.0.0.5', family: 'ipv4' });
  });

  it.each(MAPPED_10_0_0_5)('%s is excluded by --exclude 10.0.0.0/8 and by 10.0.0.5:80', (text) => {
    expect(ruleMatches(parseRule('10.0.0.0/8'), text, 80)).toBe(true);
    expect(wantsSmc([], parseRules('10.0.0.0/8'), text, 80)).toBe(false);
    expect(wantsSmc([], parseRules('10.0.0.5:80'), text, 80)).toBe(false);
    expect(wantsSmc([], parseRules('10.0.0.5:80'), text, 81)).toBe(true);
  });

  it.each(MAPPED_10_0_0_5)('%s is included by --include 10.0.0.5 only', (text) => {
    expect(wantsSmc(parseRules('10.0.0.5'), [], text, 80)).toBe(true);
    expect(wantsSmc(parseRules('10.0.0.6'), [], text, 80)).toBe(false);
  });

  it('a rule written as a mapped IPv6 prefix is the IPv4 rule it spells', () => {
    const r = parseRule('[::ffff:a00:0]/104');
    expect(r).toMatchObject({ family: 'ipv4', prefix: 8 });
    expect(ruleMatches(r, '10.9.9.9', 1)).toBe(true);
    expect(ruleMatches(r, '::ffff:a09:909', 1)).toBe(true);
    expect(ruleMatches(r, '11.0.0.1', 1)).toBe(false);
  });

  it('an unbracketed IPv6 rule with a dotted-quad tail is that address, not IPv4 with a port (found by the fuzz run)', () => {
    expect(parseRule('::ffff:10.0.0.0/104')).toMatchObject({ family: 'ipv4', prefix: 8, port: undefined });
    expect(parseRule('0:0:0:0:0:0:0.0.0.0/0')).toMatchObject({ family: 'ipv6', prefix: 0, port: undefined });
    expect(ruleMatches(parseRule('::ffff:10.0.0.5'), '10.0.0.5', 80)).toBe(true);
    // a port needs the brackets, as for every IPv6 rule
    expect(parseRule('[::ffff:10.0.0.5]:80')).toMatchObject({ family: 'ipv4', port: 80 });
    expect(() => parseRule('::ffff:10.0.0.5:80')).toThrow(/is not an address or CIDR/);
  });

  it.each([
    ['::', 'ipv6'],
    ['0:0:0:0:0:0:0:0', 'ipv6'],
    ['::0', 'ipv6'],
    ['::ffff:0.0.0.0', 'ipv4'],
    ['::ffff:0:0', 'ipv4'],
  ])('wildcard %s binds as a wildcard listener', (text) => {
    // a listener on any spelling of the wildcard serves every peer: a CIDR rule alone does not decide it
    expect(wantsSmc([], parseRules('10.0.0.0/8'), text, 80)).toBe(true);
    expect(wantsSmc(parseRules('10.0.0.0/8'), [], text, 80)).toBe(true);
    expect(wantsSmc([], parseRules('*:80'), text, 80)).toBe(false);
  });

  it('plain IPv6 addresses stay IPv6 and match IPv6 rules in any spelling', () => {
    expect(normalizeAddress('FD00::1')).toEqual({ address: 'fd00:0:0:0:0:0:0:1', family: 'ipv6' });
    expect(wantsSmc([], parseRules('[fd00::]/8'), 'FD00:0:0:0:0:0:0:1', 443)).toBe(false);
    expect(wantsSmc([], parseRules('10.0.0.0/8'), 'fd00::a00:5', 443)).toBe(true); // not mapped
    expect(wantsSmc([], parseRules('10.0.0.0/8'), '::a00:5', 443)).toBe(true); // IPv4-compatible is not mapped
  });

  it('non-addresses match no CIDR rule and are refused as rules', () => {
    expect(normalizeAddress('example.com')).toBeUndefined();
    expect(normalizeAddress('::ffff:1:2:3:4:5:6:7')).toBeUndefined();
    expect(ruleMatches(parseRule('10.0.0.0/8'), 'example.com', 80)).toBe(false);
    expect(() => parseRule('[::ffff:zz]')).toThrow(/not an address/);
  });
});
