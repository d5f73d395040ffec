'use strict';
// SMC buffer sizes of one connection (both ends) as sock_diag reports them, after moving 1 MiB.
const net = require('node:net');
const crypto = require('node:crypto');
const { api, report, fail, withTimeout } = require('./lib.cjs');

async function main() {
  let serverInfo;
  const server = net.createServer((s) => { serverInfo = api.getSmcInfo(s); s.pipe(s); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const c = net.connect(server.address().port, '127.0.0.1');
  await new Promise((r, j) => { c.once('connect', r); c.once('error', j); });
  const clientInfo = api.getSmcInfo(c);
  const payload = crypto.randomBytes(1 << 20);
  let got = 0;
  await new Promise((resolve) => { c.on('data', (d) => { got += d.length; if (got >= payload.length) resolve(); }); c.write(payload); });
  c.destroy();
  server.close();
  const infos = [clientInfo, serverInfo];
  report({ ok: got === payload.length, conns: infos.map((i, n) => ({ side: n ? 'server' : 'client', mode: i.mode, fallback: i.fallback && i.fallback.name })), buffers: infos.map((i) => i.buffers || { rmbe: -1, sndbuf: -1 }) });
}
withTimeout(main(), 60000, 'sizes').catch(fail);
