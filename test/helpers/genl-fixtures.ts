// Generic netlink replies recorded in the SMC-D guest (test/fixtures/genl, see its README) and
// builders for synthetic ones (SMC-R, which that guest has no device for).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildGenl, parseGenl, type GenlMessage } from '../../src/netlink/genl';
import { buildAttr, buildStringAttr } from '../../src/netlink/message';

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

/** The raw genl payloads (genl header + attributes) of one recorded reply. */
export const payloads = (name: string): Buffer[] => fixture(name).messages.map((m) => Buffer.from(m, 'base64'));

export const messages = (name: string): GenlMessage[] => payloads(name).map(parseGenl);

const NLA_F_NESTED = 0x8000;
export const a8 = (t: number, v: number): Buffer => buildAttr(t, Buffer.from([v]));
export function a16(t: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return buildAttr(t, b);
}
export function a32(t: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return buildAttr(t, b);
}
export function a64(t: number, v: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return buildAttr(t, b);
}
export const astr = (t: number, s: string): Buffer => buildStringAttr(t, s);
export const anest = (t: number, ...attrs: Buffer[]): Buffer => buildAttr(t | NLA_F_NESTED, Buffer.concat(attrs));
export const genl = (cmd: number, ...attrs: Buffer[]): GenlMessage => parseGenl(buildGenl(cmd, 1, Buffer.concat(attrs)));
