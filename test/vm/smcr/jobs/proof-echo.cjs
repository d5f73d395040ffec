'use strict';
// The two ends of the SMC-R proof, each run under the launcher (`node bin/smc-run node proof-echo.cjs ...`)
// so the sockets are plain net.Server / net.Socket and only the shim makes them AF_SMC:
//   server PORT READY_FILE PEER_RC_FILE
//                                 echo server on 0.0.0.0:PORT; creates READY_FILE once it listens (guest a
//                                 waits for it), serves one connection, reports its mode and exits (0 only
//                                 if that connection was SMC-R); gives up when PEER_RC_FILE appears first
//                                 (the client's guest has finished without connecting)
//   client HOST PORT BYTES READY_FILE PEER_RC_FILE
//                                 waits for READY_FILE (gives up when PEER_RC_FILE appears: the server's
//                                 guest has finished), sends BYTES random bytes, checks the sha256 of the
//                                 echo, and asserts SMC-R in-process (getSmcInfo) and from outside
//                                 (`smc-run stats sockets --pid`) while the connection is open
// Each prints PROOF lines; the exit code is the verdict.
// The client waits for the server itself rather than being started after it: under TCG starting Node
// under the launcher takes seconds, and this way both guests pay that at the same time.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');

const REPO = process.env.SMC_RUN_REPO || path.join(__dirname, '..', '..', '..', '..');
const api = require(path.join(REPO, 'dist', 'index.js'));
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
// stamped with the guest uptime so the console shows where the time goes
const uptime = () => fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0];
const say = (side, what, obj) => console.log(`PROOF ${side} ${what} [${uptime()}s] ${JSON.stringify(obj)}`);
const brief = (i) => ({ mode: i.mode, state: i.state, fallback: i.fallback && `${i.fallback.name} (${i.fallback.description})`, linkGroup: i.linkGroup, buffers: i.buffers, bytes: i.bytes });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let watcher = null; // the client's `stats sockets --watch` child, stopped on every way out
const die = (msg) => { console.error(`PROOF ${msg}`); if (watcher) watcher.stop(); process.exit(1); };
// A stuck transfer should fail here, with a message, before the harness's timeout stops the guest.
// Generous: the other guest may still be booting (about 20-30 s under TCG, more on a loaded host).
const deadline = (ms, what) => setTimeout(() => die(`${what}: timed out after ${ms} ms`), ms).unref();

function server(port, readyFile, peerRc) {
  deadline(360_000, 'server');
  const peerGone = setInterval(() => { if (fs.existsSync(peerRc)) die(`server: the client's guest finished (${peerRc}) without connecting`); }, 500);
  const srv = net.createServer((s) => {
    clearInterval(peerGone);
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

/**
 * The outside view, as a user gets it: `smc-run stats sockets --pid <this process> --json --watch 1`.
 * Started before the connection exists because under TCG the CLI takes seconds to start (it would
 * otherwise hold the connection open that long); find() resolves with the first row of a snapshot that
 * matches. Snapshots are pretty-printed JSON objects one after the other (one-line JSON is accepted too).
 */
function watchStats() {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the CLI itself need not be shimmed
  const args = [path.join(REPO, 'bin', 'smc-run'), 'stats', 'sockets', '--pid', String(process.pid), '--json', '--watch', '1'];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let pending = '';
  let doc = '';
  let errText = '';
  let snapshots = 0;
  let failure = null; // set once the watch cannot deliver any more
  let want = null; // { pred, resolve, reject, timer } of the one find() in progress
  const finish = (err, row) => {
    if (err) failure ??= err;
    if (!want) return;
    const w = want;
    want = null;
    clearTimeout(w.timer);
    if (row) w.resolve(row);
    else w.reject(failure);
  };
  child.stdout.setEncoding('utf8').on('data', (d) => {
    pending += d;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      doc += `${line}\n`;
      const oneLine = doc === `${line}\n` && line.startsWith('{') && line.endsWith('}');
      if (line !== '}' && !oneLine) continue;
      let snap;
      try {
        snap = JSON.parse(doc);
      } catch (e) {
        finish(new Error(`stats sockets printed something that is not JSON: ${e.message}`));
        return;
      } finally {
        doc = '';
      }
      if (snap.error) return finish(new Error(`smc-run stats sockets: ${snap.error.message || JSON.stringify(snap.error)}`));
      snapshots++;
      const row = want && (snap.sockets || []).find(want.pred);
      if (row) finish(null, row);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (d) => { errText += d; });
  child.on('exit', (code, sig) => finish(new Error(`smc-run stats sockets --watch exited (${code ?? sig}) after ${snapshots} snapshots: ${errText.trim()}`)));
  return {
    find: (pred, ms) => new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      want = { pred, resolve, reject, timer: setTimeout(() => finish(new Error(`stats sockets: connection not listed within ${ms} ms (${snapshots} snapshots)`)), ms) };
    }),
    stop: () => { child.removeAllListeners('exit'); child.kill(); },
  };
}

async function waitFor(file, peerRc, ms) {
  const start = Date.now();
  while (!fs.existsSync(file)) {
    if (fs.existsSync(peerRc)) throw new Error(`the server's guest finished (${peerRc}) before ${file} appeared`);
    if (Date.now() - start > ms) throw new Error(`no ${file} after ${ms} ms`);
    await sleep(200);
  }
}

async function client(host, port, bytes, readyFile, peerRc) {
  deadline(360_000, 'client');
  const payload = crypto.randomBytes(bytes);
  watcher = watchStats();
  await waitFor(readyFile, peerRc, 300_000);
  const t0 = process.hrtime.bigint();
  const c = await new Promise((resolve, reject) => {
    const s = net.connect({ host, port }, () => resolve(s));
    s.once('error', reject);
  });
  const info = api.getSmcInfo(c);
  say('client', 'getSmcInfo', brief(info));
  const problems = [];
  if (info.mode !== 'smcr') problems.push(`getSmcInfo mode ${info.mode}${info.fallback ? ` (${info.fallback.name})` : ''}, wanted smcr`);
  if (!info.linkGroup) problems.push('getSmcInfo: no link group');
  // the CLI has been watching since start-up; the connection stays open until it has been listed
  const stats = watcher.find((r) => r.remote.port === port && r.local.port === c.localPort, 60_000)
    .catch((e) => { problems.push(e.message); return null; }); // handled now: it may fail while the data moves
  const echo = new Promise((resolve, reject) => {
    const chunks = [];
    let got = 0;
    c.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= bytes) resolve(Buffer.concat(chunks));
    });
    c.on('error', reject);
    c.on('end', () => reject(new Error(`connection ended after ${got} of ${bytes} echoed bytes`)));
  });
  c.write(payload);
  const back = await echo;
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = api.getSmcInfo(c); // the cursors count what moved over SMC-R
  const ok = back.length === bytes && sha256(back) === sha256(payload);
  say('client', 'result', { ok, bytes, echoed: back.length, sha256: sha256(payload), seconds: Number(secs.toFixed(2)), smcBytes: after.bytes, mode: after.mode });
  if (!ok) problems.push('echo differs from what was sent');
  if (after.mode !== 'smcr') problems.push(`mode after the transfer ${after.mode}, wanted smcr`);
  const row = await stats;
  watcher.stop();
  say('client', 'stats-sockets', row && { mode: row.mode, local: row.local, remote: row.remote, linkGroup: row.linkGroup, bytes: row.bytes, owners: row.owners });
  if (row && row.mode !== 'smcr') problems.push(`stats sockets mode ${row.mode}, wanted smcr`);
  c.end();
  for (const p of problems) console.error(`PROOF client: ${p}`);
  say('client', 'verdict', { ok: problems.length === 0 });
  process.exitCode = problems.length === 0 ? 0 : 1;
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'server' && args.length === 3) server(Number(args[0]), args[1], args[2]);
else if (mode === 'client' && args.length === 5) {
  client(args[0], Number(args[1]), Number(args[2]), args[3], args[4]).catch((e) => die(`client: ${e.message}`));
} else {
  console.error('usage: proof-echo.cjs server PORT READY_FILE PEER_RC_FILE | client HOST PORT BYTES READY_FILE PEER_RC_FILE');
  process.exit(2);
}
