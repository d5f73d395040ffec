'use strict';
// A small echo server and client for real-kernel tests that need two processes.
//   node echo.cjs server HOST          -> prints {"listening":PORT}; per connection {"server":conn}
//   node echo.cjs late-server HOST     -> as server, once it gets SIGUSR2
//   node echo.cjs client HOST PORT N   -> sends N random bytes, checks the echo, prints {"client":conn,"ok":...}
//   node echo.cjs tls-server HOST | http-server HOST  -> as server, over TLS / HTTP
//   node echo.cjs tls-client HOST PORT N | http-get HOST PORT  -> as client
//   node echo.cjs hold HOST PORT MS    -> connects, then waits for data with a MS socket timeout
//   node echo.cjs burst-server HOST BACKLOG -> plain echo (no per-connection probe) for connection bursts
const net = require('node:net');
const crypto = require('node:crypto');
const { probe, sha256, withTimeout } = require('./lib.cjs');

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const [role, host, portArg, bytesArg] = process.argv.slice(2);

const fs = require('node:fs');
const path = require('node:path');
const TLS_DIR = path.join(__dirname, '..', 'fixtures', 'tls');
const tlsOpts = () => ({ key: fs.readFileSync(path.join(TLS_DIR, 'key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'cert.pem')) });

if (role === 'tls-server') {
  const server = require('node:tls').createServer(tlsOpts(), (s) => {
    const conn = probe('server', s);
    s.on('error', () => {});
    s.pipe(s);
    s.on('close', () => out({ server: conn }));
  });
  server.listen(Number(portArg || 0), host, () => out({ listening: server.address().port }));
} else if (role === 'http-server') {
  const server = require('node:http').createServer((req, res) => {
    out({ server: probe('server', req.socket) });
    res.end('hello over http');
  });
  server.listen(Number(portArg || 0), host, () => out({ listening: server.address().port }));
} else if (role === 'http-get') {
  require('node:http').get({ host, port: Number(portArg), agent: false }, (res) => {
    const conn = probe('client', res.socket);
    let b = '';
    res.on('data', (d) => (b += d));
    res.on('end', () => out({ client: conn, ok: b === 'hello over http', bytes: b.length }));
  }).on('error', (e) => { out({ client: null, ok: false, error: e.message }); process.exitCode = 1; });
} else if (role === 'tls-client') {
  const n = Number(bytesArg || 65536);
  const payload = crypto.randomBytes(n);
  const chunks = [];
  const c = require('node:tls').connect({ host, port: Number(portArg), ca: tlsOpts().cert, servername: 'localhost' }, () => c.write(payload));
  let conn;
  c.on('secureConnect', () => { conn = probe('client', c); });
  let got = 0;
  c.on('data', (d) => { chunks.push(d); got += d.length; if (got >= n) c.end(); });
  c.on('close', () => { const b = Buffer.concat(chunks); out({ client: conn || null, ok: b.length === n && sha256(b) === sha256(payload), bytes: b.length }); });
  c.on('error', (e) => { out({ client: conn || null, ok: false, error: e.message }); process.exitCode = 1; });
} else if (role === 'stream') {
  // writes until the connection breaks; reports how it ended
  const c = net.connect(Number(portArg), host);
  const chunk = Buffer.alloc(64 << 10, 0x42);
  const t0 = Date.now();
  let sent = 0;
  c.on('connect', () => {
    out({ connected: probe('client', c) });
    const pump = () => { while (c.writable && c.write(chunk)) sent += chunk.length; if (c.writable) c.once('drain', () => { sent += chunk.length; pump(); }); };
    pump();
  });
  c.on('data', () => {});
  c.on('error', (e) => out({ error: e.code || e.message, sent, afterMs: Date.now() - t0 }));
  c.on('close', () => out({ closed: true, sent, afterMs: Date.now() - t0 }));
} else if (role === 'hold') {
  const c = net.connect(Number(portArg), host, () => { out({ connected: probe('client', c) }); c.write('x'); });
  const t0 = Date.now();
  c.setTimeout(Number(bytesArg || 20000), () => c.destroy(new Error('socket timeout')));
  c.on('data', () => {});
  c.on('error', (e) => out({ error: e.code || e.message, afterMs: Date.now() - t0 }));
  c.on('close', () => out({ closed: true, afterMs: Date.now() - t0 }));
} else if (role === 'burst-server') {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  server.listen(0, host, Number(portArg || 511), () => out({ listening: server.address().port }));
} else if (role === 'server' || role === 'late-server') {
  const server = net.createServer((s) => {
    const conn = probe('server', s);
    s.on('error', () => {});
    s.pipe(s);
    s.on('close', () => out({ server: conn }));
  });
  const listen = () => server.listen(Number(portArg || 0), host, () => out({ listening: server.address().port }));
  // late-server: a program already running when its namespace is switched, making its socket afterwards
  if (role === 'late-server') {
    // a signal listener does not keep Node's event loop alive: a timer does, until the signal
    const wait = setInterval(() => {}, 1 << 30);
    process.once('SIGUSR2', () => { clearInterval(wait); listen(); });
  } else listen();
  process.on('SIGTERM', () => process.exit(0));
} else if (role === 'client') {
  const n = Number(bytesArg || 65536);
  const payload = crypto.randomBytes(n);
  const c = net.connect(Number(portArg), host);
  const chunks = [];
  let conn;
  const done = new Promise((resolve, reject) => {
    c.on('connect', () => {
      conn = probe('client', c);
      // write, then half-close once everything is echoed back
      c.write(payload);
    });
    let got = 0;
    c.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= n) c.end();
    });
    c.on('close', resolve);
    c.on('error', reject);
  });
  withTimeout(done, Number(process.env.SCENARIO_TIMEOUT_MS || 120000), 'echo client')
    .then(() => {
      const back = Buffer.concat(chunks);
      out({ client: conn, ok: back.length === n && sha256(back) === sha256(payload), bytes: back.length });
    })
    .catch((e) => { out({ client: conn || null, ok: false, error: String(e.message) }); process.exitCode = 1; });
} else {
  process.stderr.write('usage: echo.cjs server HOST [PORT] | client HOST PORT BYTES\n');
  process.exitCode = 2;
}
