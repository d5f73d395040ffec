'use strict';
// s390x lane helper, run under `smc-run node`: one connection over 127.0.0.1 that echoes N bytes, then
// getSmcInfo on both of its ends (sock_diag, read by this big-endian process itself). Prints one JSON line
// {"info":{...}} and keeps the connection open until SIGTERM, so the CLI can look at it meanwhile.
//   node hold.cjs N
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');

const api = require(path.join(__dirname, '..', '..', '..', 'dist', 'index.js'));
const n = Number(process.argv[2] || 65536);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const server = net.createServer((s) => s.pipe(s));
server.listen(0, '127.0.0.1', () => {
  const payload = crypto.randomBytes(n);
  const c = net.connect(server.address().port, '127.0.0.1', () => c.write(payload));
  const chunks = [];
  let got = 0;
  let serverSock;
  server.once('connection', (s) => (serverSock = s));
  c.on('data', (d) => {
    chunks.push(d);
    got += d.length;
    if (got < n) return;
    const echoed = Buffer.concat(chunks);
    out({
      info: {
        pid: process.pid,
        arch: process.arch,
        endianness: os.endianness(),
        echoed: echoed.length,
        same: echoed.equals(payload),
        client: api.getSmcInfo(c),
        server: api.getSmcInfo(serverSock),
      },
    });
  });
  c.on('error', (e) => {
    out({ error: String(e.stack || e) });
    process.exit(1);
  });
});
process.on('SIGTERM', () => process.exit(0));
