'use strict';
// Sends BYTES from a client to a server on loopback in 64 KiB writes (honouring backpressure); prints ms.
const net = require('node:net');
const total = Number(process.argv[2] || 256 << 20);
const host = process.argv[3] || '127.0.0.1';
const chunk = Buffer.alloc(64 << 10, 0x5a);
const server = net.createServer((s) => {
  let got = 0;
  s.on('data', (d) => { got += d.length; if (got >= total) { const ms = Number(process.hrtime.bigint() - t0) / 1e6; const cu = process.cpuUsage(c0); process.stdout.write(JSON.stringify({ ms, bytes: got, cpuMs: (cu.user + cu.system) / 1000 }) + '\n'); s.destroy(); server.close(); } });
});
let t0;
let c0;
server.listen(0, host, () => {
  const c = net.connect(server.address().port, host, () => {
    t0 = process.hrtime.bigint();
    c0 = process.cpuUsage();
    let sent = 0;
    const pump = () => { while (sent < total) { sent += chunk.length; if (!c.write(chunk)) return c.once('drain', pump); } c.end(); };
    pump();
  });
  c.on('error', () => {});
});
