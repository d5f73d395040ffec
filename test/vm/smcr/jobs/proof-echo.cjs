'use strict';
// The two ends of the SMC-R proof, each run under the launcher (`node bin/smc-run node proof-echo.cjs ...`)
// so the sockets are plain net.Server / net.Socket and only the shim makes them AF_SMC:
//   server PORT READY_FILE   echo server on 0.0.0.0:PORT; creates READY_FILE once it listens (the peer
//                            guest waits for it), serves one connection, reports its mode and exits
//                            (0 only if that connection was SMC-R)
//   client HOST PORT BYTES   sends BYTES random bytes, checks the sha256 of the echo, and asserts SMC-R
//                            both in-process (getSmcInfo) and from outside (`smc-run stats sockets --pid`)
// Each prints PROOF lines; the exit code is the verdict.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');

const REPO = process.env.SMC_RUN_REPO || path.join(__dirname, '..', '..', '..', '..');
const api = require(path.join(REPO, 'dist', 'index.js'));
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
const say = (side, what, obj) => console.log(`PROOF ${side} ${what} ${JSON.stringify(obj)}`);
const brief = (i) => ({ mode: i.mode, state: i.state, fallback: i.fallback && `${i.fallback.name} (${i.fallback.description})`, linkGroup: i.linkGroup, buffers: i.buffers, bytes: i.bytes });

// under TCG SMC-R moves about 1.3 MB/s and a round trip costs ~23 ms: 1 MiB each way takes seconds, so a
// minute means something is stuck, and failing then beats waiting for the harness's timeout
const deadline = (ms, what) => setTimeout(() => { console.error(`PROOF ${what}: timed out after ${ms} ms`); process.exit(1); }, ms).unref();

function server(port, readyFile) {
  deadline(240_000, 'server');
  const srv = net.createServer((s) => {
    const info = api.getSmcInfo(s);
    say('server', 'connection', brief(info));
    s.on('error', (e) => { console.error(`PROOF server: ${e.message}`); process.exitCode = 1; });
    s.on('close', () => {
      if (info.mode !== 'smcr') { console.error(`PROOF server: connection mode ${info.mode}, wanted smcr`); process.exitCode = 1; }
      srv.close();
    });
    s.pipe(s);
  });
  srv.listen(port, '0.0.0.0', () => {
    say('server', 'listening', { port });
    fs.writeFileSync(readyFile, `${process.pid}\n`);
  });
}

function statsRow(port) {
  // the outside view, as a user would get it; NODE_OPTIONS dropped so the CLI is not itself shimmed
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const out = execFileSync(process.execPath, [path.join(REPO, 'bin', 'smc-run'), 'stats', 'sockets', '--pid', String(process.pid), '--json'], { env, encoding: 'utf8' });
  return JSON.parse(out).sockets.find((r) => r.remote.port === port);
}

function client(host, port, bytes) {
  deadline(120_000, 'client');
  const payload = crypto.randomBytes(bytes);
  const t0 = process.hrtime.bigint();
  const c = net.connect({ host, port }, () => {
    const info = api.getSmcInfo(c);
    say('client', 'getSmcInfo', brief(info));
    const row = statsRow(port);
    say('client', 'stats-sockets', row ? { mode: row.mode, local: row.local, remote: row.remote, linkGroup: row.linkGroup, owners: row.owners } : null);
    const problems = [];
    if (info.mode !== 'smcr') problems.push(`getSmcInfo mode ${info.mode}${info.fallback ? ` (${info.fallback.name})` : ''}, wanted smcr`);
    if (!info.linkGroup) problems.push('getSmcInfo: no link group');
    if (!row) problems.push('stats sockets --pid: connection not listed');
    else if (row.mode !== 'smcr') problems.push(`stats sockets mode ${row.mode}, wanted smcr`);
    if (problems.length) { problems.forEach((p) => console.error(`PROOF client: ${p}`)); process.exit(1); }
    c.write(payload);
  });
  const chunks = [];
  let got = 0;
  c.on('data', (d) => {
    chunks.push(d);
    got += d.length;
    if (got < bytes) return;
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const after = api.getSmcInfo(c); // still open: the cursors count what moved over SMC-R
    const echo = Buffer.concat(chunks);
    const ok = got === bytes && sha256(echo) === sha256(payload);
    say('client', 'result', { ok, bytes, echoed: got, sha256: sha256(payload), seconds: Number(secs.toFixed(2)), smcBytes: after.bytes, mode: after.mode });
    if (!ok || after.mode !== 'smcr') process.exitCode = 1;
    c.end();
  });
  c.on('error', (e) => { console.error(`PROOF client: ${e.message}`); process.exit(1); });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'server') server(Number(args[0]), args[1]);
else if (mode === 'client') client(args[0], Number(args[1]), Number(args[2]));
else { console.error('usage: proof-echo.cjs server PORT READY_FILE | client HOST PORT BYTES'); process.exit(2); }
