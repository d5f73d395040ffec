'use strict';
// N concurrent connections, each echoing its own random payload: node concurrent.cjs N BYTES
const net = require('node:net');
const crypto = require('node:crypto');
const { probe, sha256, report, fail, withTimeout } = require('./lib.cjs');

async function main() {
  const n = Number(process.argv[2] || 200);
  const bytes = Number(process.argv[3] || 65536);
  const serverConns = [];
  const errors = new Set();
  const serverModes = {};
  const server = net.createServer((s) => {
    serverConns.push(s);
    s.once('data', () => {
      const p = probe('server', s); // while the connection is surely open
      serverModes[p.mode] = (serverModes[p.mode] || 0) + 1;
      if (p.error) errors.add(p.error);
    });
    s.pipe(s);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const modes = {};
  const one = () => new Promise((resolve, reject) => {
    const payload = crypto.randomBytes(bytes);
    const chunks = [];
    let got = 0;
    const c = net.connect(port, '127.0.0.1', () => c.write(payload));
    c.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= bytes) {
        const p = probe('client', c);
        modes[p.mode] = (modes[p.mode] || 0) + 1;
        if (p.error) errors.add(p.error);
        c.end();
        resolve(sha256(Buffer.concat(chunks)) === sha256(payload));
      }
    });
    c.on('error', reject);
  });
  const results = await Promise.all(Array.from({ length: n }, one));
  server.close();
  for (const s of serverConns) s.destroy();
  const good = results.filter(Boolean).length;
  report({ ok: good === n, conns: [], good, n, clientModes: modes, serverModes, errors: [...errors] });
}
withTimeout(main(), 170000, 'concurrent').catch(fail);
