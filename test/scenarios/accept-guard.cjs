'use strict';
// A listener whose accept reports the errors an SMC listener's accept() can return (libuv's status codes,
// as onconnection receives them): ECONNRESET, ETIMEDOUT (one connection's failed handshake), then EMFILE
// (the process's), then a real connection. Prints one JSON line: the server's 'error' events, the reply,
// and the hook's counters.
const net = require('node:net');
const path = require('node:path');
const { hookStats } = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
const { errno } = require('node:os').constants;

const events = [];
const server = net.createServer((s) => s.end('ok'));
server.on('error', (e) => events.push(e.code));
server.listen(0, '127.0.0.1', () => {
  for (const code of [errno.ECONNRESET, errno.ETIMEDOUT, errno.EMFILE]) server._handle.onconnection(-code);
  const c = net.connect(server.address().port, '127.0.0.1');
  let reply = '';
  c.on('data', (d) => { reply += d; });
  c.on('end', () => {
    const st = hookStats();
    console.log(JSON.stringify({ events, reply, listening: server.listening, acceptErrors: st ? st.acceptErrors : null, smc: st ? st.smc : null }));
    server.close();
  });
});
