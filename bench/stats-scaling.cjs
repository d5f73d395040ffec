'use strict';
// How `stats sockets` and getSmcInfo scale with the number of live SMC sockets (run in the SMC-D guest
// as root: node bench/stats-scaling.cjs [N...]), and how fast the sock_diag parser is on a synthetic dump
// (anywhere: node bench/stats-scaling.cjs --parse). Prints a table; writes bench/results/stats-scaling*.json.
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const dist = path.join(__dirname, '..', 'dist');
const api = require(path.join(dist, 'index.js'));
const { collectSockets } = require(path.join(dist, 'cli', 'stats.js'));
const { parseSmcDiagMessage } = require(path.join(dist, 'netlink', 'sockdiag.js'));
const { parseMessages } = require(path.join(dist, 'netlink', 'message.js'));

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const timeMs = (fn) => { const t0 = process.hrtime.bigint(); fn(); return Number(process.hrtime.bigint() - t0) / 1e6; };

function parseRate() {
  const fixture = require(path.join(__dirname, '..', 'test', 'fixtures', 'sockdiag', 'smcd-6.12.json'));
  const payload = Buffer.from(fixture.messages[1], 'base64');
  const hdr = Buffer.alloc(16);
  hdr.writeUInt32LE(16 + payload.length, 0);
  hdr.writeUInt16LE(20, 4);
  const one = Buffer.concat([hdr, payload, Buffer.alloc((4 - (payload.length % 4)) % 4)]);
  const dump = Buffer.concat(Array.from({ length: 10000 }, () => one));
  const runs = [];
  for (let i = 0; i < 7; i++) runs.push(timeMs(() => { for (const m of parseMessages(dump)) parseSmcDiagMessage(m.payload); }));
  const rowsPerSec = 10000 / (median(runs) / 1000);
  console.log(`sock_diag parser: ${Math.round(rowsPerSec).toLocaleString('en')} rows/s (10,000-row synthetic dump, median of 7)`);
  return { rowsPerSec };
}

async function openConnections(server, port, n) {
  const clients = [];
  for (let i = 0; i < n; i++) {
    clients.push(await new Promise((resolve, reject) => { const c = net.connect(port, '127.0.0.1', () => resolve(c)); c.on('error', reject); }));
  }
  return clients;
}

async function scaling(targets) {
  const smc = api.enableSmc();
  if (!smc.enabled) throw new Error(`no SMC: ${smc.reason}`);
  const server = net.createServer((s) => s.resume());
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const clients = [];
  const rows = [];
  for (const sockets of targets) {
    const want = sockets / 2; // each connection is two sockets
    clients.push(...(await openConnections(server, port, want - clients.length)));
    await new Promise((r) => setTimeout(r, 500));
    const list = [];
    let seen = 0;
    for (let i = 0; i < 5; i++) list.push(timeMs(() => { seen = collectSockets({ all: false, listening: false, pid: undefined, target: undefined, netns: undefined }).length; }));
    const info = [];
    for (let i = 0; i < 50; i++) { const c = clients[(i * 7919) % clients.length]; info.push(timeMs(() => { if (api.getSmcInfo(c).mode !== 'smcd') throw new Error('not smcd'); })); }
    const r = { sockets: seen, statsSocketsMs: median(list), perSocketUs: (median(list) * 1000) / seen, getSmcInfoMs: median(info) };
    rows.push(r);
    console.log(`${String(r.sockets).padStart(5)} sockets: stats sockets ${r.statsSocketsMs.toFixed(1)} ms (${r.perSocketUs.toFixed(1)} us/socket), getSmcInfo ${r.getSmcInfoMs.toFixed(2)} ms/call`);
  }
  for (const c of clients) c.destroy();
  server.close();
  return rows;
}

async function main() {
  const out = { kernel: os.release(), node: process.version, cpus: os.cpus().length, date: new Date().toISOString().slice(0, 10) };
  if (process.argv.includes('--parse')) {
    out.parse = parseRate();
    fs.writeFileSync(path.join(__dirname, 'results', 'stats-parse.json'), JSON.stringify(out, null, 2) + '\n');
    return;
  }
  const targets = process.argv.slice(2).map(Number).filter(Boolean);
  out.scaling = await scaling(targets.length ? targets : [500, 1000, 2000]);
  fs.writeFileSync(path.join(__dirname, 'results', 'stats-scaling-smcd.json'), JSON.stringify(out, null, 2) + '\n');
}
main().catch((e) => { console.error(e); process.exit(1); });
