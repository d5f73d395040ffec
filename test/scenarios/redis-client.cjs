'use strict';
// A Node Redis client (ioredis) for the real-kernel tests of the LD_PRELOAD library: the server is
// redis-server under smc-run, this end the Node shim.
//   node redis-client.cjs HOST PORT HOLD_MS
// Sets a 256 KiB random value and reads it back, then runs a pipeline of 1,000 SET/GET pairs and checks
// every reply in order; prints {"ok":...,"value":{...},"pipeline":{...},"client":conn} with the
// connection's SMC mode from this end, then keeps the connection open HOLD_MS (sock_diag reads both ends
// meanwhile) and quits.
const crypto = require('node:crypto');
const Redis = require('ioredis');
const { probe, sha256 } = require('./lib.cjs');

const [host, portArg, holdArg] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

async function main() {
  const redis = new Redis({ host, port: Number(portArg), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect();
  const client = probe('client', redis.stream);
  const value = crypto.randomBytes(256 << 10);
  await redis.set('value', value);
  const back = await redis.getBuffer('value');
  const pipe = redis.pipeline();
  const N = 1000;
  for (let i = 0; i < N; i++) pipe.set(`k${i}`, `v${i}-${'x'.repeat(i % 97)}`).get(`k${i}`);
  const replies = await pipe.exec();
  let inOrder = replies.length === 2 * N;
  for (let i = 0; inOrder && i < N; i++) {
    const [setErr, setRes] = replies[2 * i];
    const [getErr, getRes] = replies[2 * i + 1];
    inOrder = !setErr && !getErr && setRes === 'OK' && getRes === `v${i}-${'x'.repeat(i % 97)}`;
  }
  const valueOk = back !== null && sha256(back) === sha256(value);
  out({ ok: valueOk && inOrder, value: { bytes: back ? back.length : 0, intact: valueOk }, pipeline: { commands: 2 * N, inOrder }, client });
  await new Promise((r) => setTimeout(r, Number(holdArg || 0)));
  await redis.quit();
}

main().catch((e) => {
  out({ ok: false, error: String(e && e.message) });
  process.exitCode = 1;
});
