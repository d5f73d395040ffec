// getSmcInfo keeps one sock_diag socket per thread. A dump the kernel has not finished on that socket
// makes every new dump request on it fail with EBUSY (netlink_dump_start: one dump per socket at a time),
// so after any error mid-dump the socket must be thrown away and the next call must get a fresh one.
// The host has no SMC sock_diag; the unfinished dump here is a real multi-part TCP dump (inet_diag, the same
// sock_diag protocol) left behind on the cached socket by an injected receive failure.
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AF_INET } from '../../src/constants';
import { addon } from '../../src/native';
import { buildTcpDiagRequest } from '../../src/netlink/inet-diag';
import { buildMessage, NLM_F_DUMP, NLM_F_REQUEST, parseMessages } from '../../src/netlink/message';
import { SOCK_DIAG_BY_FAMILY } from '../../src/netlink/sockdiag';
import { getSmcInfo } from '../../src/stats/sockets';

describe('the cached sock_diag socket of getSmcInfo', () => {
  const servers: net.Server[] = [];
  let client: net.Socket;
  beforeAll(async () => {
    // enough TCP sockets for a dump of many datagrams (about 40 rows fit one)
    for (let i = 0; i < 400; i++) {
      const s = net.createServer();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
      servers.push(s);
    }
    client = net.connect((servers[0]!.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise<void>((r, j) => client.once('connect', r).once('error', j));
  });
  afterAll(async () => {
    client.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('is discarded after an error mid-dump: the next call answers from a fresh dump', () => {
    expect(getSmcInfo(client).mode).toBe('tcp'); // opens the cached socket
    const a = addon();
    const realRecv = a.netlinkRecv.bind(a);
    let diagInode = -1n;
    let tcpParts = 0;
    const spy = vi.spyOn(a, 'netlinkRecv').mockImplementation((fd: number) => {
      diagInode = a.fstatInode(fd);
      // a dump of many parts starts on this socket; one part is read, then the receive fails
      a.netlinkSend(fd, buildMessage(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 4242, buildTcpDiagRequest(AF_INET)));
      for (;;) {
        const d = realRecv(fd);
        if ([...parseMessages(d)].some((m) => m.seq === 4242 && m.type === SOCK_DIAG_BY_FAMILY)) break;
      }
      tcpParts++;
      throw Object.assign(new Error('recv: ETIMEDOUT (injected)'), { code: 'ETIMEDOUT', syscall: 'recv' });
    });
    try {
      expect(() => getSmcInfo(client)).toThrow('ETIMEDOUT (injected)');
    } finally {
      spy.mockRestore();
    }
    expect(tcpParts).toBe(1);
    const inodesSeen = new Set<bigint>();
    let oldDumpMessages = 0;
    const seen = vi.spyOn(a, 'netlinkRecv').mockImplementation((fd: number) => {
      inodesSeen.add(a.fstatInode(fd));
      const d = realRecv(fd);
      oldDumpMessages += parseMessages(d).filter((m) => m.seq === 4242).length;
      return d;
    });
    try {
      // before the fix the same socket is used: it reads the rest of the old dump (skipped by sequence
      // number) before its own reply; with SMC sock_diag in the kernel the new dump is refused (EBUSY)
      const info = getSmcInfo(client);
      expect(info.mode).toBe('tcp');
      expect(info.local.port).toBe(client.localPort);
    } finally {
      seen.mockRestore();
    }
    expect(oldDumpMessages).toBe(0);
    // answered on a socket other than the one with the unfinished dump (the fd number may be reused)
    expect(inodesSeen.size).toBe(1);
    expect(inodesSeen.has(diagInode)).toBe(false);
  });
});
