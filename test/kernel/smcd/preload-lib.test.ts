// The LD_PRELOAD library on SMC-D (loopback-ism): C, Python, nginx and Redis programs under the launcher,
// both ends read through sock_diag (listSmcSockets, what `smc-run stats sockets` shows) while the
// connection is open, data checked end to end. Debian packages from the host's root: python3, nginx, curl,
// redis-server, redis-tools (the lane script installs them on the host).
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SmcSocketInfo } from '../../../src/stats/sockets';
import { PATHS, sockprobeFixture, connectProbe, debugLines, echoOf, ends, probeOf, settled, startServer } from '../../helpers/preload-lib';
import { BIN, run, smcRun } from '../../helpers/run';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const smcd = (s: SmcSocketInfo[], c: SmcSocketInfo[]): boolean => s.some((x) => x.mode === 'smcd') && c.some((x) => x.mode === 'smcd');

describe('LD_PRELOAD library on SMC-D', () => {
  const fx = sockprobeFixture();
  const t0 = Date.now();
  afterAll(() => {
    console.log(`preload-lib (smcd): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  for (const { name, args: rule, replaced } of PATHS) {
    for (const mode of ['blocking', 'nonblock'] as const) {
      it(`C server and C client (${mode} connect; ${name}): both ends SMC-D, 1 MiB echoed intact`, async () => {
        const srv = await startServer(fx.probe, rule, {});
        const client = connectProbe(fx.probe, rule, {}, '127.0.0.1', srv.port, ['bytes=1048576', 'hold=3000', ...(mode === 'nonblock' ? ['nonblock'] : [])]);
        const seen = await ends(srv.port, smcd);
        const c = await client;
        await srv.done;
        console.log(`C ${mode} (${name}): server ${seen.server.map((s) => s.mode)}, client ${seen.client.map((s) => s.mode)}`);
        expect(seen.server.map((s) => s.mode)).toEqual(['smcd']);
        expect(seen.client.map((s) => s.mode)).toEqual(['smcd']);
        expect(probeOf(c)).toMatchObject({ replaced, domain: 43, rc: 0, errno: '', nonblock: mode === 'nonblock', cloexec: true, keepalive: 1, nodelay: 1 });
        expect(probeOf({ ...srv.out(), code: 0, signal: null }, 'listen')).toMatchObject({ replaced, domain: 43, reuseaddr: 1 });
        expect(echoOf(c)).toEqual({ echo: true, bytes: 1048576 });
      });
    }
  }

  it('--exclude keeps one destination on TCP for a C client, decided in place (the SMC listener serves it as a fallback)', async () => {
    const srv = await startServer(fx.probe, [], {}, '127.0.0.1', 1);
    const client = connectProbe(fx.probe, ['-d', '--exclude', `127.0.0.1:${srv.port}`], {}, '127.0.0.1', srv.port, ['hold=3000']);
    const seen = await ends(srv.port, settled);
    const c = await client;
    await srv.done;
    console.log(`C --exclude: server ${JSON.stringify(seen.server.map((s) => [s.mode, s.fallback?.name]))}, client ${JSON.stringify(seen.client.map((s) => [s.mode, s.fallback?.name]))}`);
    // the program's own AF_SMC socket, switched to TCP by the kernel before connect (no SMC handshake): the
    // fallback hands the fd to SMC's internal TCP socket, so SO_DOMAIN now says AF_INET, as for TCP
    expect(probeOf(c)).toMatchObject({ replaced: false, domain: 2, rc: 0 });
    expect(echoOf(c)?.echo).toBe(true);
    expect(debugLines(c.stderr)).toContain(`connect 127.0.0.1:${srv.port} excluded by policy: plain TCP`);
    expect(seen.client.map((s) => [s.mode, s.fallback?.name])).toEqual([['fallback', 'OPTUNSUPP']]);
    expect(seen.server.map((s) => [s.mode, s.fallback?.name])).toEqual([['fallback', 'PEERNOSMC']]);
  });

  it('python3 -m http.server and a Python client: both ends SMC-D, the file intact', async () => {
    const file = crypto.randomBytes(1 << 20);
    fs.writeFileSync(path.join(fx.dir, 'blob'), file);
    const port = 20000 + (process.pid % 20000);
    const server = spawn(BIN, ['python3', '-m', 'http.server', '--protocol', 'HTTP/1.1', '--bind', '127.0.0.1', '--directory', fx.dir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => server.on('close', r));
    try {
      const client = "import http.client,hashlib,sys,time\nfor i in range(300):\n  try:\n    c=http.client.HTTPConnection('127.0.0.1',int(sys.argv[1]));c.request('GET','/blob');r=c.getresponse();break\n  except ConnectionRefusedError: time.sleep(0.1)\nb=r.read()\nprint(r.status,len(b),hashlib.sha256(b).hexdigest(),flush=True)\ntime.sleep(3)\n";
      const c = smcRun(['python3', '-c', client, String(port)]);
      const seen = await ends(port, smcd);
      const r = await c;
      console.log(`python: server ${seen.server.map((s) => s.mode)}, client ${seen.client.map((s) => s.mode)}`);
      expect(r.stdout.trim()).toBe(`200 ${file.length} ${crypto.createHash('sha256').update(file).digest('hex')}`);
      expect(seen.server.map((s) => s.mode)).toContain('smcd');
      expect(seen.client.map((s) => s.mode)).toContain('smcd');
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('nginx (master and worker) serving a file to curl and to Node fetch, all under smc-run: SMC-D both ends, the file intact', async () => {
    const www = path.join(fx.dir, 'www');
    fs.mkdirSync(www);
    // the worker runs as nobody: it must reach the file through the temp fx.dir
    fs.chmodSync(fx.dir, 0o755);
    const file = crypto.randomBytes(1 << 20);
    fs.writeFileSync(path.join(www, 'blob'), file, { mode: 0o644 });
    const sha = crypto.createHash('sha256').update(file).digest('hex');
    const port = 30000 + (process.pid % 10000);
    const tmp = (n: string): string => `${n}_temp_path ${path.join(fx.dir, `ngx-${n}`)};`;
    fs.writeFileSync(path.join(fx.dir, 'nginx.conf'), [
      'daemon off;', 'master_process on;', 'worker_processes 1;', `pid ${path.join(fx.dir, 'nginx.pid')};`, 'error_log stderr;',
      'events { worker_connections 64; }',
      // sendfile as in Debian's own nginx.conf: the file goes through the SMC socket's splice path; paced
      // to about 4 s a response, so that sock_diag sees each connection while it is open (curl's own
      // --limit-rate took 1.1 s for the 1 MiB here)
      `http { access_log off; sendfile on; limit_rate 256k; ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp).join(' ')}`,
      `  server { listen 127.0.0.1:${port}; root ${www}; } }`, ''].join('\n'));
    const server = spawn(BIN, ['nginx', '-p', fx.dir, '-e', 'stderr', '-c', path.join(fx.dir, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let serverErr = '';
    server.stderr.on('data', (d: Buffer) => { serverErr += d.toString(); });
    const exited = new Promise((r) => server.on('close', r));
    try {
      const url = `http://127.0.0.1:${port}/blob`;
      for (let i = 0; i < 100 && (await run('curl', ['-sfI', '-o', '/dev/null', url])).code !== 0; i++) await sleep(200);
      const out = path.join(fx.dir, 'curl.out');
      const curl = smcRun(['-d', 'curl', '-sSf', '-o', out, url]);
      const seenCurl = await ends(port, smcd);
      const c = await curl;
      expect(c.code, c.stderr + serverErr).toBe(0);
      expect(crypto.createHash('sha256').update(fs.readFileSync(out)).digest('hex')).toBe(sha);
      // Node's fetch (the Node shim, not the library): its keep-alive connection stays open after the body
      const client = "const [url, port] = process.argv.slice(1); fetch(url).then(async (r) => { const b = Buffer.from(await r.arrayBuffer()); console.log(r.status, b.length, require('node:crypto').createHash('sha256').update(b).digest('hex')); setTimeout(() => {}, 3000); });";
      const fetchRun = smcRun(['node', '-e', client, url, String(port)]);
      const seenFetch = await ends(port, (s, cl) => smcd(s, cl) && cl.length > 0);
      const f = await fetchRun;
      console.log(`nginx: curl (${debugLines(c.stderr).join(' | ')}) server ${seenCurl.server.map((s) => s.mode)}, client ${seenCurl.client.map((s) => s.mode)}; fetch server ${seenFetch.server.map((s) => s.mode)}, client ${seenFetch.client.map((s) => s.mode)}`);
      expect(f.stdout.trim(), f.stderr).toBe(`200 ${file.length} ${sha}`);
      expect(seenCurl.server.map((s) => s.mode)).toContain('smcd');
      expect(seenCurl.client.map((s) => s.mode)).toEqual(['smcd']);
      // curl's connection may still be closing beside fetch's (it reads 'none' then): nothing fell back
      expect(seenFetch.server.map((s) => s.mode)).toContain('smcd');
      expect(seenFetch.client.map((s) => s.mode)).toContain('smcd');
      expect(seenFetch.server.concat(seenFetch.client).filter((s) => s.mode !== 'smcd' && s.mode !== 'none')).toEqual([]);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  });

  /** redis-server under smc-run on 127.0.0.1:port, answering PING through redis-cli under smc-run. */
  async function startRedis(port: number): Promise<{ cli: (...args: string[]) => ReturnType<typeof smcRun>; stop: () => Promise<unknown> }> {
    const server = spawn(BIN, ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', fx.dir, '--daemonize', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => server.on('close', r));
    const cli = (...args: string[]) => smcRun(['redis-cli', '-p', String(port), ...args]);
    for (let i = 0; i < 100 && (await cli('PING')).stdout.trim() !== 'PONG'; i++) await sleep(200);
    return { cli, stop: () => { server.kill('SIGTERM'); return exited; } };
  }

  it('redis-server and redis-benchmark / redis-cli under smc-run: SMC-D both ends, a 256 KiB value intact', async () => {
    const port = 40000 + (process.pid % 20000);
    const { cli, stop } = await startRedis(port);
    try {
      const value = crypto.randomBytes(128 << 10).toString('hex');
      expect((await run(BIN, ['redis-cli', '-p', String(port), '-x', 'SET', 'k'], {}, { input: value })).stdout.trim()).toBe('OK');
      expect((await cli('--no-raw', 'STRLEN', 'k')).stdout.trim()).toBe(`(integer) ${value.length}`);
      expect((await cli('GET', 'k')).stdout.trim()).toBe(value);
      const bench = smcRun(['redis-benchmark', '-p', String(port), '-n', '20000', '-c', '4', '-t', 'set,get', '-q']);
      const seen = await ends(port, smcd);
      const b = await bench;
      console.log(`redis: server ${seen.server.map((s) => s.mode)}, client ${seen.client.map((s) => s.mode)}; redis-benchmark: ${b.stdout.replace(/\r/g, '\n').split('\n').filter((l) => /requests per second/.test(l)).join('; ')}`);
      expect(b.code, b.stderr).toBe(0);
      expect(seen.server.map((s) => s.mode)).toContain('smcd');
      expect(seen.client.map((s) => s.mode)).toContain('smcd');
      // no end fell back or went elsewhere; redis-benchmark's connections that are still in their
      // handshake or already released while they close read 'none' (no SMC connection in place)
      expect(seen.server.concat(seen.client).filter((s) => s.mode !== 'smcd' && s.mode !== 'none')).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('redis-server under smc-run and a Node ioredis client under smc-run: SMC-D both ends, a 256 KiB value and a 1,000-pair pipeline intact and in order', async () => {
    const port = 40000 + ((process.pid + 1) % 20000);
    const { stop } = await startRedis(port);
    try {
      const client = smcRun(['node', 'test/scenarios/redis-client.cjs', '127.0.0.1', String(port), '3000']);
      const seen = await ends(port, (s, c) => smcd(s, c) && c.length > 0);
      const r = await client;
      const res = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { ok?: boolean; client?: { mode: string } };
      console.log(`ioredis: ${r.stdout.trim()}; server ${seen.server.map((s) => s.mode)}, client ${seen.client.map((s) => s.mode)}`);
      expect(r.code, r.stderr).toBe(0);
      expect(res).toMatchObject({ ok: true, value: { bytes: 256 << 10, intact: true }, pipeline: { commands: 2000, inOrder: true }, client: { mode: 'smcd' } });
      expect(seen.server.map((s) => s.mode)).toEqual(['smcd']);
      expect(seen.client.map((s) => s.mode)).toEqual(['smcd']);
    } finally {
      await stop();
    }
  });
});
