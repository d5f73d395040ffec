'use strict';
// Autocorking and TCP_CORK on SMC-R (issue 13): throughput and round-trip latency of Node writers with
// 1 B .. 64 KiB messages under three sender configurations:
//   autocork  net.smc.autocorking_size=65536 (the kernel default)
//   off       autocorking_size=0
//   cork64    autocorking_size=0, and the writer wraps every 64 writes in withTcpCork()
//             (for round trips: each request is written inside withTcpCork)
//
// Two processes, one per host, talk over SMC-R; the same two commands run in the test guests and on real
// RDMA hardware:
//   host B:  node bench/smcr/autocork.cjs serve [--port 7300]
//   host A:  node bench/smcr/autocork.cjs run --peer B_IP [--port 7300] [--runs 5] [--out FILE.json]
// `run` prints the table at the end (bench/smcr/report.cjs renders it); `serve` runs until stopped
// (Ctrl-C, or --stop-file) and then puts back the autocorking_size it found.
//
// Why this shape:
// - Both sides call enableSmc() themselves, so every TCP socket of the process is an SMC socket without
//   the launcher (running them under `smc-run node` works as well).
// - One fresh connection per point. A opens it with one JSON header line (what to measure, which
//   autocorking_size B must use); B answers with one line (its end's SMC mode) before any payload moves,
//   so both ends are checked to be SMC-R (getSmcInfo) for every point, and sysctl changes happen between
//   points, never during one.
// - The sysctl is a per-namespace setting read by the kernel at every send: it is changed with the
//   project's own command (`smc-run sysctl set autocorking_size=N`) on A before each configuration and on B
//   whenever a header asks for another value (B sends in round trips). Both put the original back at the end.
// - Throughput is measured where the bytes arrive (B), over a window that starts `--warmup` seconds after
//   the first byte: the writer's rate says little, since a corked sender only fills its buffer.
// - Each message is its own write syscall: the writer issues the next write only while Node's own write
//   queue is empty, because Node would otherwise gather queued buffers into one writev and cork them
//   itself, hiding exactly the effect under test.
// - Runs are interleaved (run 1: every configuration and size, then run 2 ...) and the configuration order
//   changes per run (runOrder), so slow drift of the host (other guests, TCG) spreads over all points.
//   Before run 1, discarded warm-up points (link group set-up, V8 compiling the hot paths).
//
// --smoke (CI, host without SMC): `node bench/smcr/autocork.cjs smoke` runs serve and run on 127.0.0.1
// with SMC_RUN_SOCKET_FAMILY=inet (plain TCP sockets), tiny points, no sysctl and, through the explicit
// --no-smc-check flag, no SMC-R check; it then renders the report into a temporary directory.
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { smcSysctl, setSmcSysctls } = require('../lib/smc-sysctl.cjs');

const ROOT = path.join(__dirname, '..', '..');
const SIZES = [1, 64, 1024, 65536];
const CONFIGS = {
  autocork: { autocorking: 65536, corkBatch: 0, label: 'autocorking 64 KiB' },
  off: { autocorking: 0, corkBatch: 0, label: 'autocorking off' },
  cork64: { autocorking: 0, corkBatch: 64, label: 'off + withTcpCork x64' },
};
const DEFAULT_PORT = 7300;
const BOOL_FLAGS = new Set(['no-sysctl', 'no-smc-check', 'quiet']);

function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) { out._.push(a); continue; }
    const key = a.slice(2);
    if (BOOL_FLAGS.has(key)) out[key] = true;
    else if (i + 1 < argv.length) out[key] = argv[++i];
    else throw new Error(`${a} needs a value`);
  }
  return out;
}

const log = (...a) => console.error(`[autocork ${new Date().toISOString().slice(11, 23)}]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let smcApi = null;
/** Loads the API and turns SMC on for this process (idempotent; under the launcher the hook is already on). */
function api() {
  if (!smcApi) {
    smcApi = require(path.join(ROOT, 'dist', 'index.js'));
    const r = smcApi.enableSmc();
    if (!r.enabled) throw new Error(`SMC could not be enabled: ${r.reason}`);
  }
  return smcApi;
}

// ---- sysctl through the project's command (../lib/smc-sysctl.cjs): A changes its own value while B
// changes B's.
const getAutocorking = async () => Number((await smcSysctl(['get', 'autocorking_size'])).sysctls[0].value);
const setAutocorking = (value) => setSmcSysctls({ autocorking_size: value });

/** What the sysctl side of a process does: nothing in smoke mode, else remember, change, restore. */
async function autocorkingControl(enabled) {
  if (!enabled) return { current: null, original: null, async apply() {}, async restore() {} };
  const ctl = { original: await getAutocorking(), current: null };
  ctl.current = ctl.original;
  ctl.apply = async (v) => {
    if (v === ctl.current) return;
    const t = performance.now();
    await setAutocorking(v);
    ctl.current = v;
    log(`autocorking_size=${v} (${Math.round(performance.now() - t)} ms)`);
  };
  ctl.restore = () => (ctl.current !== ctl.original ? ctl.apply(ctl.original) : Promise.resolve());
  return ctl;
}

function smcMode(socket, check) {
  if (!check) return 'unchecked';
  try {
    return api().getSmcInfo(socket).mode;
  } catch (e) {
    return `error: ${e.message}`;
  }
}

/**
 * One 'data' listener per socket for its whole life: first it collects text lines, then, once bytes() set
 * a handler, raw payload goes there. (Swapping listeners instead could drop a chunk in between.)
 */
function channel(sock) {
  let text = '';
  let onBytes = null;
  const lines = [];
  const waiters = [];
  let failure = null;
  const fail = (e) => {
    failure = failure || e;
    while (waiters.length) waiters.shift().reject(failure);
  };
  sock.on('data', (d) => {
    if (onBytes) return onBytes(d);
    text += d.toString('latin1');
    let nl;
    while ((nl = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      if (waiters.length) waiters.shift().resolve(line);
      else lines.push(line);
    }
  });
  sock.on('error', fail);
  sock.on('close', () => fail(new Error('connection closed')));
  return {
    line(ms) {
      if (lines.length) return Promise.resolve(lines.shift());
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no answer line within ${ms} ms`)), ms);
        waiters.push({ resolve: (l) => { clearTimeout(t); resolve(l); }, reject: (e) => { clearTimeout(t); reject(e); } });
      });
    },
    /** From now on payload goes to fn; what arrived after the last line is handed over first. */
    bytes(fn) {
      onBytes = fn;
      if (text.length) { const rest = Buffer.from(text, 'latin1'); text = ''; fn(rest); }
    },
  };
}

/** Resolves once every write so far has reached the kernel (writes complete in order). */
const flushed = (sock) => new Promise((r) => sock.write(Buffer.alloc(0), () => r()));

// ======================================================================== serve (host B)
async function serve(opts) {
  const check = !opts['no-smc-check'];
  if (!check && !opts['no-sysctl']) throw new Error('--no-smc-check is only for the smoke test (with --no-sysctl)');
  api();
  const ctl = await autocorkingControl(!opts['no-sysctl']);
  const port = Number(opts.port ?? DEFAULT_PORT);
  const srv = net.createServer((sock) => {
    serveConnection(sock, ctl, check).catch((e) => { log(`connection from ${sock.remoteAddress}: ${e.message}`); sock.destroy(); });
  });
  let stopping = false;
  const stop = (why) => {
    if (stopping) return;
    stopping = true;
    log(`stopping (${why}); autocorking_size back to ${ctl.original ?? '(untouched)'}`);
    srv.close();
    ctl.restore()
      .catch((e) => { log(`could not restore autocorking_size: ${e.message}`); process.exitCode = 1; })
      .finally(() => process.exit());
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  if (opts['stop-file']) {
    // the guests' convention: guest a creates a-done when its job ends (see test/vm/smcr/jobs/pair-lib.sh)
    setInterval(() => { if (fs.existsSync(opts['stop-file'])) stop(opts['stop-file']); }, 500);
  }
  srv.listen(port, opts.host || '0.0.0.0', () => {
    const p = srv.address().port;
    console.log(JSON.stringify({ listening: p, autocorking: ctl.original }));
    if (opts['ready-file']) fs.writeFileSync(opts['ready-file'], `${process.pid}\n`);
    log(`serving on port ${p}${check ? '' : ' (no SMC check: smoke)'}`);
  });
}

async function serveConnection(sock, ctl, check) {
  const ch = channel(sock);
  sock.on('error', () => {}); // the client destroys the connection when a point is done
  const hdr = JSON.parse(await ch.line(60_000));
  if (typeof hdr.autocorking === 'number') await ctl.apply(hdr.autocorking);
  const mode = smcMode(sock, check);
  sock.write(`${JSON.stringify({ mode, autocorking: ctl.current, kernel: os.release() })}\n`);
  if (hdr.kind === 'sysctl') return; // only the setting was asked for
  if (hdr.kind === 'rtt') {
    // echo: every chunk goes back as it comes (B is a sender too, hence its sysctl)
    ch.bytes((d) => sock.write(d));
    return;
  }
  if (hdr.kind !== 'tput') throw new Error(`unknown kind ${hdr.kind}`);
  const warm = hdr.warmup * 1000;
  const span = hdr.secs * 1000;
  let total = 0;
  let t0 = null;
  let first = null; // [time, bytes] at the first chunk after the warm-up
  let last = null; //  [time, bytes] at the last chunk inside the window
  let chunks = 0;
  const finish = () => {
    const secs = first && last && last[0] > first[0] ? (last[0] - first[0]) / 1000 : 0;
    const bytes = first && last ? last[1] - first[1] : 0;
    const after = check ? api().getSmcInfo(sock) : null;
    const res = { bytes, secs, bytesPerSec: secs > 0 ? bytes / secs : 0, received: total, chunks, mode: after ? after.mode : 'unchecked', smcBytes: after && after.bytes };
    ch.bytes(() => {}); // keep reading (and dropping) until the client closes
    sock.write(`${JSON.stringify(res)}\n`);
  };
  ch.bytes((d) => {
    const now = performance.now();
    total += d.length;
    chunks++;
    if (t0 === null) { t0 = now; setTimeout(finish, warm + span); }
    if (now < t0 + warm) return;
    if (!first) first = [now, total];
    else if (now <= t0 + warm + span) last = [now, total];
  });
}

// ======================================================================== run (host A)
function connect(host, port) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port }, () => { s.off('error', reject); resolve(s); });
    s.once('error', reject);
  });
}

/** Writes size-byte messages until stop() says so; returns how many. */
async function writeLoop(sock, size, corkBatch, stopped, maxMs) {
  const { withTcpCork } = api();
  const msg = Buffer.alloc(size, 0x61);
  const giveUp = performance.now() + maxMs;
  let writes = 0;
  // one write, and if the kernel did not take all of it (Node queued it), wait until it has: the next
  // message must be a write syscall of its own
  const one = () => { sock.write(msg); writes++; return sock.writableLength > 0 ? flushed(sock) : null; };
  while (!stopped()) {
    if (sock.destroyed) throw new Error('connection lost while writing');
    if (performance.now() > giveUp) throw new Error(`no result from the peer after ${maxMs} ms`);
    // a slice of ~10 ms, then back to the event loop so the peer's result line can be read
    const until = performance.now() + 10;
    do {
      if (corkBatch) {
        await withTcpCork(sock, async () => {
          // the result may arrive mid-batch (64 KiB x 64 is 4 MiB, seconds here): stop there
          for (let i = 0; i < corkBatch && !stopped(); i++) { const w = one(); if (w) await w; }
        });
      } else {
        const w = one();
        if (w) await w;
      }
    } while (performance.now() < until && !stopped());
    await new Promise((r) => setImmediate(r));
  }
  return writes;
}

async function throughputPoint(sock, ch, size, cfg, o) {
  let result = null;
  const answer = ch.line((o.warmup + o.secs) * 1000 + 60_000).then((l) => { result = JSON.parse(l); });
  answer.catch(() => {});
  const writes = await writeLoop(sock, size, cfg.corkBatch, () => result !== null, (o.warmup + o.secs) * 1000 + 60_000);
  await answer;
  return { bytesPerSec: result.bytesPerSec, bytes: result.bytes, secs: result.secs, chunks: result.chunks, writes, modeBAfter: result.mode, smcBytesB: result.smcBytes };
}

async function rttPoint(sock, ch, size, cfg, o) {
  const { withTcpCork } = api();
  const msg = Buffer.alloc(size, 0x62);
  let got = 0;
  let want = 0;
  let done = null;
  ch.bytes((d) => {
    got += d.length;
    if (done && got >= want) { const r = done; done = null; r(); }
  });
  const samples = [];
  const start = performance.now();
  const warmEnd = start + o.warmup * 1000;
  const end = warmEnd + o.rttSecs * 1000;
  let warm = 0;
  while (performance.now() < end) {
    want += size;
    const t = performance.now();
    let timer;
    const back = new Promise((r, j) => {
      done = r;
      timer = setTimeout(() => j(new Error(`no echo of ${size} bytes within 60 s`)), 60_000);
    });
    if (cfg.corkBatch) await withTcpCork(sock, () => { sock.write(msg); });
    else sock.write(msg);
    await back;
    clearTimeout(timer);
    const now = performance.now();
    // the first round trip always counts as warm-up (connection buffers, JIT), then --warmup seconds
    if (t < warmEnd || warm === 0) warm++;
    else samples.push(now - t);
  }
  const st = require('../lib/stats.cjs');
  return { p50Ms: st.percentile(samples, 50), p99Ms: st.percentile(samples, 99), samples: samples.length, warmupSamples: warm };
}

async function point(o, run, configName, kind, size) {
  const cfg = CONFIGS[configName];
  const sock = await connect(o.peer, o.port);
  try {
    const ch = channel(sock);
    sock.write(`${JSON.stringify({ kind, size, secs: o.secs, warmup: o.warmup, autocorking: o.sysctl ? cfg.autocorking : null })}\n`);
    const hello = JSON.parse(await ch.line(120_000));
    const modeA = smcMode(sock, o.check);
    const m = kind === 'tput' ? await throughputPoint(sock, ch, size, cfg, o) : await rttPoint(sock, ch, size, cfg, o);
    const modeAAfter = smcMode(sock, o.check);
    const smcBytesA = o.check ? api().getSmcInfo(sock).bytes : null;
    const modes = [modeA, modeAAfter, hello.mode, m.modeBAfter].filter((x) => x !== undefined);
    const smcr = o.check ? modes.every((x) => x === 'smcr') : null;
    return { run, config: configName, kind, size, ...m, modeA, modeAAfter, modeB: hello.mode, smcr, smcBytesA, autocorkingB: hello.autocorking, peerKernel: hello.kernel };
  } finally {
    sock.destroy();
  }
}

/**
 * The configurations in the order of one run. The order reverses every run and the two autocorking_size=0
 * configurations swap every second run, so each comes first, in the middle and last; the two that share
 * autocorking_size=0 stay adjacent and each run starts with the value the previous one ended with, so the
 * sysctl changes once per run (each change costs ~9 s of Node start-up under TCG).
 *   run 1: autocork off cork64   run 2: cork64 off autocork   run 3: autocork cork64 off   run 4: off cork64 autocork
 */
function runOrder(configs, run) {
  const base = Math.floor((run - 1) / 2) % 2 ? ['autocork', 'cork64', 'off'] : ['autocork', 'off', 'cork64'];
  if (run % 2 === 0) base.reverse();
  return base.filter((c) => configs.includes(c));
}

/** Asks B to set its autocorking_size (B answers once the value is in place). */
async function peerSysctl(o, value) {
  const sock = await connect(o.peer, o.port);
  try {
    const ch = channel(sock);
    sock.write(`${JSON.stringify({ kind: 'sysctl', autocorking: value })}\n`);
    const hello = JSON.parse(await ch.line(120_000));
    if (hello.autocorking !== value) throw new Error(`the peer reports autocorking_size ${hello.autocorking}, wanted ${value}`);
  } finally {
    sock.destroy();
  }
}

async function runMatrix(opts) {
  const o = {
    peer: opts.peer,
    port: Number(opts.port ?? DEFAULT_PORT),
    runs: Number(opts.runs ?? 5),
    secs: Number(opts.secs ?? 4),
    rttSecs: Number(opts['rtt-secs'] ?? 3),
    warmup: Number(opts.warmup ?? 0.5),
    sizes: opts.sizes ? String(opts.sizes).split(',').map(Number) : SIZES,
    configs: opts.configs ? String(opts.configs).split(',') : Object.keys(CONFIGS),
    kinds: opts.kinds ? String(opts.kinds).split(',') : ['tput', 'rtt'],
    check: !opts['no-smc-check'],
    sysctl: !opts['no-sysctl'],
  };
  if (!o.peer) throw new Error('run needs --peer HOST (the address of the host running `serve`)');
  for (const c of o.configs) if (!CONFIGS[c]) throw new Error(`unknown configuration ${c} (${Object.keys(CONFIGS).join(', ')})`);
  if (!o.check && o.sysctl) throw new Error('--no-smc-check is only for the smoke test (with --no-sysctl)');
  api();
  const ctl = await autocorkingControl(o.sysctl);
  // both ends at once: the command takes seconds to start under TCG
  const setBoth = (v) => Promise.all([ctl.apply(v), o.sysctl ? peerSysctl(o, v) : null]);
  const started = new Date();
  const points = [];
  const warmups = [];
  const t0 = performance.now();
  try {
    // Discarded points first: the first connection sets up the SMC-R link group, and V8 has not yet
    // compiled the write and echo paths (slow to warm up on an emulated CPU).
    await setBoth(CONFIGS[o.configs[0]].autocorking);
    for (const kind of o.kinds) warmups.push(await point(o, 0, o.configs[0], kind, 64));
    log(`warm-up done (${warmups.map((p) => `${p.kind} modes ${p.modeA}/${p.modeB}`).join(', ')})`);
    for (let run = 1; run <= o.runs; run++) {
      for (const configName of runOrder(o.configs, run)) {
        await setBoth(CONFIGS[configName].autocorking);
        for (const kind of o.kinds) {
          for (const size of o.sizes) {
            const p = await point(o, run, configName, kind, size);
            points.push(p);
            const what = kind === 'tput' ? `${(p.bytesPerSec / 1000).toFixed(2)} kB/s (${p.writes} writes)` : `p50 ${p.p50Ms.toFixed(2)} ms p99 ${p.p99Ms.toFixed(2)} ms (${p.samples} samples)`;
            log(`run ${run}/${o.runs} ${configName} ${kind} ${size} B: ${what} modes a=${p.modeA} b=${p.modeB}`);
            if (o.check && !p.smcr) log(`NOT SMC-R: ${JSON.stringify({ a: [p.modeA, p.modeAAfter], b: [p.modeB, p.modeBAfter] })}`);
          }
        }
      }
    }
  } finally {
    await ctl.restore().catch((e) => { log(`could not restore autocorking_size: ${e.message}`); process.exitCode = 1; });
  }
  const result = {
    issue: 13,
    date: started.toISOString(),
    elapsedSecs: Math.round((performance.now() - t0) / 1000),
    host: { node: process.version, kernel: os.release(), peerKernel: points[0] && points[0].peerKernel, cpus: os.cpus().length, hostname: os.hostname() },
    settings: { runs: o.runs, secs: o.secs, rttSecs: o.rttSecs, warmup: o.warmup, sizes: o.sizes, configs: o.configs, kinds: o.kinds, smcChecked: o.check, sysctl: o.sysctl, corkBatch: 64 },
    autocorkingOriginal: ctl.original,
    autocorkingRestored: o.sysctl ? await getAutocorking() : null,
    configs: Object.fromEntries(o.configs.map((c) => [c, CONFIGS[c]])),
    allSmcr: o.check ? points.every((p) => p.smcr) : null,
    points,
    warmupPoints: warmups,
  };
  return result;
}

// ======================================================================== smoke (CI, host)
async function smoke() {
  process.env.SMC_RUN_SOCKET_FAMILY = 'inet'; // test mode: the shim makes plain inet sockets
  const child = spawn(process.execPath, [__filename, 'serve', '--port', '0', '--host', '127.0.0.1', '--no-sysctl', '--no-smc-check'], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => { buf += d; const m = /"listening":(\d+)/.exec(buf); if (m) resolve(Number(m[1])); });
    child.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
  try {
    const result = await runMatrix({ peer: '127.0.0.1', port, runs: 1, secs: 0.2, 'rtt-secs': 0.1, warmup: 0.05, 'no-sysctl': true, 'no-smc-check': true });
    const want = result.settings.runs * SIZES.length * Object.keys(CONFIGS).length * 2;
    if (result.points.length !== want) throw new Error(`smoke: ${result.points.length} points, wanted ${want}`);
    for (const p of result.points) {
      if (p.kind === 'tput' && !(p.bytesPerSec > 0)) throw new Error(`smoke: no throughput at ${p.config} ${p.size} B`);
      if (p.kind === 'rtt' && !(p.samples > 0)) throw new Error(`smoke: no round trips at ${p.config} ${p.size} B`);
    }
    // the report generator, on a copy of the report and into a temporary chart
    const report = require('./report.cjs');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smcr-autocork-smoke-'));
    const md = path.join(dir, 'REPORT.md');
    fs.writeFileSync(md, '# report\n\n## Something else\ntext\n');
    report.writeAll(result, { report: md, chart: path.join(dir, 'chart.svg'), json: path.join(dir, 'r.json') });
    const text = fs.readFileSync(md, 'utf8');
    if (!text.includes(report.HEADING) || !text.includes('## Something else')) throw new Error('smoke: report section not written');
    if (!fs.readFileSync(path.join(dir, 'chart.svg'), 'utf8').startsWith('<svg')) throw new Error('smoke: no chart');
    fs.rmSync(dir, { recursive: true });
    console.log(report.renderTables(result));
    console.log(`smcr autocork smoke ok: ${result.points.length} points over plain TCP in ${result.elapsedSecs} s (not a measurement)`);
  } finally {
    child.kill();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const cmd = opts._[0];
  if (cmd === 'serve') return serve(opts);
  if (cmd === 'smoke') return smoke();
  if (cmd === 'run') {
    const result = await runMatrix(opts);
    const report = require('./report.cjs');
    if (opts.out) {
      fs.mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
      fs.writeFileSync(opts.out, `${JSON.stringify(result, null, 2)}\n`);
    }
    console.log(report.renderTables(result));
    if (result.allSmcr === false) {
      log(`${result.points.filter((p) => !p.smcr).length} points were not SMC-R on both ends`);
      process.exitCode = 1;
    }
    return;
  }
  console.error([
    'usage: node bench/smcr/autocork.cjs serve [--port 7300] [--host 0.0.0.0] [--ready-file F] [--stop-file F]',
    '       node bench/smcr/autocork.cjs run --peer HOST [--port 7300] [--runs 5] [--secs 4] [--rtt-secs 3] [--warmup 0.5]',
    '                                    [--sizes 1,64,1024,65536] [--configs autocork,off,cork64] [--kinds tput,rtt] [--out FILE]',
    '       node bench/smcr/autocork.cjs smoke      (CI: plain TCP on 127.0.0.1, no sysctl, no SMC check)',
  ].join('\n'));
  process.exit(2);
}

main().catch((e) => { log(e.stack || e.message); process.exit(1); });
