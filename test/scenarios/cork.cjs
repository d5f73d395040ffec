'use strict';
// TCP_CORK / TCP_NODELAY passthrough: node cork.cjs MODE [HOST PORT]
//   cork:    a corked 10-byte write must not reach the peer until uncorked
//   nodelay: the same, released by setting TCP_NODELAY after the write
//   batch:   withTcpCork around 64 one-byte writes; all arrive, in order
//   writes:  the same 64 one-byte writes without withTcpCork (the baseline batch is compared with)
// Without HOST/PORT the scenario runs its own server on 127.0.0.1 and counts what it receives (SMC-D
// in one guest). With HOST PORT it talks to a remote echo server (the SMC-R peer) and counts the echo:
// nothing echoed means nothing reached the peer.
const net = require('node:net');
const { api, probe, report, fail, withTimeout } = require('./lib.cjs');

const HOLD_MS = Number(process.env.CORK_HOLD_MS || 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [mode = 'cork', host, portArg] = process.argv.slice(2);
  let received = Buffer.alloc(0);
  let reads = 0;
  const onData = (d) => { reads++; received = Buffer.concat([received, d]); };
  let server;
  let serverSock;
  let client;
  if (host) {
    client = net.connect(Number(portArg), host);
    client.on('data', onData);
  } else {
    server = net.createServer((s) => { serverSock = s; s.on('data', onData); });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    client = net.connect(server.address().port, '127.0.0.1');
  }
  await new Promise((r, j) => { client.once('connect', r); client.once('error', j); });
  const conns = [probe('client', client)];
  const result = { scenario: `cork-${mode}` };
  if (mode === 'batch' || mode === 'writes') {
    const payload = Buffer.from(Array.from({ length: 64 }, (_, i) => 65 + (i % 26)));
    const writeAll = () => { for (let i = 0; i < 64; i++) client.write(payload.subarray(i, i + 1)); };
    if (mode === 'batch') await api.withTcpCork(client, writeAll);
    else writeAll();
    result.corkAfter = api.getTcpCork(client);
    const t0 = Date.now();
    while (received.length < 64 && Date.now() - t0 < 60000) await sleep(10);
    result.reads = reads;
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
    while (received.length < 10 && Date.now() - t0 < 60000) await sleep(5);
    result.releaseMs = Date.now() - t0;
    result.afterRelease = received.toString();
    result.ok = result.corkReadBack === true && result.afterRelease === '0123456789';
  }
  if (serverSock) conns.push(probe('server', serverSock));
  client.destroy();
  if (server) server.close();
  report({ ...result, conns });
}

withTimeout(main(), 120000, 'cork').catch(fail);
