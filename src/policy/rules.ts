// Include/exclude rules: CIDR[:port] lists that decide which sockets go over SMC.
// "10.0.0.0/8", "10.1.2.3" (a /32), "10.0.0.0/8:5432", "[fd00::]/8:443", "::1", "*:6379" (any address, one port).
import { BlockList, isIP } from 'node:net';

export interface Rule {
  text: string;
  /** undefined = any address */
  net: BlockList | undefined;
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
  } else if (t.includes('.') || t.startsWith('*')) {
    // IPv4 or "*": at most one colon, which separates the port
    const i = t.lastIndexOf(':');
    if (i >= 0) {
      port = parsePort(t, t.slice(i + 1));
      addr = t.slice(0, i);
    }
  }
  if (addr === '*' || addr === '') {
    if (port === undefined) throw new RangeError(`"${text}": "*" needs a port (*:PORT)`);
    return { text: t, net: undefined, family: undefined, prefix: 0, port };
  }
  const slash = addr.indexOf('/');
  const ip = slash >= 0 ? addr.slice(0, slash) : addr;
  const kind = isIP(ip);
  if (kind === 0) throw new RangeError(`"${text}" is not an address or CIDR (examples: 10.0.0.0/8, 10.1.2.3:5432, [fd00::]/8:443)`);
  const family = kind === 4 ? 'ipv4' : 'ipv6';
  const maxPrefix = kind === 4 ? 32 : 128;
  const prefixText = slash >= 0 ? addr.slice(slash + 1) : String(maxPrefix);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
    throw new RangeError(`"${text}": prefix length must be 0..${maxPrefix}`);
  }
  const net = new BlockList();
  net.addSubnet(ip, Number(prefixText), family);
  return { text: t, net, family, prefix: Number(prefixText), port };
}

/** Comma- or whitespace-separated rules; empty text gives no rules. */
export function parseRules(text: string): Rule[] {
  return text
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map(parseRule);
}

/** "::ffff:10.1.2.3" is the IPv4 address 10.1.2.3 for matching purposes. */
export function normalizeAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1] ?? '', family: 'ipv4' };
  const kind = isIP(address);
  if (kind === 4) return { address, family: 'ipv4' };
  if (kind === 6) return { address, family: 'ipv6' };
  return undefined;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * Whether a rule covers an address and port. A listener on a wildcard address (0.0.0.0, ::) serves
 * every peer, so only rules that cover every address (no CIDR, or a /0) decide for it.
 */
export function ruleMatches(rule: Rule, address: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  if (!rule.net) return true;
  if (WILDCARDS.has(address)) return rule.prefix === 0;
  const a = normalizeAddress(address);
  if (!a || a.family !== rule.family) return false;
  return rule.net.check(a.address, a.family);
}

/**
 * The SMC decision for one socket: an excluded address never uses SMC; with an include list only
 * included addresses do; with neither, everything does. Listeners on a wildcard address are SMC unless
 * a rule excludes every address (e.g. "*:PORT"): SMC listeners serve TCP clients too.
 */
export function wantsSmc(include: readonly Rule[], exclude: readonly Rule[], address: string, port: number): boolean {
  if (exclude.some((r) => ruleMatches(r, address, port))) return false;
  if (include.length === 0) return true;
  // a wildcard listener must be SMC for any included peer to reach it over SMC
  if (WILDCARDS.has(address)) return include.some((r) => r.port === undefined || r.port === port);
  return include.some((r) => ruleMatches(r, address, port));
}
