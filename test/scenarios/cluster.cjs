'use strict';
// cluster: node cluster.cjs rr|none. The primary forks two HTTP workers (round-robin: the primary
// accepts and hands fds over IPC; SCHED_NONE: workers accept on a handle the primary created), then
// acts as the client until both workers have served. Workers report their ends' SMC modes over IPC.
const cluster = require('node:cluster');
const http = require('node:http');
const { probe, report, fail, withTimeout } = require('./lib.cjs');

const policy = process.argv[2] === 'none' ? cluster.SCHED_NONE : cluster.SCHED_RR;
cluster.schedulingPolicy = policy;

if (cluster.isPrimary) {
  main().catch(fail);
} else {
  const server = http.createServer((req, res) => {
    process.send({ conn: probe('server', req.socket), worker: cluster.worker.id });
    res.setHeader('connection', 'close');
    res.end(`worker ${cluster.worker.id}`);
  });
  server.listen(0, '127.0.0.1');
  process.on('message', (m) => { if (m === 'stop') server.close(() => process.exit(0)); });
}

async function main() {
  const workers = [cluster.fork(), cluster.fork()];
  const conns = [];
  const served = new Set();
  for (const w of workers) w.on('message', (m) => { if (m.conn) { conns.push(m.conn); served.add(m.worker); } });
  const port = await withTimeout(new Promise((resolve) => {
    let n = 0;
    let p;
    cluster.on('listening', (_w, addr) => { p = addr.port; if (++n === workers.length) resolve(p); });
  }), 60000, 'workers listening');
  const bodies = [];
  for (let i = 0; i < 40 && served.size < 2; i++) {
    bodies.push(await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
        conns.push(probe('client', res.socket));
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
      }).on('error', reject);
    }));
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 200)); // last IPC reports
  for (const w of workers) w.send('stop');
  await Promise.all(workers.map((w) => new Promise((r) => w.once('exit', r))));
  const ok = served.size === 2 && bodies.every((b) => /^worker \d$/.test(b));
  report({ role: 'primary', policy: policy === cluster.SCHED_NONE ? 'none' : 'rr', ok, workersServed: served.size, conns });
  if (!ok) process.exitCode = 1;
}
