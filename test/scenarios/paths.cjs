'use strict';
// Every TCP path of Node that the hook must cover, one scenario per argument:
//   node paths.cjs <scenario> [bytes]
// Each scenario moves data, checks it end to end and reports the SMC mode of its connections.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { probe, sha256, report, fail, collect, withTimeout } = require('./lib.cjs');

const TLS_DIR = path.join(__dirname, '..', 'fixtures', 'tls');
const tlsOpts = () => ({ key: fs.readFileSync(path.join(TLS_DIR, 'key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'cert.pem')) });
const listen = (server, ...args) => new Promise((resolve, reject) => { server.once('error', reject); server.listen(...args, () => resolve(server.address())); });
const close = (server) => new Promise((resolve) => server.close(() => resolve()));

/** Client sends `bytes` random bytes; the server hashes them and echoes the hash back. */
async function transfer(server, connect, bytes) {
  const conns = [];
  const serverDone = new Promise((resolve, reject) => {
    server.once('connection', (s) => {
      conns.push(probe('server', s));
      collect(s).then((r) => { s.end(JSON.stringify(r)); resolve(r); }, reject);
    });
  });
  const payload = crypto.randomBytes(bytes);
  const client = await connect();
  conns.push(probe('client', client));
  const answer = collect(client);
  client.end(payload);
  const got = await answer;
  const srv = await serverDone;
  client.destroy();
  return { conns, sent: sha256(payload), serverSaw: srv.hash, length: srv.length };
}

function connectTo(options) {
  return () => new Promise((resolve, reject) => {
    const c = net.connect(options, () => resolve(c));
    c.once('error', reject);
  });
}

async function plainTransfer(host, listenHost, bytes, extra = {}) {
  const server = net.createServer();
  const addr = await listen(server, 0, listenHost);
  const r = await transfer(server, connectTo({ host, port: addr.port, ...extra }), bytes);
  await close(server);
  return { ok: r.sent === r.serverSaw && r.length === bytes, ...r };
}

async function httpKeepAlive() {
  const http = require('node:http');
  let connections = 0;
  const serverConns = [];
  const server = http.createServer((req, res) => res.end(`ok ${req.url}`));
  server.on('connection', (s) => { connections++; serverConns.push(probe('server', s)); });
  const { port } = await listen(server, 0, '127.0.0.1');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const bodies = [];
  let clientConn;
  for (let i = 0; i < 5; i++) {
    bodies.push(await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: `/${i}`, agent }, (res) => {
        clientConn ??= probe('client', res.socket);
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
      }).on('error', reject);
    }));
  }
  agent.destroy();
  await close(server);
  const ok = connections === 1 && bodies.every((b, i) => b === `ok /${i}`);
  return { ok, connections, conns: [...serverConns, clientConn] };
}

async function httpsGet(host) {
  const https = require('node:https');
  const conns = [];
  const server = https.createServer(tlsOpts(), (req, res) => res.end('secure'));
  server.on('secureConnection', (s) => conns.push(probe('server', s)));
  const { port } = await listen(server, 0, host);
  const body = await new Promise((resolve, reject) => {
    https.get({ host, port, path: '/', ca: tlsOpts().cert, servername: 'localhost', agent: false }, (res) => {
      conns.push(probe('client', res.socket));
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  await close(server);
  return { ok: body === 'secure', conns };
}

async function tlsTransfer(bytes) {
  const tls = require('node:tls');
  const server = tls.createServer(tlsOpts());
  server.on('secureConnection', (s) => server.emit('connection-secure', s));
  const { port } = await listen(server, 0, '127.0.0.1');
  const conns = [];
  const serverDone = new Promise((resolve, reject) => {
    server.once('connection-secure', (s) => {
      conns.push(probe('server', s));
      collect(s).then((r) => { s.end(JSON.stringify(r)); resolve(r); }, reject);
    });
  });
  const payload = crypto.randomBytes(bytes);
  const client = await new Promise((resolve, reject) => {
    const c = tls.connect({ host: '127.0.0.1', port, ca: tlsOpts().cert, servername: 'localhost' }, () => resolve(c));
    c.once('error', reject);
  });
  conns.push(probe('client', client));
  const answer = collect(client);
  client.end(payload);
  await answer;
  const srv = await serverDone;
  await close(server);
  return { ok: srv.hash === sha256(payload), conns };
}

async function http2Get() {
  const http2 = require('node:http2');
  const conns = [];
  const server = http2.createServer();
  server.on('connection', (s) => conns.push(probe('server', s)));
  server.on('stream', (stream) => { stream.respond({ ':status': 200 }); stream.end('h2 ok'); });
  const { port } = await listen(server, 0, '127.0.0.1');
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const body = await new Promise((resolve, reject) => {
    session.once('connect', () => conns.push(probe('client', session.socket)));
    const req = session.request({ ':path': '/' });
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => resolve(b));
    req.on('error', reject);
    req.end();
  });
  session.close();
  await close(server);
  return { ok: body === 'h2 ok', conns };
}

async function fetchGet() {
  const http = require('node:http');
  const conns = [];
  const server = http.createServer((req, res) => res.end('fetched'));
  server.on('connection', (s) => conns.push(probe('server', s)));
  const { port } = await listen(server, 0, '127.0.0.1');
  const texts = [];
  for (let i = 0; i < 3; i++) texts.push(await (await fetch(`http://127.0.0.1:${port}/`)).text());
  server.closeAllConnections();
  await close(server);
  // undici may pool several connections: count what the server saw, not requests
  return { ok: texts.every((t) => t === 'fetched') && conns.length >= 1, conns };
}

async function autoSelect() {
  // server only on 127.0.0.1: "localhost" tries ::1 (refused) then 127.0.0.1, each a new handle
  const server = net.createServer();
  const { port } = await listen(server, 0, '127.0.0.1');
  const r = await transfer(server, connectTo({ host: 'localhost', port, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 2000 }), 4096);
  await close(server);
  return { ok: r.sent === r.serverSaw, ...r };
}

async function localAddress() {
  const server = net.createServer();
  const { port } = await listen(server, 0, '127.0.0.1');
  const r = await transfer(server, connectTo({ host: '127.0.0.1', port, localAddress: '127.0.0.1' }), 4096);
  await close(server);
  return { ok: r.sent === r.serverSaw, ...r };
}

async function listenHandle(bound) {
  let handle;
  if (bound) {
    // a bound, not yet listening handle, as cluster's SCHED_NONE path creates it
    handle = net._createServerHandle('127.0.0.1', 0, 4);
    if (typeof handle === 'number') throw new Error(`_createServerHandle failed: ${handle}`);
  } else {
    // an unbound handle: libuv's listen() creates the socket itself (AF_INET, 0.0.0.0:0)
    const tmp = net.createServer();
    await listen(tmp, 0, '127.0.0.1');
    const Ctor = tmp._handle.constructor;
    await close(tmp);
    handle = new Ctor(1 /* TCPConstants.SERVER */);
  }
  const server = net.createServer();
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(handle, resolve); });
  const port = server.address().port;
  const r = await transfer(server, connectTo({ host: '127.0.0.1', port }), 4096);
  await close(server);
  return { ok: r.sent === r.serverSaw, ...r };
}

async function workerThread() {
  const { Worker } = require('node:worker_threads');
  const code = `
    const { parentPort } = require('node:worker_threads');
    const net = require('node:net');
    const { probe, api } = require(${JSON.stringify(path.join(__dirname, 'lib.cjs'))});
    const server = net.createServer((s) => { const conn = probe('server', s); s.on('data', (d) => s.write(d)); s.on('end', () => s.end()); server.serverConn = conn; });
    server.listen(0, '127.0.0.1', () => {
      const c = net.connect(server.address().port, '127.0.0.1', () => {
        const client = probe('client', c);
        c.end('ping');
        let got = '';
        c.on('data', (d) => (got += d));
        c.on('close', () => { parentPort.postMessage({ got, conns: [client, server.serverConn], hook: api.hookStats() }); server.close(); });
      });
    });`;
  const msg = await new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
  return { ok: msg.got === 'ping', conns: msg.conns, workerHook: msg.hook };
}

async function untouched() {
  // unix sockets and fds passed in by the program must stay exactly as they are
  const { api } = require('./lib.cjs');
  const before = api.hookStats();
  const sock = path.join(require('node:os').tmpdir(), `smc-run-${process.pid}.sock`);
  const server = net.createServer((s) => s.pipe(s));
  await listen(server, sock);
  const got = await new Promise((resolve, reject) => {
    const c = net.connect(sock, () => c.end('unix'));
    let b = '';
    c.on('data', (d) => (b += d));
    c.on('close', () => resolve(b));
    c.on('error', reject);
  });
  await close(server);
  const after = api.hookStats();
  return { ok: got === 'unix', conns: [], before, after };
}

const SCENARIOS = {
  'net-v4': (n) => plainTransfer('127.0.0.1', '127.0.0.1', n),
  'net-v6': (n) => plainTransfer('::1', '::1', n),
  'net-dual': (n) => plainTransfer('127.0.0.1', undefined, n),
  'http-keepalive': () => httpKeepAlive(),
  https: () => httpsGet('::1'),
  tls: (n) => tlsTransfer(n),
  http2: () => http2Get(),
  fetch: () => fetchGet(),
  'auto-select-family': () => autoSelect(),
  'local-address': () => localAddress(),
  'listen-handle-bound': () => listenHandle(true),
  'listen-handle-unbound': () => listenHandle(false),
  'worker-thread': () => workerThread(),
  untouched: () => untouched(),
};

async function main() {
  const name = process.argv[2];
  const bytes = Number(process.argv[3] || 1 << 20);
  const fn = SCENARIOS[name];
  if (!fn) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(' ')}`);
  const result = await withTimeout(fn(bytes), Number(process.env.SCENARIO_TIMEOUT_MS || 60000), name);
  report({ scenario: name, ...result });
  if (!result.ok) process.exitCode = 1;
}

if (require.main === module) main().catch(fail);
module.exports = { SCENARIOS };
