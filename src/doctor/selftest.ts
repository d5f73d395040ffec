// Live self-tests: a loopback connection through smc-run's own hook (both ends' mode from sock_diag),
// and a connection to a peer host that runs `smc-run doctor --serve PORT` (which answers with its
// view of the same connection).
import * as net from 'node:net';
import { readConfig } from '../config';
import { enableFromConfig } from '../hook/enable';
import { getSmcInfo, type SmcSocketInfo } from '../stats/sockets';
import type { Check } from './checks';

const PROBE = 'smc-run-doctor?\n';

export interface EndView {
  mode: SmcSocketInfo['mode'];
  fallback: string | null;
  why: string | null;
}

const view = (i: SmcSocketInfo): EndView => ({
  mode: i.mode,
  fallback: i.fallback ? `${i.fallback.name}${i.fallback.peerName ? ` (peer: ${i.fallback.peerName})` : ''}` : null,
  why: i.fallback ? `${i.fallback.description}${i.fallback.fix ? `; fix: ${i.fallback.fix}` : ''}` : null,
});

const MODE = { smcd: 'SMC-D', smcr: 'SMC-R', fallback: 'TCP (fell back)', none: 'SMC (no connection yet)', tcp: 'TCP (not SMC)', listening: 'listening' } as const;

function enable(): string | undefined {
  const r = enableFromConfig({ ...readConfig({}), session: undefined, debug: false });
  return r.enabled ? undefined : r.reason;
}

function judge(id: string, what: string, ends: [string, EndView][]): Check {
  const text = ends.map(([side, v]) => `${side} ${MODE[v.mode]}${v.fallback ? ` ${v.fallback}` : ''}`).join(', ');
  const good = ends.every(([, v]) => v.mode === 'smcd' || v.mode === 'smcr');
  if (good) return { id, status: 'ok', message: `${what}: ${text}` };
  const why = ends.map(([, v]) => v.why).find((w) => w) ?? undefined;
  return { id, status: 'fail', message: `${what}: ${text}${why ? ` — ${why.split('; fix: ')[0]}` : ''}`, fix: why?.split('; fix: ')[1] };
}

/** A connection to 127.0.0.1 inside this process, both ends over smc-run's hook. */
export async function loopbackSelfTest(): Promise<Check> {
  const off = enable();
  if (off) return { id: 'selftest.loopback', status: 'fail', message: `loopback self-test impossible: ${off}` };
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const client = await new Promise<net.Socket>((resolve, reject) => {
      const c = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1', () => resolve(c));
      c.once('error', reject);
    });
    const srv = await accepted;
    // one byte each way so both ends have finished the handshake
    srv.write('x');
    await new Promise((r) => client.once('data', r));
    const ends: [string, EndView][] = [['client', view(getSmcInfo(client))], ['server', view(getSmcInfo(srv))]];
    client.destroy();
    srv.destroy();
    return judge('selftest.loopback', 'loopback connection 127.0.0.1', ends);
  } finally {
    server.close();
  }
}

/** Connects to HOST:PORT where `smc-run doctor --serve PORT` runs; both ends' view of the connection. */
export async function peerSelfTest(hostPort: string, timeoutMs = 60_000): Promise<Check> {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(hostPort);
  if (!m) throw new RangeError(`--peer ${hostPort}: expected HOST:PORT`);
  const off = enable();
  if (off) return { id: 'selftest.peer', status: 'fail', message: `peer self-test impossible: ${off}` };
  const host = m[1] as string;
  const port = Number(m[2]);
  const socket = net.connect(port, host);
  try {
    const reply = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${hostPort} within ${timeoutMs} ms`)), timeoutMs);
      let buf = '';
      socket.once('connect', () => socket.write(PROBE));
      socket.on('data', (d) => {
        buf += d;
        const i = buf.indexOf('\n');
        if (i >= 0) {
          clearTimeout(timer);
          resolve(buf.slice(0, i));
        }
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const peer = JSON.parse(reply) as EndView;
    return judge('selftest.peer', `connection to ${hostPort}`, [['this end', view(getSmcInfo(socket))], ['peer end', peer]]);
  } catch (e) {
    return { id: 'selftest.peer', status: 'fail', message: `cannot test ${hostPort}: ${(e as Error).message}`, fix: `run "smc-run doctor --serve ${port}" on the peer` };
  } finally {
    socket.destroy();
  }
}

/** Serves peer self-tests on PORT (all addresses) until stopped, or after `count` answers. */
export async function serveSelfTest(port: number, count: number | undefined, onListening: (port: number) => void): Promise<void> {
  const off = enable();
  if (off) throw new Error(`cannot serve over SMC: ${off}`);
  let answered = 0;
  const server = net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', () => {
      s.end(`${JSON.stringify(view(getSmcInfo(s)))}\n`);
      answered++;
      if (count !== undefined && answered >= count) server.close();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      onListening((server.address() as net.AddressInfo).port);
    });
    server.once('close', () => resolve());
  });
}
