// Runs netlink tests once per byte order on any host: inside forEachByteOrder the parsers and builders
// behave as on a host of that order (src/netlink/host-order.ts), and the recorded fixtures (captured
// little-endian on x86_64) are served converted by test/tools/to-big-endian.ts when the order is BE. The
// expected values are the same in both: a parser that reads one field in the wrong order fails one run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { currentByteOrder, overrideByteOrder, type ByteOrder } from '../../src/netlink/host-order';
import { inetDiagToBigEndian, sockDiagToBigEndian } from '../tools/to-big-endian';

export const BYTE_ORDERS: readonly ByteOrder[] = ['LE', 'BE'];

export function forEachByteOrder(fn: (order: ByteOrder) => void): void {
  for (const order of BYTE_ORDERS) {
    describe(`byte order ${order}`, () => {
      beforeEach(() => overrideByteOrder(order));
      afterEach(() => overrideByteOrder(null));
      fn(order);
    });
  }
}

export interface SockDiagFixture {
  kernel: string;
  expect: Record<string, number>;
  /** base64 smc_diag_msg (or, in tcp.json, inet_diag_msg) payloads as recorded (little-endian) */
  messages: string[];
}

export function sockDiagFixture(name: string): SockDiagFixture {
  const file = path.resolve(__dirname, '..', 'fixtures', 'sockdiag', `${name}.json`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as SockDiagFixture;
}

/** A recorded sock_diag dump's payloads in the byte order in force (the tests' current host). */
export function sockDiagPayloads(name: string): Buffer[] {
  const raw = sockDiagFixture(name).messages.map((m) => Buffer.from(m, 'base64'));
  return currentByteOrder() === 'BE' ? raw.map(sockDiagToBigEndian) : raw;
}

/** A recorded inet_diag (TCP) dump's payloads in the byte order in force. */
export function inetDiagPayloads(name: string): Buffer[] {
  const raw = sockDiagFixture(name).messages.map((m) => Buffer.from(m, 'base64'));
  return currentByteOrder() === 'BE' ? raw.map(inetDiagToBigEndian) : raw;
}
