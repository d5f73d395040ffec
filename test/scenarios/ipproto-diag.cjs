'use strict';
// One loopback connection made under the launcher (run with --proto ipproto or --proto af_smc), then what
// sock_diag says about both ends: the raw smc_diag_msg fields (family, ports, the 16 address bytes in
// hex, inode) next to what Node knows (its own address and port), getSmcInfo on both ends, and the
// namespace listing (sync and promise) of both.
// usage: smc-run [--proto ipproto|af_smc] node ipproto-diag.cjs
const net = require('node:net');
const path = require('node:path');
const { api, report, fail, withTimeout } = require('./lib.cjs');

const dist = path.join(__dirname, '..', '..', 'dist');
const { dumpSmcSockets, openSockDiag } = require(path.join(dist, 'netlink', 'sockdiag.js'));

async function main() {
  const server = net.createServer();
  const accepted = new Promise((resolve) => server.once('connection', resolve));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect(server.address().port, '127.0.0.1');
  await withTimeout(new Promise((resolve, reject) => client.once('connect', resolve).once('error', reject)), 60_000, 'connect');
  const peer = await accepted;
  client.write('x');
  await withTimeout(new Promise((resolve) => peer.once('data', resolve)), 60_000, 'data');

  const nl = openSockDiag();
  let rows;
  try {
    rows = dumpSmcSockets(nl);
  } finally {
    nl.close();
  }
  const inodeOf = (s) => BigInt(api.getSmcInfo(s).inode);
  const mine = { client: inodeOf(client), server: inodeOf(peer) };
  const raw = rows
    .filter((r) => r.inode === mine.client || r.inode === mine.server)
    .map((r) => ({
      side: r.inode === mine.client ? 'client' : 'server',
      family: r.family,
      mode: r.mode,
      state: r.state,
      sport: r.id.sport,
      dport: r.id.dport,
      src: r.id.src.toString('hex'),
      dst: r.id.dst.toString('hex'),
    }))
    .sort((a, b) => a.side.localeCompare(b.side));
  const node = {
    client: { local: `${client.localAddress}:${client.localPort}`, remote: `${client.remoteAddress}:${client.remotePort}` },
    server: { local: `${peer.localAddress}:${peer.localPort}`, remote: `${peer.remoteAddress}:${peer.remotePort}` },
  };
  const info = (s) => {
    const i = api.getSmcInfo(s);
    return { mode: i.mode, family: i.family, local: i.local, remote: i.remote };
  };
  const ours = (list) => list.filter((s) => BigInt(s.inode) === mine.client || BigInt(s.inode) === mine.server)
    .map((s) => ({ side: BigInt(s.inode) === mine.client ? 'client' : 'server', family: s.family, local: s.local, remote: s.remote }))
    .sort((a, b) => a.side.localeCompare(b.side));
  const listed = ours(api.listSmcSockets());
  const listedAsync = ours(await require(path.join(dist, 'promises.js')).listSmcSockets());
  report({ ok: true, raw, node, info: { client: info(client), server: info(peer) }, listed, listedAsync, conns: [] });
  client.destroy();
  peer.destroy();
  server.close();
}

main().catch(fail);
