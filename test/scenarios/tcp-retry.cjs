'use strict';
// The TCP retry's machinery on a host (test mode: SMC_RUN_SOCKET_FAMILY=inet with the test-only knob
// SMC_RUN_TEST_CONNECT_FAULT, which makes the first completion of each hooked connect a retryable failure).
// Usage: tcp-retry.cjs CASE; prints one result line with what the program saw.
const net = require('node:net');
const crypto = require('node:crypto');
const { api, sha256, report, fail, withTimeout } = require('./lib.cjs');

function echoServer(host = '127.0.0.1') {
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    s.on('error', () => {});
    s.pipe(s);
  });
  return new Promise((res) => server.listen(0, host, () => res({ server, port: server.address().port, accepted: () => accepted })));
}

async function closedPort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** Connects, sends data, reads the echo; resolves with what the program saw (events and data). */
function exchange(opts, data, setup) {
  return new Promise((resolve) => {
    const seen = { errors: [], connects: 0, closes: 0, echo: null, fd: null, noDelay: null };
    const c = net.connect(opts);
    if (setup) setup(c);
    const chunks = [];
    c.on('connect', () => {
      seen.connects++;
      seen.fd = c._handle ? c._handle.fd : null;
      seen.localAddress = c.localAddress;
      seen.isSmc = api.isSmcSocket(c);
      try { seen.noDelay = api.getTcpNoDelay(c); } catch (e) { seen.noDelay = String(e.code); }
      c.end(data);
    });
    c.on('data', (d) => chunks.push(d));
    c.on('error', (e) => seen.errors.push(e.code || String(e)));
    c.on('close', () => {
      seen.closes++;
      if (chunks.length) seen.echo = { length: Buffer.concat(chunks).length, hash: sha256(Buffer.concat(chunks)) };
      // give a stray second completion a chance to show up
      setTimeout(() => resolve({ seen, socket: c }), 50);
    });
  });
}

const cases = {
  async refused() {
    const port = await closedPort();
    const { seen } = await exchange({ port, host: '127.0.0.1' }, 'x');
    return { seen };
  },
  async live() {
    const { server, port, accepted } = await echoServer();
    const data = crypto.randomBytes(256 * 1024);
    const { seen } = await exchange({ port, host: '127.0.0.1' }, data, (c) => c.setNoDelay(true));
    server.close();
    return { seen, sent: { length: data.length, hash: sha256(data) }, accepted: accepted() };
  },
  async localAddress() {
    const { server, port } = await echoServer();
    const { seen } = await exchange({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, 'hello');
    server.close();
    return { seen };
  },
  async localPort() {
    // a fixed local port: the failed connection still holds the 4-tuple, so a retry cannot start
    const { server, port, accepted } = await echoServer();
    const localPort = await closedPort();
    const { seen } = await exchange({ port, host: '127.0.0.1', localAddress: '127.0.0.1', localPort }, 'hello');
    server.close();
    return { seen, accepted: accepted() };
  },
  async destroyed() {
    const { server, port, accepted } = await echoServer();
    const { seen } = await exchange({ port, host: '127.0.0.1' }, 'x', (c) => c.destroy());
    server.close();
    return { seen, accepted: accepted() };
  },
  async aborted() {
    const { server, port } = await echoServer();
    const ac = new AbortController();
    const { seen } = await exchange({ port, host: '127.0.0.1', signal: ac.signal }, 'x', () => ac.abort());
    server.close();
    return { seen };
  },
  async reconnect() {
    const refusedPort = await closedPort();
    const { server, port } = await echoServer();
    const seen = { errors: [], connects: 0, echo: null };
    await new Promise((resolve) => {
      const c = net.connect(refusedPort, '127.0.0.1');
      const chunks = [];
      c.once('error', (e) => {
        seen.errors.push(e.code);
        // net.Socket#connect again after the error: a new handle, hooked (and retried) again
        c.connect(port, '127.0.0.1', () => { seen.connects++; c.end('again'); });
      });
      // (Node emits no 'end' on a socket re-connected after an error: wait for the whole echo instead)
      c.on('data', (d) => {
        chunks.push(d);
        seen.echo = Buffer.concat(chunks).toString();
        if (seen.echo.length >= 5) { c.destroy(); setTimeout(resolve, 50); }
      });
    });
    server.close();
    return { seen };
  },
  async happyEyeballs() {
    // listening on 127.0.0.1 only: ::1 is refused, then 127.0.0.1 answers
    const { server, port } = await echoServer('127.0.0.1');
    const { seen, socket } = await exchange({ port, host: 'localhost', autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 5000 }, 'he');
    server.close();
    return { seen, attempted: socket.autoSelectFamilyAttemptedAddresses };
  },
};

const name = process.argv[2];
if (!cases[name]) fail(new Error(`unknown case ${name}`));
withTimeout(cases[name](), 20_000, name).then((r) => report({ ok: true, case: name, ...r }), fail);
