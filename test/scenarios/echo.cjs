'use strict';
// A small echo server and client for real-kernel tests that need two processes.
//   node echo.cjs server HOST          -> prints {"listening":PORT}; per connection {"server":conn}
//   node echo.cjs client HOST PORT N   -> sends N random bytes, checks the echo, prints {"client":conn,"ok":...}
const net = require('node:net');
const crypto = require('node:crypto');
const { probe, sha256, withTimeout } = require('./lib.cjs');

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const [role, host, portArg, bytesArg] = process.argv.slice(2);

if (role === 'server') {
  const server = net.createServer((s) => {
    const conn = probe('server', s);
    s.on('error', () => {});
    s.pipe(s);
    s.on('close', () => out({ server: conn }));
  });
  server.listen(Number(portArg || 0), host, () => out({ listening: server.address().port }));
  process.on('SIGTERM', () => process.exit(0));
} else if (role === 'client') {
  const n = Number(bytesArg || 65536);
  const payload = crypto.randomBytes(n);
  const c = net.connect(Number(portArg), host);
  const chunks = [];
  let conn;
  const done = new Promise((resolve, reject) => {
    c.on('connect', () => {
      conn = probe('client', c);
      // write, then half-close once everything is echoed back
      c.write(payload);
    });
    let got = 0;
    c.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= n) c.end();
    });
    c.on('close', resolve);
    c.on('error', reject);
  });
  withTimeout(done, Number(process.env.SCENARIO_TIMEOUT_MS || 120000), 'echo client')
    .then(() => {
      const back = Buffer.concat(chunks);
      out({ client: conn, ok: back.length === n && sha256(back) === sha256(payload), bytes: back.length });
    })
    .catch((e) => { out({ client: conn || null, ok: false, error: String(e.message) }); process.exitCode = 1; });
} else {
  process.stderr.write('usage: echo.cjs server HOST [PORT] | client HOST PORT BYTES\n');
  process.exitCode = 2;
}
