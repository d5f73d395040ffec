// smc-run/promises: the same answers as the sync API, one dump for all calls of a tick, and an event loop
// that keeps running while the kernel is slow to answer. On a host (with SMC or without) the sockets are
// plain TCP (mode 'tcp'); in the SMC-D guest (SMC_RUN_EXPECT=smcd) this process enables SMC and both ends are SMC-D.
import * as fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enableSmc } from '../../src/index';
import { NLM_F_DUMP } from '../../src/netlink/message';
import { NetlinkSocket } from '../../src/netlink/socket';
import { u64 } from '../../src/netlink/host-order';
import * as promises from '../../src/api/promises';
import { getSmcInfo, listSmcSockets } from '../../src/stats/sockets';
import { addon } from '../../src/native';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { processInOwnNetns } from '../helpers/netns';
import { EXPECT_MODE } from '../helpers/run';

const NETLINK_ROUTE = 0;
const RTM_GETLINK = 18;
const RTM_NEWADDR = 20;
const RTM_GETADDR = 22;

describe('smc-run/promises', () => {
  let server: net.Server;
  const accepted: net.Socket[] = [];
  const clients: net.Socket[] = [];
  beforeAll(async () => {
    if (EXPECT_MODE) expect(enableSmc().enabled).toBe(true);
    server = net.createServer((s) => {
      accepted.push(s);
      s.on('error', () => {});
      s.pipe(s);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as net.AddressInfo;
    for (let i = 0; i < 8; i++) {
      const c = net.connect(port, '127.0.0.1');
      await new Promise<void>((r, j) => c.once('connect', r).once('error', j));
      c.write('x');
      await new Promise((r) => c.once('data', r));
      clients.push(c);
    }
  });
  afterAll(async () => {
    for (const s of [...clients, ...accepted]) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('answers as the sync getSmcInfo does, for both ends', async () => {
    for (const s of [...clients, ...accepted]) {
      const a = await promises.getSmcInfo(s);
      expect(a).toEqual(getSmcInfo(s));
      expect(a.mode).toBe(EXPECT_MODE ?? 'tcp');
      expect(a.local.port).toBe(s.localPort);
      expect(a.remote.port).toBe(s.remotePort);
    }
  });

  it('answers every call of one tick from one dump', async () => {
    const spy = vi.spyOn(NetlinkSocket.prototype, 'requestAsync');
    try {
      const infos = await Promise.all([...clients, ...accepted].map((s) => promises.getSmcInfo(s)));
      expect(infos).toHaveLength(16);
      expect(spy).toHaveBeenCalledTimes(1);
      // calls made while that dump was read get a newer one: two ticks, two dumps (the first call made
      // after the pacing pause, which lasts as long as the last dump took: far less than 500 ms here)
      await new Promise((r) => setTimeout(r, 500));
      const first = promises.getSmcInfo(clients[0] as net.Socket);
      await new Promise((r) => setImmediate(r));
      const second = promises.getSmcInfo(clients[1] as net.Socket);
      await Promise.all([first, second]);
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
    }
  });

  it('paces dumps: after a dump of T ms the next waits T ms, and the calls made meanwhile, tick after tick, share it', async () => {
    const real = NetlinkSocket.prototype.requestAsync;
    const starts: number[] = [];
    // every dump made slow (40 ms more), as at thousands of sockets under emulation
    const spy = vi.spyOn(NetlinkSocket.prototype, 'requestAsync').mockImplementation(async function (this: NetlinkSocket, ...args: Parameters<typeof real>) {
      starts.push(performance.now());
      try {
        return await real.apply(this, args);
      } finally {
        await new Promise((r) => setTimeout(r, 40));
      }
    });
    try {
      await promises.getSmcInfo(clients[0] as net.Socket);
      const ended = performance.now();
      const later: Array<Promise<promises.SmcSocketInfo>> = [];
      for (const s of [...clients.slice(1, 4), ...accepted.slice(0, 3)]) {
        later.push(promises.getSmcInfo(s));
        await new Promise((r) => setImmediate(r)); // each call in a tick of its own
      }
      const infos = await Promise.all(later);
      expect(infos.map((i) => i.mode)).toEqual(Array(6).fill(EXPECT_MODE ?? 'tcp'));
      expect(spy).toHaveBeenCalledTimes(2);
      expect(starts[1]! - ended).toBeGreaterThanOrEqual(30);
    } finally {
      spy.mockRestore();
    }
  });

  it('rejects for a destroyed socket, as the sync twin throws', async () => {
    const c = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((r) => c.once('connect', r));
    c.destroy();
    await expect(promises.getSmcInfo(c)).rejects.toThrow(TypeError);
  });

  it('lists the namespace as the sync listSmcSockets does', async () => {
    if (!EXPECT_MODE && HOST_HAS_SMC) {
      // SMC in the kernel, but this process's sockets are plain TCP: both listings answer, neither has them
      const ours = (rows: { local: { port: number } }[]): number => rows.filter((r) => clients.some((c) => c.localPort === r.local.port)).length;
      const [sync, got] = [listSmcSockets(), await promises.listSmcSockets()];
      expect(Array.isArray(sync) && Array.isArray(got)).toBe(true);
      expect([ours(sync), ours(got)]).toEqual([0, 0]);
      return;
    }
    if (!EXPECT_MODE) {
      // no SMC sock_diag in this kernel: the same typed error from both
      const sync = (() => {
        try {
          return listSmcSockets();
        } catch (e) {
          return e as Error;
        }
      })();
      const got = await promises.listSmcSockets().catch((e: Error) => e);
      expect(got).toBeInstanceOf(Error);
      expect((got as { code?: string }).code).toBe((sync as { code?: string }).code);
      return;
    }
    const rows = await promises.listSmcSockets();
    const mine = rows.filter((r) => r.mode === EXPECT_MODE && clients.some((c) => c.localPort === r.local.port));
    expect(mine).toHaveLength(clients.length);
  });

  it('makes no netlink exchange on the main thread: family resolution and every dump go through requestAsync', async () => {
    // the sync request blocks the calling thread for as long as the kernel takes: a promise call must
    // never reach it, whether SMC is there (replies) or not (the family's ENOENT, sock_diag's error)
    const sync = vi.spyOn(NetlinkSocket.prototype, 'request');
    const async = vi.spyOn(NetlinkSocket.prototype, 'requestAsync');
    try {
      const settled = await Promise.allSettled([
        promises.getSmcSystemStats(), promises.getSmcDevices(), promises.getSmcLinkGroups(), promises.getSmcSystemInfo(),
        promises.listSmcSockets(), promises.getSmcInfo(clients[0] as net.Socket),
      ]);
      expect(settled).toHaveLength(6);
      expect(sync.mock.calls.map((c) => c[3])).toEqual([]);
      expect(async.mock.calls.length).toBeGreaterThanOrEqual(6);
    } finally {
      sync.mockRestore();
      async.mockRestore();
    }
  });

  it('opens the sockets of another namespace off the main thread too (--target)', async () => {
    const children: ChildProcess[] = [];
    const a = addon();
    const sync = vi.spyOn(a, 'openInNetns');
    const async = vi.spyOn(a, 'openInNetnsAsync');
    try {
      const target = { target: (await processInOwnNetns(children)).pid };
      const settled = await Promise.allSettled([promises.listSmcSockets(target), promises.getSmcSystemStats(target), promises.getSmcDevices(target)]);
      expect(settled).toHaveLength(3);
      expect(sync).not.toHaveBeenCalled();
      expect(async.mock.calls.map((c) => c[1])).toEqual(['netlink', 'netlink', 'netlink']);
      // a fresh namespace has no SMC sockets, and the readings answer there; without SMC the sync API's error
      if (HOST_HAS_SMC || EXPECT_MODE) {
        expect(settled[0]).toEqual({ status: 'fulfilled', value: [] });
        expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      } else {
        expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : r.status))).toEqual(['ENOENT', 'ENOSMC', 'ENOSMC']);
      }
    } finally {
      sync.mockRestore();
      async.mockRestore();
      for (const c of children) c.kill();
    }
  });

  it('keeps the event loop running while the kernel does not answer (5 s receive timeout off the main thread, in a nice-19 thread)', async () => {
    // a message without NLM_F_REQUEST is dropped by the kernel without a reply: the fate of every request
    // with a byte-swapped header on a big-endian host before host byte order
    const nl = NetlinkSocket.open(NETLINK_ROUTE);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    const t0 = Date.now();
    // the nice value (field 19 of /proc/PID/task/TID/stat) of each of this process's threads
    const nices = (): number[] => fs.readdirSync('/proc/self/task').map((t) => {
      const stat = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });
    const niced = (): number => nices().filter((n) => n === 19).length;
    const before = niced(); // (a process started under `nice -n 19` has its own threads at 19 already)
    try {
      const pending = nl.requestAsync(RTM_GETLINK, NLM_F_DUMP, Buffer.alloc(16), 'unanswered').catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 500));
      // the exchange runs in a thread of its own at nice 19, the process's other threads keep theirs
      expect(niced()).toBe(before + 1);
      const err = await pending;
      expect((err as { code?: string }).code).toBe('ETIMEDOUT');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4500);
      expect(ticks).toBeGreaterThan(50);
      expect(niced()).toBe(before);
    } finally {
      clearInterval(timer);
      nl.close();
    }
  });

  it('a filtered dump keeps only the messages whose key matches, and the terminator', async () => {
    const nl = NetlinkSocket.open(NETLINK_ROUTE);
    try {
      const flags = 0x1 | NLM_F_DUMP;
      const all = await nl.requestAsync(RTM_GETADDR, flags, Buffer.alloc(8), 'addresses');
      expect(all.length).toBeGreaterThan(0);
      // key: the host-order u64 at payload offset 0 (ifaddrmsg family, prefixlen, flags, scope, index)
      const key = u64(all[0]!.payload, 0);
      const want = all.filter((m) => u64(m.payload, 0) === key);
      const kept = await nl.requestAsync(RTM_GETADDR, flags, Buffer.alloc(8), 'addresses', { type: RTM_NEWADDR, offset: 0, keys: BigUint64Array.of(key) });
      expect(kept.map((m) => m.payload.toString('hex'))).toEqual(want.map((m) => m.payload.toString('hex')));
      const none = await nl.requestAsync(RTM_GETADDR, flags, Buffer.alloc(8), 'addresses', { type: RTM_NEWADDR, offset: 0, keys: BigUint64Array.of(key ^ 0xffn) });
      expect(none.length).toBe(all.filter((m) => u64(m.payload, 0) === (key ^ 0xffn)).length);
      expect(none.length).toBeLessThan(all.length);
    } finally {
      nl.close();
    }
  });

  it('receives a real multi-part dump exactly as the sync request does', async () => {
    const nl = NetlinkSocket.open(NETLINK_ROUTE);
    try {
      const flags = 0x1 | NLM_F_DUMP;
      const sync = nl.request(RTM_GETLINK, flags, Buffer.alloc(16), 'links');
      const async = await nl.requestAsync(RTM_GETLINK, flags, Buffer.alloc(16), 'links');
      expect(async.length).toBeGreaterThan(0);
      expect(async.map((m) => m.type)).toEqual(sync.map((m) => m.type));
      expect(async.map((m) => m.payload.length)).toEqual(sync.map((m) => m.payload.length));
    } finally {
      nl.close();
    }
  });
});
