'use strict';
// N sequential connect + 1-byte echo + close on loopback, server in the same process; prints ms.
const net = require('node:net');
const n = Number(process.argv[2] || 1000);
const host = process.argv[3] || '127.0.0.1';
const server = net.createServer((s) => { s.on('data', (d) => s.end(d)); s.on('error', () => {}); });
server.listen(0, host, async () => {
  const port = server.address().port;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    await new Promise((resolve, reject) => {
      const c = net.connect(port, host, () => c.write('x'));
      c.on('data', () => c.destroy());
      c.on('close', resolve);
      c.on('error', reject);
    });
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cu = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ ms, n, cpuMs: (cu.user + cu.system) / 1000 }) + '\n');
  server.close();
});
