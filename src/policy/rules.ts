// Include/exclude rules: CIDR[:port] lists that decide which sockets go over SMC.
// "10.0.0.0/8", "10.1.2.3" (a /32), "10.0.0.0/8:5432", "[fd00::]/8:443", "::1", "*:6379" (any address, one port).
import { BlockList, isIP } from 'node:net';

export interface Rule {
  text: string;
  /** undefined = any address */
  net: BlockList | undefined;
  /** the network's address as normalizeAddress spells it (IPv6: eight hextets); undefined = any */
  address: string | undefined;
  family: 'ipv4' | 'ipv6' | undefined;
  /** prefix length of net (0 = every address of its family) */
  prefix: number;
  port: number | undefined;
}

function parsePort(text: string, s: string): number {
  if (!/^\d{1,5}$/.test(s) || Number(s) > 65535) throw new RangeError(`"${text}": port must be 0..65535`);
  return Number(s);
}

export function parseRule(text: string): Rule {
  const t = text.trim();
  let addr = t;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](\/\d+)?(?::(\d+))?$/.exec(t);
  if (bracketed) {
    addr = (bracketed[1] ?? '') + (bracketed[2] ?? '');
    if (bracketed[3] !== undefined) port = parsePort(t, bracketed[3]);
  } else if ((t.includes('.') && t.indexOf(':') === t.lastIndexOf(':')) || t.startsWith('*')) {
    // IPv4 or "*": at most one colon, which separates the port (more colons: IPv6 with a dotted-quad
    // tail, ::ffff:10.0.0.0/104, which takes a port only in brackets)
    const i = t.lastIndexOf(':');
    if (i >= 0) {
      port = parsePort(t, t.slice(i + 1));
      addr = t.slice(0, i);
    }
  }
  if (addr === '*' || addr === '') {
    if (port === undefined) throw new RangeError(`"${text}": "*" needs a port (*:PORT)`);
    return { text: t, net: undefined, address: undefined, family: undefined, prefix: 0, port };
  }
  const slash = addr.indexOf('/');
  const ip = slash >= 0 ? addr.slice(0, slash) : addr;
  // a zone (fe80::1%lo) names an interface, which rules do not match: refused rather than half-read
  if (ip.includes('%')) throw new RangeError(`"${text}": a rule names addresses, not zones (drop "%${ip.slice(ip.indexOf('%') + 1)}")`);
  const kind = isIP(ip);
  if (kind === 0 || !normalizeAddress(ip)) throw new RangeError(`"${text}" is not an address or CIDR (examples: 10.0.0.0/8, 10.1.2.3:5432, [fd00::]/8:443)`);
  const family = kind === 4 ? 'ipv4' : 'ipv6';
  const maxPrefix = kind === 4 ? 32 : 128;
  const prefixText = slash >= 0 ? addr.slice(slash + 1) : String(maxPrefix);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
    throw new RangeError(`"${text}": prefix length must be 0..${maxPrefix}`);
  }
  // a rule on IPv4-mapped IPv6 addresses ([::ffff:10.0.0.0]/104) is the IPv4 rule it spells (10.0.0.0/8)
  const n = normalizeAddress(ip);
  if (n && kind === 6 && n.family === 'ipv4' && Number(prefixText) >= 96) {
    const net = new BlockList();
    net.addSubnet(n.address, Number(prefixText) - 96, 'ipv4');
    return { text: t, net, address: n.address, family: 'ipv4', prefix: Number(prefixText) - 96, port };
  }
  const net = new BlockList();
  net.addSubnet(ip, Number(prefixText), family);
  return { text: t, net, address: n?.address ?? ip, family, prefix: Number(prefixText), port };
}

/** Comma- or whitespace-separated rules; empty text gives no rules. */
export function parseRules(text: string): Rule[] {
  return text
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map(parseRule);
}

/** The 8 hextets of an IPv6 address (any textual form, a dotted-quad tail included), or undefined. */
function hextets(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const b = quad.slice(2, 6).map(Number) as [number, number, number, number];
    text = `${quad[1] ?? ''}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined): number[] => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 1 ? 0 : fill).fill(0), ...tail];
  return all.every((h) => Number.isInteger(h) && h >= 0 && h <= 0xffff) ? all : undefined;
}

/**
 * The one form every matcher compares: an IPv4-mapped IPv6 address in any spelling ("::ffff:10.1.2.3",
 * "::ffff:a01:203", "0:0:0:0:0:FFFF:0A01:0203") is the IPv4 address 10.1.2.3; other IPv6 addresses are
 * lowercased without a zone. Undefined for text that is not an address.
 */
export function normalizeAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const kind = isIP(address);
  if (kind === 4) return { address, family: 'ipv4' };
  if (kind !== 6) return undefined;
  const h = hextets(address);
  if (!h) return undefined;
  if (h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff) {
    const [hi = 0, lo = 0] = h.slice(6);
    return { address: `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`, family: 'ipv4' };
  }
  return { address: h.map((x) => x.toString(16)).join(':'), family: 'ipv6' };
}

/** 0.0.0.0 and :: in any spelling (::ffff:0.0.0.0, 0:0:0:0:0:0:0:0), and an empty address. */
function isWildcard(a: { address: string; family: 'ipv4' | 'ipv6' } | undefined, text: string): boolean {
  if (text === '') return true;
  return a !== undefined && (a.family === 'ipv4' ? a.address === '0.0.0.0' : a.address === '0:0:0:0:0:0:0:0');
}

/**
 * Whether a rule covers an address and port. A listener on a wildcard address (0.0.0.0, ::) serves
 * every peer, so only rules that cover every address (no CIDR, or a /0) decide for it.
 */
export function ruleMatches(rule: Rule, address: string, port: number): boolean {
  return matches(rule, normalizeAddress(address), address, port);
}

function matches(rule: Rule, a: ReturnType<typeof normalizeAddress>, text: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  if (!rule.net) return true;
  if (isWildcard(a, text)) return rule.prefix === 0;
  if (!a || a.family !== rule.family) return false;
  return rule.net.check(a.address, a.family);
}

/**
 * The address a connect() to ADDRESS reaches: a connect to 0.0.0.0 or :: goes to this host's loopback
 * (the kernel connects there), so the policy judges it as 127.0.0.1 or ::1, never as a wildcard listener.
 */
export function connectTarget(address: string): string {
  const a = normalizeAddress(address);
  if (!isWildcard(a, address)) return address;
  return a?.family === 'ipv6' ? '::1' : '127.0.0.1';
}

/**
 * The SMC decision for one socket: an excluded address never uses SMC; with an include list only
 * included addresses do; with neither, everything does. Listeners on a wildcard address are SMC unless
 * a rule excludes every address (e.g. "*:PORT"): SMC listeners serve TCP clients too.
 */
export function wantsSmc(include: readonly Rule[], exclude: readonly Rule[], address: string, port: number): boolean {
  if (include.length === 0 && exclude.length === 0) return true;
  const a = normalizeAddress(address);
  if (exclude.some((r) => matches(r, a, address, port))) return false;
  if (include.length === 0) return true;
  // a wildcard listener must be SMC for any included peer to reach it over SMC
  if (isWildcard(a, address)) return include.some((r) => r.port === undefined || r.port === port);
  return include.some((r) => matches(r, a, address, port));
}
