'use strict';
// The Node ends of the real-workload benchmark (bench/smcd/workloads.cjs runs them in the SMC-D guest,
// plainly for TCP and under `smc-run` for SMC-D):
//
//   node workload-node.cjs server
//     serves node:http, fastify, gRPC (@grpc/grpc-js: one unary and one server-streaming method) and a
//     bulk writer, each on its own port; prints {"pid":N,"ports":{"http":P,"fastify":P,"grpc":P,"bulk":P}}
//   node workload-node.cjs client --workload http|fastify|grpc|redis|bulk --port P [--dur S] [--warm S]
//     runs the workload's phases (a warm-up window, then a measured one, each), then lists the sockets
//     on port P through sock_diag while its connections are still open, so the driver can reject a
//     phase whose ends are not what the mode says; prints one JSON line
//     { phases: [{ name, ops, opsPerSec, p50us, p99us, mbPerSec?, cpuUserUs, cpuSysUs }], ends: { server, client } }
//     after a {"mark":"start"} and a {"mark":"end"} line around each measured window
//
// Windows are timed with performance.now(): in the virtual-time guest that clock advances with executed
// instructions. cpuUserUs/cpuSysUs are this process's CPU time over the measured window (process.cpuUsage):
// the per-operation split of where a client's time goes, user space (Node, the library) or the kernel.
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const api = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
const { percentile } = require(path.join(__dirname, '..', 'lib', 'stats.cjs'));

const HOST = '127.0.0.1';
const BODY = Buffer.alloc(1024, 0x61); // HTTP responses and streamed gRPC messages
const SMALL = Buffer.alloc(64, 0x62); // gRPC unary request and reply, Redis values
const CONNS = 4; // concurrent keep-alive connections (HTTP) / calls in flight (gRPC unary)
const STREAM_BATCH = 256; // messages per server-streaming call
const BULK_SIZES = [65536, 1 << 20];
const REDIS_PIPELINE = 100;

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const now = () => performance.now();
// window marks on stdout: the driver reads the server's CPU time at each
const mark = (m) => console.log(JSON.stringify({ mark: m }));

// gRPC without a .proto: methods whose messages are raw bytes
const raw = { serialize: (b) => b, deserialize: (b) => b };
const GRPC_SERVICE = {
  unary: { path: '/bench.Bench/Unary', requestStream: false, responseStream: false, requestSerialize: raw.serialize, requestDeserialize: raw.deserialize, responseSerialize: raw.serialize, responseDeserialize: raw.deserialize },
  stream: { path: '/bench.Bench/Stream', requestStream: false, responseStream: true, requestSerialize: raw.serialize, requestDeserialize: raw.deserialize, responseSerialize: raw.serialize, responseDeserialize: raw.deserialize },
};

async function server() {
  const listen = (srv) => new Promise((resolve) => srv.listen(0, HOST, () => resolve(srv.address().port)));
  const httpServer = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BODY.length }); res.end(BODY); }); });
  const fastify = require('fastify')({ logger: false });
  fastify.get('/', async (_req, reply) => { reply.header('content-type', 'application/octet-stream'); return BODY; });
  await fastify.listen({ port: 0, host: HOST });
  const grpc = require('@grpc/grpc-js');
  const g = new grpc.Server();
  g.addService(GRPC_SERVICE, {
    unary: (call, cb) => cb(null, call.request),
    stream: (call) => {
      let sent = 0;
      const more = () => { while (sent < STREAM_BATCH) { sent++; if (!call.write(BODY)) return call.once('drain', more); } call.end(); };
      more();
    },
  });
  const grpcPort = await new Promise((resolve, reject) => g.bindAsync(`${HOST}:0`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  // bulk: the client's first 4 bytes say the message size; the server writes messages of that size until
  // the client closes, the textbook way (write until false, then wait for 'drain')
  const bulk = net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', (d) => {
      const msg = Buffer.alloc(d.readUInt32BE(0), 0x63);
      const pump = () => { while (!s.destroyed) if (!s.write(msg)) return s.once('drain', pump); };
      pump();
    });
  });
  const ports = { http: await listen(httpServer), fastify: fastify.server.address().port, grpc: grpcPort, bulk: await listen(bulk) };
  console.log(JSON.stringify({ pid: process.pid, ports }));
}

/** Runs op() in `loops` concurrent loops for warm then dur seconds; per-op latency over the measured window. */
async function timed(name, loops, op, warmS, durS) {
  let measuring = false;
  let stop = false;
  const lat = [];
  let ops = 0;
  const loop = async () => {
    while (!stop) {
      const t0 = now();
      const n = await op();
      if (measuring && !stop) { lat.push((now() - t0) * 1000); ops += n; }
    }
  };
  const running = Array.from({ length: loops }, loop);
  await new Promise((r) => setTimeout(r, warmS * 1000));
  measuring = true;
  mark('start');
  const c0 = process.cpuUsage();
  const t0 = now();
  await new Promise((r) => setTimeout(r, durS * 1000));
  stop = true;
  const secs = (now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  mark('end');
  await Promise.all(running);
  return { name, ops, opsPerSec: ops / secs, p50us: percentile(lat, 50), p99us: percentile(lat, 99), cpuUserUs: cpu.user / ops, cpuSysUs: cpu.system / ops };
}

/** What sock_diag lists on the server's port now: the modes of both ends (plain TCP sockets are not listed). */
function ends(port) {
  let rows;
  try { rows = api.listSmcSockets().filter((s) => !s.listening); } catch (e) { return { server: [], client: [], error: `${e.code || ''} ${e.message}`.trim(), noSmc: e instanceof api.NoSmcError || e.code === 'ENOENT' }; }
  const mode = (s) => (s.fallback ? `fallback ${s.fallback.name}` : s.mode);
  return { server: rows.filter((s) => s.local.port === port).map(mode), client: rows.filter((s) => s.remote.port === port).map(mode) };
}

const workloads = {
  async http(port, warm, dur) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNS });
    const get = () => new Promise((resolve, reject) => {
      http.get({ host: HOST, port, path: '/', agent }, (res) => { res.on('data', () => {}); res.on('end', () => resolve(1)); res.on('error', reject); }).on('error', reject);
    });
    const phases = [await timed('keep-alive GET, 1 KiB', CONNS, get, warm, dur)];
    const seen = ends(port);
    agent.destroy();
    return { phases, ends: seen };
  },
  fastify(port, warm, dur) { return workloads.http(port, warm, dur); },
  async grpc(port, warm, dur) {
    const grpc = require('@grpc/grpc-js');
    const Client = grpc.makeGenericClientConstructor(GRPC_SERVICE, 'Bench');
    const client = new Client(`${HOST}:${port}`, grpc.credentials.createInsecure());
    const unary = () => new Promise((resolve, reject) => client.unary(SMALL, (e) => (e ? reject(e) : resolve(1))));
    const stream = () => new Promise((resolve, reject) => {
      let n = 0;
      const call = client.stream(SMALL);
      call.on('data', () => { n++; });
      call.on('end', () => resolve(n));
      call.on('error', reject);
    });
    const phases = [await timed(`unary, 64 B, ${CONNS} in flight`, CONNS, unary, warm, dur), await timed(`server streaming, ${STREAM_BATCH} x 1 KiB per call`, 1, stream, warm, dur)];
    const seen = ends(port);
    client.close();
    return { phases, ends: seen };
  },
  async redis(port, warm, dur) {
    const Redis = require('ioredis');
    const r = new Redis({ host: HOST, port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    await r.connect();
    await r.set('k', SMALL);
    const pipeline = async () => { const p = r.pipeline(); for (let i = 0; i < REDIS_PIPELINE; i++) p.set(`p${i}`, SMALL); await p.exec(); return REDIS_PIPELINE; };
    const phases = [
      await timed('GET 64 B', 1, async () => { await r.getBuffer('k'); return 1; }, warm, dur),
      await timed('SET 64 B', 1, async () => { await r.set('k', SMALL); return 1; }, warm, dur),
      await timed(`SET pipeline of ${REDIS_PIPELINE}`, 1, pipeline, warm, dur),
    ];
    const seen = ends(port);
    r.disconnect();
    return { phases, ends: seen };
  },
  async bulk(port, warm, dur) {
    const phases = [];
    const seen = { server: [], client: [] };
    for (const size of BULK_SIZES) {
      const s = net.connect(port, HOST);
      await new Promise((resolve, reject) => { s.once('connect', resolve); s.once('error', reject); });
      const h = Buffer.alloc(4);
      h.writeUInt32BE(size, 0);
      s.write(h);
      let bytes = 0;
      s.on('data', (d) => { bytes += d.length; });
      await new Promise((r) => setTimeout(r, warm * 1000));
      const b0 = bytes;
      mark('start');
      const c0 = process.cpuUsage();
      const t0 = now();
      await new Promise((r) => setTimeout(r, dur * 1000));
      const secs = (now() - t0) / 1000;
      const cpu = process.cpuUsage(c0);
      mark('end');
      const mib = (bytes - b0) / (1 << 20);
      const e = ends(port);
      seen.server.push(...e.server);
      seen.client.push(...e.client);
      if (e.error) Object.assign(seen, { error: e.error, noSmc: e.noSmc });
      s.destroy();
      phases.push({ name: `bulk, ${size >> 10} KiB writes`, ops: mib, opsPerSec: mib / secs, mbPerSec: (bytes - b0) / 1e6 / secs, p50us: null, p99us: null, cpuUserUs: cpu.user / mib, cpuSysUs: cpu.system / mib });
    }
    return { phases, ends: seen };
  },
};

async function client() {
  const name = arg('workload');
  const w = workloads[name];
  if (!w) throw new Error(`--workload ${name}: one of ${Object.keys(workloads).join(', ')}`);
  const out = await w(Number(arg('port')), Number(arg('warm', '0.5')), Number(arg('dur', '2')));
  console.log(JSON.stringify(out));
}

const role = process.argv[2];
(role === 'server' ? server() : role === 'client' ? client() : Promise.reject(new Error('usage: workload-node.cjs server | client --workload W --port P')))
  .catch((e) => { console.error(e); process.exit(1); });
