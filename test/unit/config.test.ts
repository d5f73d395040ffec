import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../src/config';
import { parseRule, parseRules, ruleMatches, wantsSmc } from '../../src/policy/rules';
import { formatSize, parseSize, parseSocketBufferSize, SOCKET_BUFFER_MAX } from '../../src/units';

describe('sizes', () => {
  it('parses what people write', () => {
    expect(parseSize('65536')).toBe(65536);
    expect(parseSize('64k')).toBe(65536);
    expect(parseSize('256K')).toBe(262144);
    expect(parseSize('1M')).toBe(1048576);
    expect(parseSize('1MiB')).toBe(1048576);
    expect(parseSize(' 2m ')).toBe(2097152);
    expect(formatSize(1048576)).toBe('1M');
    expect(formatSize(65536)).toBe('64k');
    expect(formatSize(1000)).toBe('1000');
  });
  it('rejects the rest', () => {
    for (const bad of ['', 'lots', '-1', '1.5M', '1T', '99999999999999999999']) expect(() => parseSize(bad), bad).toThrow(RangeError);
  });
});

describe('socket buffer sizes (SO_SNDBUF / SO_RCVBUF take an int, which the kernel doubles)', () => {
  const TOO_LARGE = /^"[^"]+" is too large for a socket buffer: at most 1073741823 bytes \(SO_SNDBUF\/SO_RCVBUF take an int that the kernel doubles: INT_MAX\/2\)$/;

  it('takes up to INT_MAX/2 = 1073741823 bytes', () => {
    expect(SOCKET_BUFFER_MAX).toBe(1073741823);
    expect(parseSocketBufferSize('1073741823')).toBe(1073741823);
    expect(parseSocketBufferSize('1023m')).toBe(1023 * 1024 * 1024);
    expect(parseSocketBufferSize('0')).toBe(0);
    expect(parseSocketBufferSize(1048576)).toBe(1048576);
  });

  it('refuses 1g and more, in text or as a number, instead of wrapping to a tiny or negative int', () => {
    for (const big of ['1g', '1073741824', '2g', '2147483648', '4g', '4294967296', '0001g', '99999999999999999999']) {
      expect(() => parseSocketBufferSize(big), big).toThrow(RangeError);
      expect(() => parseSocketBufferSize(big), big).toThrow(big.length > 15 ? /too large/ : TOO_LARGE);
    }
    for (const bad of [2 ** 32, 2 ** 31, -1, 1.5, Number.NaN]) expect(() => parseSocketBufferSize(bad), String(bad)).toThrow(RangeError);
  });

  it('SMC_RUN_SNDBUF / SMC_RUN_RCVBUF of 2 GiB and more: one line naming the variable and the limit', () => {
    for (const [name, value] of [['SMC_RUN_SNDBUF', '4g'], ['SMC_RUN_RCVBUF', '2147483648'], ['SMC_RUN_SNDBUF', '2g']] as const) {
      let e: unknown;
      try {
        readConfig({ [name]: value });
      } catch (err) {
        e = err;
      }
      expect(e, `${name}=${value}`).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toBe(`${name}: "${value}" is too large for a socket buffer: at most 1073741823 bytes (SO_SNDBUF/SO_RCVBUF take an int that the kernel doubles: INT_MAX/2)`);
    }
    expect(readConfig({ SMC_RUN_SNDBUF: '1023M' }).sndbuf).toBe(1023 * 1024 * 1024);
  });
});

describe('CIDR[:port] rules', () => {
  it('match v4, v6, v4-mapped and ports', () => {
    const r = parseRule('10.0.0.0/8');
    expect(ruleMatches(r, '10.1.2.3', 80)).toBe(true);
    expect(ruleMatches(r, '::ffff:10.1.2.3', 80)).toBe(true);
    expect(ruleMatches(r, '11.0.0.1', 80)).toBe(false);
    expect(ruleMatches(r, 'fd00::1', 80)).toBe(false);
    const p = parseRule('10.1.2.3:5432');
    expect(ruleMatches(p, '10.1.2.3', 5432)).toBe(true);
    expect(ruleMatches(p, '10.1.2.3', 5433)).toBe(false);
    const v6 = parseRule('[fd00::]/8:443');
    expect(ruleMatches(v6, 'fd12::1', 443)).toBe(true);
    expect(ruleMatches(v6, 'fd12::1', 80)).toBe(false);
    expect(ruleMatches(parseRule('::1'), '::1', 1)).toBe(true);
    expect(ruleMatches(parseRule('*:6379'), '1.2.3.4', 6379)).toBe(true);
    expect(ruleMatches(parseRule('*:6379'), '::1', 6380)).toBe(false);
  });
  it('exclude wins over include; an include list limits SMC to it', () => {
    const inc = parseRules('10.0.0.0/8');
    const exc = parseRules('10.9.0.0/16, *:5432');
    expect(wantsSmc([], [], '1.2.3.4', 1)).toBe(true);
    expect(wantsSmc(inc, exc, '10.1.0.1', 80)).toBe(true);
    expect(wantsSmc(inc, exc, '10.9.0.1', 80)).toBe(false);
    expect(wantsSmc(inc, exc, '10.1.0.1', 5432)).toBe(false);
    expect(wantsSmc(inc, exc, '192.168.0.1', 80)).toBe(false);
  });
  it('wildcard listeners stay SMC unless every address is excluded', () => {
    const inc = parseRules('10.0.0.0/8');
    expect(wantsSmc(inc, [], '0.0.0.0', 80)).toBe(true);
    expect(wantsSmc(inc, [], '::', 80)).toBe(true);
    expect(wantsSmc(parseRules('*:443'), [], '::', 80)).toBe(false);
    expect(wantsSmc([], parseRules('10.0.0.0/8'), '0.0.0.0', 80)).toBe(true);
    expect(wantsSmc([], parseRules('*:80'), '0.0.0.0', 80)).toBe(false);
    expect(wantsSmc([], parseRules('0.0.0.0/0'), '0.0.0.0', 80)).toBe(false);
  });
  it('reject malformed entries with the reason', () => {
    for (const bad of ['10.0.0.0/33', '10.0.0.1:70000', 'example.com', '*', '[::1', 'fd00::/129', '1.2.3.4/x']) {
      expect(() => parseRule(bad), bad).toThrow(RangeError);
    }
  });
});

describe('readConfig', () => {
  it('defaults', () => {
    const c = readConfig({});
    expect(c).toMatchObject({ disabled: false, debug: false, socketFamily: 'smc', proto: 'auto', include: [], exclude: [], sndbuf: undefined });
  });
  it('reads every SMC_RUN_ variable', () => {
    const c = readConfig({
      SMC_RUN_DISABLE: 'yes', SMC_RUN_DEBUG: '1', SMC_RUN_LOG_FORMAT: 'json', SMC_RUN_SOCKET_FAMILY: 'inet',
      SMC_RUN_PROTO: 'ipproto', SMC_RUN_INCLUDE: '10.0.0.0/8', SMC_RUN_EXCLUDE: '*:22', SMC_RUN_SNDBUF: '1M', SMC_RUN_RCVBUF: '256k', SMC_RUN_SESSION: 's1',
    });
    expect(c).toMatchObject({ disabled: true, debug: true, logFormat: 'json', socketFamily: 'inet', proto: 'ipproto', sndbuf: 1048576, rcvbuf: 262144, session: 's1' });
    expect(c.include).toHaveLength(1);
    expect(c.exclude).toHaveLength(1);
  });
  it('names the variable in errors', () => {
    expect(() => readConfig({ SMC_RUN_PROTO: 'tcp' })).toThrow(ConfigError);
    expect(() => readConfig({ SMC_RUN_SNDBUF: 'big' })).toThrow(/SMC_RUN_SNDBUF/);
    expect(() => readConfig({ SMC_RUN_EXCLUDE: 'nope' })).toThrow(/SMC_RUN_EXCLUDE/);
  });
});
