// `smc-run stats serve` on this machine's kernel: each --target opened once (a PID that exits and is reused
// is reported gone, never read again), duplicate namespaces refused, concurrent scrapes sharing one
// collection, a connection cap, slow clients timed out, and pino JSON lines on stderr for start, requests,
// scrape errors and stop. Namespaces only (unshare, as root); SMC is not needed.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createExporter, sharedCollection, type ExporterLogger } from '../../src/cli/serve';
import { NamespaceReader } from '../../src/metrics/namespace-reader';
import { NETLINK_GENERIC } from '../../src/constants';
import { addon } from '../../src/native';
import { GenlFamily } from '../../src/netlink/genl';
import { NetlinkSocket } from '../../src/netlink/socket';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { processInOwnNetns } from '../helpers/netns';
import { BIN, run } from '../helpers/run';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

type LogRecord = Record<string, unknown> & { level: number; msg: string; event?: string };

interface Exporter {
  child: ChildProcess;
  port: number;
  records: LogRecord[];
  /** stderr lines that are not JSON (none expected) */
  other: string[];
}

/** Starts the exporter on a free port; resolves once its start record says where it listens. */
async function startExporter(args: string[]): Promise<Exporter> {
  const child = spawn(BIN, ['stats', 'serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const records: LogRecord[] = [];
  const other: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stderr! }).on('line', (l) => {
      try {
        const r = JSON.parse(l) as LogRecord;
        records.push(r);
        if (r.event === 'start') resolve(Number(String(r.listen).split(':').pop()));
      } catch {
        other.push(l);
      }
    });
    child.once('exit', (code) => reject(new Error(`exporter exited (${code}): ${other.join(' | ')}`)));
  });
  return { child, port, records, other };
}

function get(port: number, urlPath = '/metrics'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const sample = (body: string, prefix: string): string[] => body.split('\n').filter((l) => l.startsWith(prefix));
const exited = (c: ChildProcess): Promise<number | null> => new Promise((r) => (c.exitCode !== null ? r(c.exitCode) : c.once('exit', (code) => r(code))));

// Runs inside a PID namespace of its own (PID 1), where the next PID can be chosen (ns_last_pid): a
// process in a fresh netns (A), the exporter with --target A, then on "reuse": A killed and a new process,
// in another fresh netns, started with A's PID. Each step answers one line on stdout.
const DRIVER = `
set -u
netns() { stat -L -c %i /proc/$1/ns/net; }
own=$(netns self)
unshare --net sleep 600 & A=$!
while [ "$(netns $A 2>/dev/null)" = "$own" ] || [ -z "$(netns $A 2>/dev/null)" ]; do sleep 0.05; done
"$NODE" "$BIN" stats serve --listen 127.0.0.1:0 --target $A 2>"$LOG" & E=$!
echo "started $A $(netns $A) $E"
read cmd
kill -9 $A; wait $A
# ns_last_pid needs CONFIG_CHECKPOINT_RESTORE (the SMC-D guest kernel has none): there, B gets another PID
[ -e /proc/sys/kernel/ns_last_pid ] && echo $((A - 1)) > /proc/sys/kernel/ns_last_pid
unshare --net sleep 600 & B=$!
while [ "$(netns $B 2>/dev/null)" = "$own" ] || [ -z "$(netns $B 2>/dev/null)" ]; do sleep 0.05; done
echo "reused $B $(netns $B)"
read cmd
echo "fds $(for f in /proc/$E/fd/*; do readlink $f; done | grep '^net:' | tr '\\n' ' ')"
read cmd
kill -TERM $E; wait $E; kill -9 $B
echo "done"
`;

describe('stats serve: each namespace opened once', () => {
  it('a --target whose PID exits and is reused is smc_up 0, target_exited; the new process\'s namespace is never read', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-serve-'));
    const log = path.join(dir, 'exporter.log');
    const driver = spawn('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', DRIVER], {
      env: { ...process.env, NODE: process.execPath, BIN, LOG: log }, stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(driver);
    const lines = readline.createInterface({ input: driver.stdout! })[Symbol.asyncIterator]();
    const next = async (): Promise<string[]> => String((await lines.next()).value).split(' ');
    try {
      const [, pidA] = await next();
      let port = 0;
      for (let i = 0; i < 400 && port === 0; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const start = (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').split('\n').find((l) => l.includes('"event":"start"'));
        if (start) port = Number(String((JSON.parse(start) as { listen: string }).listen).split(':').pop());
      }
      expect(port).toBeGreaterThan(0);
      const label = `netns="pid:${pidA}"`;
      const before = (await get(port)).body;
      expect(sample(before, `smc_up{${label}} `)).toEqual([`smc_up{${label}} ${HOST_HAS_SMC ? 1 : 0}`]);
      expect(sample(before, 'smc_down_reason').filter((l) => l.includes('target_exited'))).toEqual([]);

      driver.stdin!.write('reuse\n');
      const [word, pidB] = await next();
      expect(word).toBe('reused');
      // the same PID, another process in another namespace (where the kernel lets the PID be chosen)
      if (fs.existsSync('/proc/sys/kernel/ns_last_pid')) expect(pidB).toBe(pidA);
      const after = await get(port);
      expect(after.status).toBe(200);
      expect(sample(after.body, `smc_up{${label}} `)).toEqual([`smc_up{${label}} 0`]);
      expect(sample(after.body, 'smc_down_reason')).toEqual([`smc_down_reason{${label},reason="target_exited",code="ESRCH"} 1`]);
      // and again: gone stays gone
      expect(sample((await get(port)).body, 'smc_down_reason')).toEqual([`smc_down_reason{${label},reason="target_exited",code="ESRCH"} 1`]);
      driver.stdin!.write('fds\n');
      const [, ...fds] = await next();
      // the exporter keeps neither namespace open: not the gone one, never the new one
      expect(fds.filter((f) => f !== '')).toEqual([]);
      driver.stdin!.write('end\n');
      expect((await next())[0]).toBe('done');
      const records = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as LogRecord);
      const gone = records.find((r) => r.event === 'scrape_error' && r.reason === 'target_exited');
      expect(gone).toMatchObject({ level: 40, netns: `pid:${pidA}`, code: 'ESRCH' });
    } finally {
      driver.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses two targets in one namespace (the same PID twice, a PID and its path): usage error, one line', async () => {
    const child = await processInOwnNetns(children);
    for (const args of [['--target', String(child.pid), '--target', String(child.pid)], ['--target', String(child.pid), '--netns', `/proc/${child.pid}/ns/net`]]) {
      const r = await run(BIN, ['stats', 'serve', '--listen', '127.0.0.1:0', ...args], {}, { timeoutMs: 10_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('Prometheus rejects duplicate series');
    }
    const twice = await run(BIN, ['stats', 'serve', '--listen', '127.0.0.1:0', '--target', String(child.pid), '--target', String(child.pid)], {}, { timeoutMs: 10_000 });
    expect(twice.stderr.trim()).toBe(`smc-run: --target ${child.pid} is given twice: give each namespace once (Prometheus rejects duplicate series)`);
  });
});

describe('stats serve under load', () => {
  const quiet: ExporterLogger = { debug() {}, info() {}, warn() {}, error() {} };

  it('resolves generic netlink families off the event loop (acked request on the thread pool)', async () => {
    const s = NetlinkSocket.open(NETLINK_GENERIC);
    const sync = vi.spyOn(addon(), 'netlinkRecv');
    try {
      expect((await GenlFamily.resolveAsync(s, 'nlctrl', 1)).id).toBe(0x10);
      await expect(GenlFamily.resolveAsync(s, 'no-such-family', 1)).rejects.toMatchObject({ code: 'ENOENT', message: 'the kernel has no generic netlink family no-such-family' });
      // the socket is still good for the next resolution, and nothing was received on the JS thread
      expect((await GenlFamily.resolveAsync(s, 'nlctrl', 1)).id).toBe(0x10);
      expect(sync).not.toHaveBeenCalled();
    } finally {
      sync.mockRestore();
      s.close();
    }
  });

  it('two concurrent scrapes share one collection', async () => {
    const reader = NamespaceReader.open({});
    const realRead = reader.read.bind(reader);
    const reads = vi.spyOn(reader, 'read').mockImplementation(async () => {
      const r = await realRead();
      await new Promise((res) => setTimeout(res, 300)); // a slow namespace
      return r;
    });
    const shared = sharedCollection([reader], quiet);
    const server = createExporter(shared.collect, { maxConnections: 10, clientTimeoutMs: 5000, logger: quiet });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = server.address() as net.AddressInfo;
      const [a, b] = await Promise.all([get(port), get(port)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(shared.collections()).toBe(1);
      expect(reads).toHaveBeenCalledTimes(1);
      // the same families in both; only the scrape counter differs
      const strip = (s: string): string => s.split('\n').filter((l) => !l.startsWith('smc_exporter_scrapes_total')).join('\n');
      expect(strip(a.body)).toBe(strip(b.body));
      expect(sample(a.body, 'smc_up{netns="self"}')).toHaveLength(1);
      await get(port);
      expect(shared.collections()).toBe(2);
    } finally {
      server.close();
      reader.close();
    }
  });

  it('closes the connection past --max-connections at once, and serves the others', async () => {
    const ex = await startExporter(['--max-connections', '2']);
    const open = (): Promise<net.Socket> => new Promise((r, j) => {
      const s = net.connect(ex.port, '127.0.0.1', () => r(s));
      s.on('error', j);
    });
    const first = await open();
    const second = await open();
    await new Promise((r) => setTimeout(r, 200));
    const third = await open();
    const closed = await new Promise<{ data: string; ms: number }>((resolve) => {
      const t0 = Date.now();
      let data = '';
      third.on('data', (d) => (data += d));
      third.on('error', () => {});
      third.on('close', () => resolve({ data, ms: Date.now() - t0 }));
      third.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(closed.data).toBe('');
    expect(closed.ms).toBeLessThan(2000);
    const reply = await new Promise<string>((resolve) => {
      let data = '';
      first.on('data', (d) => {
        data += d;
        if (data.includes('smc_exporter_scrapes_total')) resolve(data);
      });
      first.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(reply.startsWith('HTTP/1.1 200')).toBe(true);
    first.destroy();
    second.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(ex.records.filter((r) => r.event === 'connection_dropped')).toHaveLength(1);
  });

  it('times out a client that never finishes its request (--client-timeout)', async () => {
    const ex = await startExporter(['--client-timeout', '1']);
    const s = net.connect(ex.port, '127.0.0.1');
    await new Promise<void>((r) => s.once('connect', () => r()));
    const t0 = Date.now();
    s.write('GET /metrics HTTP/1.1\r\nHost: x\r\n'); // the headers never end
    const got = await new Promise<{ data: string; ms: number }>((resolve) => {
      let data = '';
      s.on('data', (d) => (data += d));
      s.on('error', () => {});
      s.on('close', () => resolve({ data, ms: Date.now() - t0 }));
      setTimeout(() => resolve({ data: `still open after ${Date.now() - t0} ms`, ms: Infinity }), 8000);
    });
    s.destroy();
    expect(got.ms).toBeLessThan(4000);
    expect(got.ms).toBeGreaterThanOrEqual(900);
    expect(got.data === '' || got.data.startsWith('HTTP/1.1 408')).toBe(true);
  });
});

describe('stats serve logs pino JSON lines on stderr', () => {
  it('start, each request, scrape errors and stop, with the fields operators filter on', async () => {
    const ex = await startExporter(['--log-level', 'debug']);
    expect((await get(ex.port)).status).toBe(200);
    expect((await get(ex.port)).status).toBe(200);
    expect((await get(ex.port, `/nope?${'q'.repeat(8192)}`)).status).toBe(404);
    ex.child.kill('SIGTERM');
    expect(await exited(ex.child)).toBe(0);
    expect(ex.other).toEqual([]);
    const { records } = ex;
    for (const r of records) {
      expect(r).toMatchObject({ name: 'smc-run', pid: ex.child.pid });
      expect(typeof r.time).toBe('number');
      expect(typeof r.msg).toBe('string');
    }
    const start = records.find((r) => r.event === 'start')!;
    expect(start).toMatchObject({ level: 30, listen: `127.0.0.1:${ex.port}`, targets: [{ netns: 'self', inode: fs.statSync('/proc/self/ns/net').ino }] });
    const requests = records.filter((r) => r.event === 'request');
    // debug level, the path without its query (an 8 KiB query string never reaches the log)
    expect(requests.map((r) => [r.level, r.method, r.path, r.status])).toEqual([[20, 'GET', '/metrics', 200], [20, 'GET', '/metrics', 200], [20, 'GET', '/nope', 404]]);
    expect(requests.every((r) => !JSON.stringify(r).includes('qqqq'))).toBe(true);
    for (const r of requests) {
      expect(typeof r.durationMs).toBe('number');
      expect(String(r.remote)).toMatch(/^127\.0\.0\.1:\d+$/);
    }
    const errors = records.filter((r) => r.event === 'scrape_error');
    if (HOST_HAS_SMC) expect(errors).toEqual([]);
    else expect(errors).toMatchObject([{ level: 40, netns: 'self', code: 'ENOSMC', err: { message: expect.stringContaining('no SMC') } }]);
    const stop = records.find((r) => r.event === 'stop')!;
    // the SMC family is resolved once per namespace; without SMC, each collection asks again (off the loop)
    expect(stop).toMatchObject({ level: 30, signal: 'SIGTERM', collections: 2, familyResolutions: { self: HOST_HAS_SMC ? 1 : 2 } });
    expect(records.indexOf(stop)).toBe(records.length - 1);
  });

  it('only stats serve loads pino: the CLI bundle leaves it out and imports it when serve starts', () => {
    const bundle = fs.readFileSync(path.join(path.dirname(BIN), '..', 'dist', 'cli.mjs'), 'utf8');
    expect(bundle.match(/import\("pino"\)/g)).toHaveLength(1);
    expect(bundle).not.toContain('sonic-boom');
  });
});
