// Generic netlink replies recorded in the SMC-D guest (test/fixtures/genl, see its README) and
// builders for synthetic ones (SMC-R, which that guest has no device for), both in the byte order in force
// (see byte-orders.ts: recorded replies are little-endian and converted field by field for BE).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildGenl, parseGenl, type GenlMessage } from '../../src/netlink/genl';
import { currentByteOrder, putU16, putU32, putU64 } from '../../src/netlink/host-order';
import { buildAttr, buildStringAttr } from '../../src/netlink/message';
import { genlToBigEndian } from '../tools/to-big-endian';

export const GENL_FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'genl');

export interface GenlFixture {
  command: string;
  cmd: number;
  kernel: string;
  messages: string[];
}

export function fixture(name: string): GenlFixture {
  return JSON.parse(fs.readFileSync(path.join(GENL_FIXTURES, `${name}.json`), 'utf8')) as GenlFixture;
}

/** The raw genl payloads (genl header + attributes) of one recorded reply, in the byte order in force. */
export function payloads(name: string): Buffer[] {
  const f = fixture(name);
  const raw = f.messages.map((m) => Buffer.from(m, 'base64'));
  return currentByteOrder() === 'BE' ? raw.map((p) => genlToBigEndian(p, f.cmd)) : raw;
}

export const messages = (name: string): GenlMessage[] => payloads(name).map(parseGenl);

const NLA_F_NESTED = 0x8000;
export const a8 = (t: number, v: number): Buffer => buildAttr(t, Buffer.from([v]));
export function a16(t: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  putU16(b, v, 0);
  return buildAttr(t, b);
}
export function a32(t: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  putU32(b, v, 0);
  return buildAttr(t, b);
}
export function a64(t: number, v: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  putU64(b, BigInt(v), 0);
  return buildAttr(t, b);
}
export const astr = (t: number, s: string): Buffer => buildStringAttr(t, s);
export const anest = (t: number, ...attrs: Buffer[]): Buffer => buildAttr(t | NLA_F_NESTED, Buffer.concat(attrs));
export const genl = (cmd: number, ...attrs: Buffer[]): GenlMessage => parseGenl(buildGenl(cmd, 1, Buffer.concat(attrs)));
