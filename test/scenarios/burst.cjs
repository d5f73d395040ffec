'use strict';
// A connection burst: one process opens COUNT connections at once to its own echo server; each sends SIZE
// bytes (distinct per connection), the server hashes what it got and echoes it, the client checks the echo
// (sha256 both ways). Reports completed/failed connections, error codes, wall time, the hook's TCP
// retries and the namespace's SMC counter deltas (client handshake errors, SMC-D client connections,
// client fallbacks). With --connect HOST:PORT the clients go to that echo server instead (another host;
// the echo's hash still checks both directions). Usage:
// burst.cjs --count N [--size BYTES] [--backlog N] [--connect HOST:PORT] [--no-stats]
const net = require('node:net');
const crypto = require('node:crypto');
const { api, sha256, report, fail } = require('./lib.cjs');

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const COUNT = Number(arg('count', '1000'));
const SIZE = Number(arg('size', String(64 * 1024)));
const BACKLOG = Number(arg('backlog', '511'));
const STATS = !process.argv.includes('--no-stats');
const REMOTE = arg('connect', undefined);

function systemCounters() {
  if (!STATS) return null;
  const s = api.getSmcSystemStats();
  const c = s.smcd.connections;
  const r = s.smcr.connections;
  return {
    hsErrClient: s.handshakeErrors.client,
    hsErrServer: s.handshakeErrors.server,
    smcdClient: c.clientV1 + c.clientV2,
    smcrClient: r.clientV1 + r.clientV2,
    fallbackClient: s.fallbacks.client.total,
    fallbackServer: s.fallbacks.server.total,
  };
}

async function main() {
  const pool = crypto.randomBytes(SIZE + COUNT * 61);
  const received = new Map(); // hash -> count, as the server saw it
  const server = net.createServer((s) => {
    const h = crypto.createHash('sha256');
    s.on('data', (d) => { h.update(d); s.write(d); });
    s.on('end', () => {
      const k = h.digest('hex');
      received.set(k, (received.get(k) || 0) + 1);
      s.end();
    });
    s.on('error', () => {});
  });
  let host = '127.0.0.1';
  let port;
  if (REMOTE) {
    const i = REMOTE.lastIndexOf(':');
    host = REMOTE.slice(0, i);
    port = Number(REMOTE.slice(i + 1));
  } else {
    await new Promise((res, rej) => { server.once('error', rej); server.listen(0, host, BACKLOG, res); });
    port = server.address().port;
  }
  const before = systemCounters();
  const t0 = process.hrtime.bigint();
  const errors = {};
  // the same errors, of connections that had connected first (an error of the data phase, not of connect)
  const errorsAfterConnect = {};
  let completed = 0;
  let corrupt = 0;
  const sent = [];
  const one = (i) => new Promise((resolve) => {
    const data = pool.subarray(i * 61, i * 61 + SIZE);
    const want = sha256(data);
    sent.push(want);
    const chunks = [];
    const c = net.connect(port, host);
    c.on('data', (d) => chunks.push(d));
    c.on('end', () => {
      const got = Buffer.concat(chunks);
      if (got.length === SIZE && sha256(got) === want) completed++;
      else corrupt++;
      resolve();
    });
    let connected = false;
    c.once('connect', () => { connected = true; });
    c.on('error', (e) => {
      const code = e.code || String(e);
      errors[code] = (errors[code] || 0) + 1;
      if (connected) errorsAfterConnect[code] = (errorsAfterConnect[code] || 0) + 1;
      resolve();
    });
    c.end(data);
  });
  await Promise.all(Array.from({ length: COUNT }, (_, i) => one(i)));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = systemCounters();
  if (!REMOTE) server.close();
  let serverMatched = REMOTE ? null : 0;
  for (const h of sent) {
    const n = received.get(h) || 0;
    if (n > 0 && serverMatched !== null) { serverMatched++; received.set(h, n - 1); }
  }
  const delta = before && after ? Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]])) : null;
  const hook = api.hookStats();
  const failed = Object.values(errors).reduce((a, b) => a + b, 0);
  report({
    ok: true,
    count: COUNT, size: SIZE, backlog: BACKLOG,
    completed, failed, corrupt, serverMatched, errors, errorsAfterConnect, ms: Math.round(ms),
    tcpRetries: hook ? hook.tcpRetries : null,
    delta,
  });
}

main().catch(fail);
