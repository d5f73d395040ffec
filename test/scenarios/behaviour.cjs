'use strict';
// Socket behaviour on hooked sockets: addresses as on TCP, option read-back, and TCP_FASTOPEN forcing a
// fallback. node behaviour.cjs addresses|fastopen
const net = require('node:net');
const path = require('node:path');
const { api, probe, report, fail, withTimeout } = require('./lib.cjs');
const native = require(path.join(__dirname, '..', '..', 'dist', 'native.js'));

const SOL_SOCKET = 1, SO_KEEPALIVE = 9, IPPROTO_TCP = 6, TCP_FASTOPEN_CONNECT = 30, AF_SMC = 43;

async function pair() {
  let accepted;
  const server = net.createServer((s) => { accepted = s; s.on('data', (d) => s.write(d)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const c = await new Promise((r, j) => { const s = net.connect(server.address().port, '127.0.0.1', () => r(s)); s.on('error', j); });
  c.write('x');
  await new Promise((r) => c.once('data', r));
  return { server, c, s: accepted };
}

async function addresses() {
  const { server, c, s } = await pair();
  c.setNoDelay(true);
  c.setKeepAlive(true, 1000);
  const fd = c._handle.fd;
  const out = {
    clientLocal: [c.localAddress, c.localPort], serverRemote: [s.remoteAddress, s.remotePort],
    clientRemote: [c.remoteAddress, c.remotePort], serverLocal: [s.localAddress, s.localPort],
    family: c.remoteFamily, noDelay: api.getTcpNoDelay(c),
    keepAlive: native.addon().getSockOptInt(fd, SOL_SOCKET, SO_KEEPALIVE),
    isSmc: api.isSmcSocket(c),
    conns: [probe('client', c), probe('server', s)],
  };
  out.ok = out.clientLocal[0] === out.serverRemote[0] && out.clientLocal[1] === out.serverRemote[1] &&
    out.clientRemote[1] === server.address().port && out.noDelay === true && out.keepAlive === 1;
  c.destroy(); s.destroy(); server.close();
  report(out);
}

async function fastopen() {
  const server = net.createServer((s) => s.pipe(s));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  // the socket smc-run would make, with TCP_FASTOPEN_CONNECT set before connect (unsupported by SMC)
  const a = native.addon();
  const fd = a.createSocket(AF_SMC, 0);
  a.setSockOptInt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1);
  const c = new net.Socket({ fd, readable: true, writable: true });
  await new Promise((r, j) => { c.connect(server.address().port, '127.0.0.1', r); c.on('error', j); });
  c.write('hello');
  const echoed = await new Promise((r) => c.once('data', (d) => r(String(d))));
  const conn = probe('client', c);
  c.destroy(); server.close();
  report({ ok: echoed === 'hello', conns: [conn] });
}

const which = process.argv[2];
withTimeout(which === 'fastopen' ? fastopen() : addresses(), 60000, which).catch(fail);
