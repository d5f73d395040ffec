'use strict';
// One client connection under the launcher's --include/--exclude, for the policy tests:
//   node policy.cjs '{"listen":"127.0.0.1","connect":{"host":"127.0.0.2","localAddress":"0.0.0.0"}}'
// An echo server in this process listens on `listen` (port 0); the client connects with `connect` (the
// server's port added; "localPort":"free" picks a free port, "dualLookup" resolves to ::1 and 127.0.0.1), sets TCP_NODELAY before connecting, sends
// 64 KiB and checks the echo. Reports the client's SMC state (isSmcSocket, getSmcInfo's mode), its fd,
// local address and port, TCP_NODELAY as the kernel reports it, the server end's mode and the hook's counters.
const net = require('node:net');
const crypto = require('node:crypto');
const { api, probe, sha256, report, fail, withTimeout } = require('./lib.cjs');

async function freePort(host) {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, host, r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

async function main() {
  const spec = JSON.parse(process.argv[2]);
  let serverConn = null;
  const server = net.createServer((s) => {
    serverConn ??= probe('server', s);
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise((r, j) => { server.once('error', j); server.listen(0, spec.listen, r); });
  const opts = { ...spec.connect, port: server.address().port };
  if (opts.localPort === 'free') opts.localPort = await freePort(spec.connect.localAddress ?? (net.isIPv6(spec.connect.host) ? '::' : '0.0.0.0'));
  if (opts.dualLookup) {
    delete opts.dualLookup;
    opts.lookup = (host, o, cb) => cb(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]);
  }
  const payload = crypto.randomBytes(64 * 1024);
  const client = await new Promise((resolve, reject) => {
    const c = net.connect(opts, () => resolve(c));
    c.setNoDelay(true); // before connect: libuv applies it to whatever socket the handle gets
    c.once('error', reject);
  });
  const seen = {
    isSmc: api.isSmcSocket(client),
    conn: probe('client', client),
    fd: client._handle ? client._handle.fd : null,
    localAddress: client.localAddress,
    localPort: client.localPort,
    requestedLocalPort: opts.localPort,
    noDelay: api.getTcpNoDelay(client),
  };
  const chunks = [];
  const echoed = new Promise((resolve, reject) => {
    client.on('data', (d) => chunks.push(d));
    client.on('end', resolve);
    client.on('error', reject);
  });
  client.end(payload);
  await echoed;
  server.close();
  const got = Buffer.concat(chunks);
  return { ok: got.length === payload.length && sha256(got) === sha256(payload), seen, server: serverConn };
}

withTimeout(main(), 20_000, 'policy').then((r) => report(r), fail);
