'use strict';
// Observability at scale, in the SMC-D guest (as root): `stats sockets`, the promise API's listing and a
// scrape of `stats serve` at 1,000 / 5,000 / 10,000 live SMC-D sockets (time and peak memory), and the
// event-loop delay a server pays when it asks smc-run/promises about each new connection at 2,000 live
// sockets, side by side with no lookup and with the blocking getSmcInfo.
//   node bench/observability-scale.cjs [--sizes 1000,5000,10000|none] [--burst 300] [--out FILE]
// (--sizes none: the event-loop part only; --rounds N: its rounds, default 3)
// Buffers are set to the 16 KiB minimum in a fresh namespace so 10,000 sockets fit the guest's memory.
// loopback-ism has at most 5,000 DMBs (SMC_LO_MAX_DMBS), one per SMC-D socket: past 5,000 sockets the new
// connections fall back to TCP, so the 10,000 point is 5,000 SMC-D and 5,000 fallen-back SMC sockets (all
// listed by sock_diag alike).
// Writes bench/results/observability-scale.json and prints a table.
// --scrapers N [--load-seconds S] [--before-bin BIN]: at the largest size, N scrapers at once against a fresh
// `stats serve` for S seconds (default 30), each on its own kept-alive connection, one scrape after another:
// scrape p50/p99, exporter peak RSS, the exporter's event-loop delay (its stop record) and the p99 of a
// probe of `/` every 100 ms (answered without a collection: what the event loop lets through). With
// --before-bin, the same load against another build's exporter first (an older checkout, for comparison).
// --rounds 0 skips the event-loop part.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const arg = (name, def) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : def; };
const SIZES = arg('--sizes', '1000,5000,10000') === 'none' ? [] : arg('--sizes', '1000,5000,10000').split(',').map(Number);
const MODES = ['none', 'promise', 'promise-unpaced', 'sync'];
const ROUNDS = Number(arg('--rounds', '3'));
const OUT = arg('--out', path.join(__dirname, 'results', 'observability-scale.json'));
const BURST = Number(arg('--burst', '300'));
const SCRAPERS = Number(arg('--scrapers', '0'));
const LOAD_MS = Number(arg('--load-seconds', '30')) * 1000;
const BEFORE_BIN = arg('--before-bin', undefined);
const NS = `smcrun-obs-${process.pid}`;
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]; };
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };

// ---- the roles, each its own process inside the namespace ----
async function holder() {
  // holds `pairs` SMC-D connections (2 sockets each) to itself; grows on "grow N" lines; prints "ok N"
  const api = require(path.join(ROOT, 'dist', 'index.js'));
  const r = api.enableSmc();
  if (!r.enabled) throw new Error(`no SMC: ${r.reason}`);
  const server = net.createServer((s) => s.on('error', () => {}));
  server.maxConnections = 100000;
  await new Promise((res) => server.listen(0, '127.0.0.1', 4096, res));
  const { port } = server.address();
  const clients = [];
  let buf = '';
  process.stdin.on('data', async (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const want = Number(buf.slice(0, i).split(' ')[1]);
      buf = buf.slice(i + 1);
      while (clients.length < want) {
        const batch = [];
        for (let k = 0; k < 50 && clients.length + batch.length < want; k++) {
          batch.push(new Promise((res, rej) => { const c = net.connect(port, '127.0.0.1', () => res(c)); c.on('error', rej); }));
        }
        clients.push(...(await Promise.all(batch)));
      }
      process.stdout.write(`ok ${clients.length}\n`);
    }
  });
}

async function lookupServer(mode) {
  // a server with 2,000 sockets' worth of neighbours (held by the holder); on each new connection it asks
  // about the socket (mode: none | promise | sync) and answers one byte; event-loop delay over the burst
  const api = require(path.join(ROOT, 'dist', 'index.js'));
  const promises = require(path.join(ROOT, 'dist', 'promises.js'));
  if (!api.enableSmc().enabled) throw new Error('no SMC');
  const h = monitorEventLoopDelay({ resolution: 1 });
  let seen = 0;
  let smcd = 0;
  const lookupMs = [];
  const server = net.createServer(async (s) => {
    s.on('error', () => {});
    // (not `smcd += await ...`: that reads smcd before the await and loses concurrent increments)
    const t0 = performance.now();
    const info = mode.startsWith('promise') ? await promises.getSmcInfo(s) : mode === 'sync' ? api.getSmcInfo(s) : undefined;
    lookupMs.push(performance.now() - t0);
    if (info?.mode === 'smcd') smcd++;
    s.end('x');
    if (++seen === BURST) {
      h.disable();
      process.stdout.write(`${JSON.stringify({ mode, p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, smcd, lookupP50: pct(lookupMs, 50), lookupP99: pct(lookupMs, 99) })}\n`);
      process.exit(0);
    }
  });
  server.listen(0, '127.0.0.1', 1024, () => {
    h.enable();
    process.stdout.write(`port ${server.address().port}\n`);
  });
}

async function burstClient(port) {
  const api = require(path.join(ROOT, 'dist', 'index.js'));
  api.enableSmc();
  const one = () => new Promise((res) => { const c = net.connect(port, '127.0.0.1'); c.on('data', () => {}); c.on('close', res); c.on('error', res); });
  // 20 at a time: a steady arrival of new connections, not a handshake storm
  for (let i = 0; i < BURST; i += 20) await Promise.all(Array.from({ length: Math.min(20, BURST - i) }, one));
}

// ---- the driver ----
// each role holds thousands of sockets: it gets an fd limit of 65,536 (1,024, a common default soft limit, is too few)
const inNs = (args, opts = {}) => spawn('sh', ['-c', 'ulimit -n 65536 && exec "$@"', 'sh', 'ip', 'netns', 'exec', NS, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'inherit'], ...opts });
function lines(child, onLine) {
  let buf = '';
  child.stdout.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i); buf = buf.slice(i + 1); onLine(l); } });
}
// a role that dies before its line fails the bench instead of leaving it waiting
const nextLine = (child, pred) => new Promise((res, rej) => {
  lines(child, (l) => { if (pred(l)) res(l); });
  child.once('exit', (code, sig) => rej(new Error(`${child.spawnargs.slice(-3).join(' ')} exited (${code ?? sig}) before its line`)));
});

/** One scrape on a connection of its own (a reused keep-alive connection may meet the server closing it). */
function scrapeOnce(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`scrape: HTTP ${res.statusCode}`))));
    }).on('error', reject);
  });
}

/** N scrapers at once for LOAD_MS against a fresh exporter of bin; its numbers. */
async function scrapeLoad(bin, name) {
  const port = 19500 + (process.pid % 400);
  const exporter = spawn(process.execPath, [bin, 'stats', 'serve', '--listen', `127.0.0.1:${port}`, '--netns', NS], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  exporter.stderr.on('data', (d) => (stderr += d));
  const get = (agent, p) => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p, agent }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`HTTP ${res.statusCode}`))));
    }).on('error', reject);
  });
  for (let i = 0; i < 300; i++) {
    try { await get(false, '/'); break; } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  await scrapeOnce(port); // the first collection (module loads, sockets opened) outside the window
  const lat = [];
  const probe = [];
  let errors = 0;
  let peakRss = 0;
  const rss = setInterval(() => {
    try { peakRss = Math.max(peakRss, Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${exporter.pid}/status`, 'utf8'))[1]) * 1024); } catch {}
  }, 100);
  const until = Date.now() + LOAD_MS;
  const probing = (async () => {
    while (Date.now() < until) {
      const t0 = performance.now();
      try { await get(false, '/'); probe.push(performance.now() - t0); } catch { errors++; }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.all(Array.from({ length: SCRAPERS }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (Date.now() < until) {
      const t0 = performance.now();
      try { await get(agent, '/metrics'); lat.push(performance.now() - t0); } catch { errors++; }
    }
    agent.destroy();
  }));
  await probing;
  clearInterval(rss);
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${exporter.pid}/status`, 'utf8'))?.[1]) * 1024;
  exporter.kill('SIGTERM');
  await new Promise((r) => exporter.once('exit', r));
  const stop = stderr.split('\n').filter((l) => l.includes('"event":"stop"')).map((l) => JSON.parse(l))[0];
  const row = {
    exporter: name, scrapers: SCRAPERS, seconds: LOAD_MS / 1000, scrapes: lat.length, errors,
    scrapeP50Ms: pct(lat, 50), scrapeP99Ms: pct(lat, 99), scrapeMaxMs: Math.max(...lat),
    probeP99Ms: pct(probe, 99), probeMaxMs: Math.max(...probe), peakRssBytes: Math.max(peakRss, hwm),
    collections: stop?.collections, familyResolutions: stop?.familyResolutions, eventLoopDelayMs: stop?.eventLoopDelayMs,
  };
  console.log(`  ${name}: ${SCRAPERS} scrapers x ${row.seconds} s: ${row.scrapes} scrapes (${errors} errors), p50 ${row.scrapeP50Ms.toFixed(0)} ms, p99 ${row.scrapeP99Ms.toFixed(0)} ms; ` +
    `probe of / p99 ${row.probeP99Ms.toFixed(1)} ms (max ${row.probeMaxMs.toFixed(0)}); peak RSS ${(row.peakRssBytes / 1048576).toFixed(0)} MiB` +
    (stop ? `; collections ${stop.collections}, family resolutions ${JSON.stringify(stop.familyResolutions)}, event-loop delay p99 ${stop.eventLoopDelayMs.p99} ms (max ${stop.eventLoopDelayMs.max})` : ''));
  return row;
}

function timeRun(cmd, args) {
  const t0 = process.hrtime.bigint();
  const out = execFileSync(cmd, args, { maxBuffer: 1 << 30 });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, out };
}

async function main() {
  execFileSync('ip', ['netns', 'add', NS]);
  try {
    execFileSync('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
    for (const k of ['wmem', 'rmem']) execFileSync(process.execPath, [BIN, 'sysctl', 'set', '--netns', NS, `${k}=16384`], { stdio: 'ignore' });
    const holderProc = inNs([__filename, '--role', 'holder']);
    const exporterPort = 19000 + (process.pid % 1000);
    const exporter = spawn(process.execPath, [BIN, 'stats', 'serve', '--listen', `127.0.0.1:${exporterPort}`, '--netns', NS], { stdio: ['ignore', 'ignore', 'inherit'] });
    await new Promise((r) => setTimeout(r, 3000));
    const scale = [];
    for (const size of SIZES) {
      const got = nextLine(holderProc, (l) => l.startsWith('ok '));
      holderProc.stdin.write(`grow ${size / 2}\n`);
      await got;
      await new Promise((r) => setTimeout(r, 1000));
      const cli = [];
      let listed = 0;
      let listedSmcd = 0;
      for (let i = 0; i < 3; i++) {
        const r = timeRun(process.execPath, [BIN, 'stats', 'sockets', '--netns', NS, '--json']);
        const rows = JSON.parse(r.out).sockets;
        listed = rows.length;
        listedSmcd = rows.filter((s) => s.mode === 'smcd').length;
        cli.push(r.ms);
      }
      const scrape = [];
      let smcdGauge = 0;
      for (let i = 0; i < 3; i++) {
        const t0 = process.hrtime.bigint();
        const text = await scrapeOnce(exporterPort);
        scrape.push(Number(process.hrtime.bigint() - t0) / 1e6);
        smcdGauge = [...text.matchAll(/^smc_sockets\{[^}]*mode="(?:smcd|fallback)"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
      }
      const exporterRss = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${exporter.pid}/status`, 'utf8'))?.[1]) * 1024;
      const row = { sockets: size, listed, listedSmcd, statsSocketsMs: median(cli), scrapeMs: median(scrape), scrapeConnectedGauge: smcdGauge, exporterPeakRssBytes: exporterRss };
      scale.push(row);
      console.log(`${String(size).padStart(6)} sockets: stats sockets ${row.statsSocketsMs.toFixed(0)} ms (listed ${listed}, ${listedSmcd} SMC-D), scrape ${row.scrapeMs.toFixed(0)} ms (smcd+fallback gauge ${smcdGauge}), exporter peak RSS ${(exporterRss / 1048576).toFixed(0)} MiB`);
    }
    exporter.kill('SIGTERM');
    const load = [];
    if (SCRAPERS > 0) {
      console.log(`under load at ${SIZES[SIZES.length - 1] ?? 0} live sockets:`);
      if (BEFORE_BIN) load.push(await scrapeLoad(BEFORE_BIN, 'before'));
      load.push(await scrapeLoad(BIN, 'this build'));
    }
    holderProc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 2000));
    if (ROUNDS === 0) {
      fs.writeFileSync(OUT, `${JSON.stringify({ kernel: os.release(), node: process.version, cpus: os.cpus().length, date: new Date().toISOString().slice(0, 10), scale, load }, null, 2)}\n`);
      return;
    }
    // event-loop delay at 2,000 live sockets
    const h2 = inNs([__filename, '--role', 'holder']);
    const ready = nextLine(h2, (l) => l.startsWith('ok '));
    h2.stdin.write('grow 1000\n');
    await ready;
    const delay = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of MODES) {
        // promise-unpaced: dumps back to back under a stream of lookups, as before the pacing
        const srv = inNs([__filename, '--role', 'lookup', mode], mode === 'promise-unpaced' ? { env: { ...process.env, SMC_RUN_TEST_DUMP_PACING: '0' } } : {});
        const result = nextLine(srv, (l) => l.startsWith('{'));
        const port = Number((await nextLine(srv, (l) => l.startsWith('port '))).split(' ')[1]);
        const cl = inNs([__filename, '--role', 'burst', String(port)]);
        const r = JSON.parse(await result);
        cl.kill('SIGTERM');
        delay.push({ round, ...r });
        console.log(`  round ${round} ${mode.padEnd(7)}: event-loop delay p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms; lookup p50 ${r.lookupP50.toFixed(2)} ms, p99 ${r.lookupP99.toFixed(2)} ms; SMC-D seen ${r.smcd}/${BURST}`);
      }
    }
    h2.kill('SIGTERM');
    const byMode = (m) => delay.filter((d) => d.mode === m);
    const summary = Object.fromEntries(MODES.map((m) => [m, { p99: median(byMode(m).map((d) => d.p99)), p50: median(byMode(m).map((d) => d.p50)), lookupP50: median(byMode(m).map((d) => d.lookupP50)), lookupP99: median(byMode(m).map((d) => d.lookupP99)) }]));
    console.log(`p99 added by the lookup at 2,000 sockets: ${MODES.filter((m) => m !== 'none').map((m) => `${m} ${(summary[m].p99 - summary.none.p99).toFixed(2)} ms`).join(', ')}`);
    const out = { kernel: os.release(), node: process.version, cpus: os.cpus().length, date: new Date().toISOString().slice(0, 10), burst: BURST, scale, load, delay, summary };
    fs.writeFileSync(OUT, `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    try { execFileSync('ip', ['netns', 'del', NS]); } catch {}
  }
}

const role = process.argv.indexOf('--role');
if (role >= 0) {
  const r = process.argv[role + 1];
  const run = r === 'holder' ? holder() : r === 'lookup' ? lookupServer(process.argv[role + 2]) : burstClient(Number(process.argv[role + 2]));
  run.catch((e) => { console.error(e); process.exit(1); });
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}
