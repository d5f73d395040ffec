'use strict';
// TCP_CORK / TCP_NODELAY passthrough: node cork.cjs cork|nodelay|batch
//   cork:    a corked 10-byte write must not reach the peer until uncorked
//   nodelay: the same, released by setting TCP_NODELAY after the write
//   batch:   withTcpCork around 64 one-byte writes; all arrive, in order
const net = require('node:net');
const { api, probe, report, fail, withTimeout } = require('./lib.cjs');

const HOLD_MS = Number(process.env.CORK_HOLD_MS || 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const mode = process.argv[2] || 'cork';
  let received = Buffer.alloc(0);
  let serverSock;
  const server = net.createServer((s) => { serverSock = s; s.on('data', (d) => { received = Buffer.concat([received, d]); }); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const client = net.connect(server.address().port, '127.0.0.1');
  await new Promise((r, j) => { client.once('connect', r); client.once('error', j); });
  const conns = [probe('client', client)];
  const result = { scenario: `cork-${mode}` };
  if (mode === 'batch') {
    const payload = Buffer.from(Array.from({ length: 64 }, (_, i) => 65 + (i % 26)));
    await api.withTcpCork(client, () => { for (let i = 0; i < 64; i++) client.write(payload.subarray(i, i + 1)); });
    result.corkAfter = api.getTcpCork(client);
    const t0 = Date.now();
    while (received.length < 64 && Date.now() - t0 < 30000) await sleep(10);
    result.ok = received.equals(payload) && result.corkAfter === false;
  } else {
    api.setTcpCork(client, true);
    result.corkReadBack = api.getTcpCork(client);
    client.write('0123456789');
    await sleep(HOLD_MS);
    result.beforeRelease = received.length;
    const t0 = Date.now();
    if (mode === 'nodelay') client.setNoDelay(true);
    else api.setTcpCork(client, false);
    result.noDelayReadBack = api.getTcpNoDelay(client);
    while (received.length < 10 && Date.now() - t0 < 30000) await sleep(5);
    result.releaseMs = Date.now() - t0;
    result.afterRelease = received.toString();
    result.ok = result.corkReadBack === true && result.afterRelease === '0123456789';
  }
  if (serverSock) conns.push(probe('server', serverSock));
  client.destroy();
  server.close();
  report({ ...result, conns });
}

withTimeout(main(), 60000, 'cork').catch(fail);
