'use strict';
// The SMC-D benchmark matrix, run inside the SMC-D guest (bench/smcd/bench.sh boots it) or, with
// --smoke, on any host in test mode (SMC_RUN_SOCKET_FAMILY=inet: every socket is plain TCP and is
// checked to be so). For each run, every (config, impl) pair is measured once, in an order rotated
// from run to run so that drift hits all of them alike:
//   config  tcp            Node without the launcher / C with AF_INET
//           smcd           `smc-run node ...` / C with AF_SMC, default SMC buffers (net.smc.wmem/rmem)
//           smcd-1m-opt    `smc-run -t 1M -r 1M node ...` / C with SO_SNDBUF/SO_RCVBUF = 1 MiB
//           smcd-1m-sysctl `smc-run sysctl set net.smc.wmem=1048576 net.smc.rmem=1048576` for the run
//   impl    node (bench/smcd/node-bench.cjs) and c (bench/c/smc-bench.c, built into build/bench/)
// Client on CPU 0, server on CPU 1 (taskset). A pair is accepted only if sock_diag shows every measured
// connection in the expected mode (smcd without fallback, with the expected buffer size; or tcp) and the
// namespace's SMC counters moved as they should (no fallback, no handshake error, SMC-D handshakes for
// SMC, none for TCP); a rejected pair is kept in the output with its problems and left out of the report.
//
//   node bench/smcd/run.cjs [--runs N] [--quick] [--smoke] [--host] [--impl node,c] [--configs a,b] [--out FILE]
// Writes FILE (default bench/results/smcd-runs.json) after every pair, so a cut-short run keeps its data.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { withCoreSysctls, withSmcSysctls } = require('../lib/smc-sysctl.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const NODE_BENCH = path.join(__dirname, 'node-bench.cjs');
const C_BENCH = path.join(ROOT, 'build', 'bench', 'smc-bench');
const api = require(path.join(ROOT, 'dist', 'index.js'));

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const flag = (name) => process.argv.includes(`--${name}`);
const smoke = flag('smoke');
const quick = flag('quick');
// --host: the full windows on the host in test mode (plain TCP, real CPU): Node against C without TCG,
// which slows V8's JIT code far more than C's syscalls
const host = flag('host');
const RUNS = Number(arg('runs', smoke ? 1 : 5));
const IMPLS = arg('impl', 'node,c').split(',');
const CONFIGS = arg('configs', smoke ? 'tcp,smcd' : host ? 'tcp' : 'tcp,smcd,smcd-1m-opt,smcd-1m-sysctl').split(',');
// smoke output goes to build/ (never committed): it must not replace the measured results
const OUT = path.resolve(arg('out', smoke ? path.join(ROOT, 'build', 'bench', 'smcd-smoke.json') : path.join(ROOT, 'bench', 'results', host ? 'smcd-host-tcp.json' : 'smcd-runs.json')));
const SIZES = [1, 64, 1024, 16384, 65536];
const MiB = 1 << 20;
// seconds: warm-up and measured window per test; HTTP gets a longer warm-up (V8 tiers up the whole
// http parser/serializer path, which takes seconds under TCG)
const T = smoke ? { warm: 0.05, dur: 0.15, httpWarm: 0.2, httpDur: 0.3, prewarm: 0 }
  : quick ? { warm: 0.3, dur: 0.7, httpWarm: 1, httpDur: 1.5, prewarm: 1 }
  : { warm: 0.5, dur: 1.5, httpWarm: 2.5, httpDur: 3, prewarm: 2 };
const CPU = { client: '0', server: os.cpus().length > 1 ? '1' : '0' };
const { hasTaskset, pin } = require('../lib/pin.cjs');

// In smoke mode the launcher's sockets are plain inet ones, so every point must be tcp.
const testMode = smoke || host || process.env.SMC_RUN_SOCKET_FAMILY === 'inet';
const CONFIG = {
  tcp: { smc: false, launcher: [], cFlags: ['-f', 'inet'], rmbe: null },
  smcd: { smc: true, launcher: [], cFlags: ['-f', 'smc'], rmbe: 'default' },
  // SO_SNDBUF/SO_RCVBUF are capped at net.core.wmem_max/rmem_max (212992 by default: SMC would make
  // 256 KiB buffers, as smc-run's warning says), so this config raises the caps, as a user would
  'smcd-1m-opt': { smc: true, launcher: ['-t', '1M', '-r', '1M'], cFlags: ['-f', 'smc', '-b', String(MiB)], rmbe: '1m', core: { wmem_max: MiB, rmem_max: MiB } },
  'smcd-1m-sysctl': { smc: true, launcher: [], cFlags: ['-f', 'smc'], rmbe: '1m', sysctl: { 'net.smc.wmem': MiB, 'net.smc.rmem': MiB } },
};

const log = (...a) => console.error(`[smcd-bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

function baseEnv(cfg) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the TCP baseline is plain node; the launcher adds the shim itself
  if (testMode) env.SMC_RUN_SOCKET_FAMILY = 'inet';
  else delete env.SMC_RUN_SOCKET_FAMILY;
  if (!cfg.smc) delete env.SMC_RUN_SOCKET_FAMILY;
  return env;
}

/** Starts a server and resolves with it and the JSON of its first stdout line (the ports). */
function startServer(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const rl = readline.createInterface({ input: p.stdout });
    rl.once('line', (line) => { try { resolve({ proc: p, info: JSON.parse(line) }); } catch (e) { reject(new Error(`server said ${line}`)); } });
    p.once('exit', (code) => reject(new Error(`server ${argv.join(' ')} exited ${code} before listening`)));
    p.once('error', reject);
  });
}

function runClient(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.once('error', reject);
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}`));
      try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { reject(new Error(`client said ${out}`)); }
    });
  });
}

const waitExit = (p) => new Promise((r) => { if (p.exitCode !== null || p.signalCode !== null) r(); else p.once('exit', r); });

/** The namespace's SMC counters that tell what kind of connections happened (null without SMC). */
function counters() {
  if (testMode) return null;
  const s = api.getSmcSystemStats();
  const c = s.smcd.connections;
  return {
    smcdClient: c.clientV1 + c.clientV2,
    smcdServer: c.serverV1 + c.serverV2,
    smcr: s.smcr.connections.clientV1 + s.smcr.connections.clientV2,
    fallbacks: s.fallbacks.client.total + s.fallbacks.server.total,
    hsErrors: s.handshakeErrors.client + s.handshakeErrors.server,
    rxBuf: { ...s.smcd.bufferSize.rx },
    fallbackReasons: [...s.fallbacks.client.reasons, ...s.fallbacks.server.reasons].map((r) => `${r.name}:${r.count}`),
  };
}

function counterDelta(a, b) {
  if (!a || !b) return null;
  const rxBuf = {};
  for (const k of Object.keys(b.rxBuf)) if (b.rxBuf[k] - a.rxBuf[k]) rxBuf[k] = b.rxBuf[k] - a.rxBuf[k];
  return { smcdClient: b.smcdClient - a.smcdClient, smcdServer: b.smcdServer - a.smcdServer, smcr: b.smcr - a.smcr, fallbacks: b.fallbacks - a.fallbacks, hsErrors: b.hsErrors - a.hsErrors, rxBuf, fallbackReasonsAfter: b.fallbackReasons };
}

/** Problems with the counters of a pair that made `conns` SMC connections (undefined: unknown count). */
function counterProblems(cfg, d, conns) {
  if (!d) return [];
  const p = [];
  if (d.fallbacks) p.push(`${d.fallbacks} fallback(s) to TCP in the namespace counters (${d.fallbackReasonsAfter.join(', ')})`);
  if (d.hsErrors) p.push(`${d.hsErrors} SMC handshake error(s)`);
  if (d.smcr) p.push(`${d.smcr} SMC-R connection(s) where SMC-D was expected`);
  if (cfg.smc && conns !== undefined && d.smcdClient !== conns) p.push(`expected ${conns} SMC-D client handshakes, counters say ${d.smcdClient}`);
  if (cfg.smc && conns === undefined && d.smcdClient === 0) p.push('no SMC-D handshake in the counters');
  if (!cfg.smc && (d.smcdClient || d.smcdServer)) p.push(`TCP baseline made ${d.smcdClient} SMC-D connection(s)`);
  // the SMC-D receive buffers (DMBs) created must have the configured size
  const buckets = Object.keys(d.rxBuf);
  if (cfg.rmbe === '1m' && buckets.some((k) => k !== '1024K')) p.push(`receive buffers not 1 MiB: ${JSON.stringify(d.rxBuf)}`);
  if (cfg.rmbe === 'default' && buckets.some((k) => k === '1024K' || k === '>1024K')) p.push(`default config made big buffers: ${JSON.stringify(d.rxBuf)}`);
  return p;
}

/** Problems with the sock_diag view of each measured connection (Node side: client and server). */
function checkProblems(cfg, checks) {
  const want = cfg.smc && !testMode ? 'smcd' : 'tcp';
  const p = [];
  for (const c of checks) {
    const what = `${c.side} ${c.test}${c.size ? ` ${c.size}` : ''}`;
    if (c.mode !== want) p.push(`${what}: mode ${c.mode}${c.fallback ? ` (${c.fallback})` : ''}${c.error ? ` ${c.error}` : ''}, expected ${want}`);
    else if (want === 'smcd') {
      if (c.fallback) p.push(`${what}: fallback ${c.fallback}`);
      const big = c.rmbe >= MiB - 64 && c.peerRmbe >= MiB - 64;
      if (cfg.rmbe === '1m' && !big) p.push(`${what}: rmbe ${c.rmbe}/${c.peerRmbe}, expected 1 MiB`);
      if (cfg.rmbe === 'default' && c.rmbe >= MiB - 64) p.push(`${what}: rmbe ${c.rmbe} with default buffers`);
    }
  }
  return p;
}

async function withSysctl(cfg, fn) {
  if (cfg.core && !testMode) return withCoreSysctls(cfg.core, () => withSysctl({ ...cfg, core: undefined }, fn));
  if (!cfg.sysctl || testMode) return fn();
  return withSmcSysctls(cfg.sysctl, fn);
}

async function runNode(cfg) {
  const env = baseEnv(cfg);
  const nodeCmd = (role) => (cfg.smc ? [process.execPath, BIN, ...cfg.launcher, process.execPath, NODE_BENCH, role] : [process.execPath, NODE_BENCH, role]);
  const c0 = counters();
  const { proc, info } = await startServer(pin(CPU.server, nodeCmd('server')), env);
  try {
    const args = ['--port', String(info.port), '--http-port', String(info.httpPort), '--dur', String(T.dur), '--warm', String(T.warm), '--http-warm', String(T.httpWarm), '--http-dur', String(T.httpDur), '--prewarm', String(T.prewarm)];
    const out = await runClient(pin(CPU.client, [...nodeCmd('client'), ...args]), env);
    await waitExit(proc);
    const delta = counterDelta(c0, counters());
    const checks = [...out.checks.map((c) => ({ side: 'client', ...c })), ...out.server.checks.map((c) => ({ side: 'server', ...c }))];
    return { results: out.results, checks, counters: delta, problems: [...checkProblems(cfg, checks), ...counterProblems(cfg, delta, undefined)] };
  } finally {
    if (proc.exitCode === null) proc.kill();
  }
}

async function runC(config) {
  // test mode has no AF_SMC: the C side then runs its TCP path for every config
  const cfg = testMode ? { ...config, cFlags: config.cFlags.map((f) => (f === 'smc' ? 'inet' : f)) } : config;
  const env = baseEnv(cfg);
  const { proc, info } = await startServer(pin(CPU.server, [C_BENCH, 'server', ...cfg.cFlags]), env);
  const results = [];
  const problems = [];
  const counterLog = [];
  try {
    const tests = [...SIZES.map((s) => ['bulk', s]), ...SIZES.map((s) => ['pp', s]), ['conn', 1]];
    for (const [mode, size] of tests) {
      const c0 = counters();
      const r = await runClient(pin(CPU.client, [C_BENCH, 'client', ...cfg.cFlags, '-p', String(info.port), '-m', mode, '-s', String(size), '-d', String(T.dur), '-w', String(T.warm)]), env);
      const d = counterDelta(c0, counters());
      // the C side has no sock_diag code: the namespace counters check it (nothing else uses SMC here)
      const conns = mode === 'conn' ? r.connections : 1;
      problems.push(...counterProblems(cfg, d, conns).map((p) => `${mode} ${size}: ${p}`));
      counterLog.push({ mode, size, counters: d });
      results.push(mode === 'bulk' ? { test: 'bulk', size, bytes: r.bytes, secs: r.secs, MBps: r.MBps }
        : mode === 'pp' ? { test: 'pp', size, n: r.n, secs: r.secs, p50us: r.p50us, p99us: r.p99us }
        : { test: 'conn', n: r.n, connections: r.connections, secs: r.secs, perSec: r.perSec });
    }
    execFileSync(C_BENCH, ['quit', ...cfg.cFlags, '-p', String(info.port)]);
    await waitExit(proc);
  } finally {
    if (proc.exitCode === null) proc.kill();
  }
  return { results, counters: counterLog, problems };
}

function environment() {
  const cpu = os.cpus()[0];
  return {
    kernel: os.release(), node: process.version, cpus: os.cpus().length, cpuModel: cpu ? cpu.model : null,
    accel: process.env.SMC_BENCH_ACCEL || (smoke || host ? 'host' : 'unknown'), smoke, quick, host, pinned: hasTaskset ? CPU : null,
    timing: T, date: new Date().toISOString().slice(0, 10),
    sysctls: testMode ? null : Object.fromEntries(api.readSmcSysctls(['net.smc.wmem', 'net.smc.rmem', 'net.smc.autocorking_size']).map((s) => [s.name, s.value])),
  };
}

/**
 * Where client and server run matters to a loopback round trip (a wake-up on the same CPU, or an IPI
 * to the other vCPU, which under TCG is a host thread that may be descheduled): C ping-pong 1 B with
 * both on one vCPU and on different ones, for TCP and SMC, so the report can say what pinning costs.
 */
async function pinningProbe() {
  const out = [];
  for (const [name, cfg] of [['tcp', CONFIG.tcp], ['smcd', CONFIG.smcd]]) {
    for (const cpus of [[CPU.client, CPU.server], [CPU.client, CPU.client]]) {
      const flags = testMode ? ['-f', 'inet'] : cfg.cFlags;
      const { proc, info } = await startServer(pin(cpus[1], [C_BENCH, 'server', ...flags]), baseEnv(cfg));
      try {
        const r = await runClient(pin(cpus[0], [C_BENCH, 'client', ...flags, '-p', String(info.port), '-m', 'pp', '-s', '1', '-d', String(T.dur), '-w', String(T.warm)]), baseEnv(cfg));
        out.push({ config: name, clientCpu: cpus[0], serverCpu: cpus[1], p50us: r.p50us, p99us: r.p99us });
        execFileSync(C_BENCH, ['quit', ...flags, '-p', String(info.port)]);
        await waitExit(proc);
      } finally {
        if (proc.exitCode === null) proc.kill();
      }
    }
  }
  log(`pinning probe (C pp 1 B p50 us): ${out.map((o) => `${o.config} cpu${o.clientCpu}/cpu${o.serverCpu} ${o.p50us}`).join(', ')}`);
  return out;
}

async function main() {
  if (IMPLS.includes('c') && !fs.existsSync(C_BENCH)) throw new Error(`${C_BENCH} missing: compile bench/c/smc-bench.c (bench/smcd/bench.sh does)`);
  const out = { environment: environment(), runs: RUNS, configs: CONFIGS, impls: IMPLS, pairs: [] };
  if (IMPLS.includes('c') && hasTaskset) out.pinningProbe = await pinningProbe();
  const t0 = Date.now();
  const order = [];
  for (const config of CONFIGS) for (const impl of IMPLS) order.push({ config, impl });
  for (let run = 0; run < RUNS; run++) {
    // rotate the order from run to run so that no config always follows the same neighbour
    const k = (run * 3) % order.length;
    for (const { config, impl } of [...order.slice(k), ...order.slice(0, k)]) {
      const cfg = CONFIG[config];
      const started = Date.now();
      let rec;
      try {
        rec = await withSysctl(cfg, () => (impl === 'node' ? runNode(cfg) : runC(cfg)));
      } catch (e) {
        rec = { results: [], problems: [`failed: ${e.message}`] };
      }
      const pair = { run, config, impl, secs: (Date.now() - started) / 1000, ok: rec.problems.length === 0, ...rec };
      out.pairs.push(pair);
      log(`run ${run + 1}/${RUNS} ${config} ${impl}: ${pair.secs.toFixed(1)} s${pair.ok ? '' : ` REJECTED: ${rec.problems.slice(0, 3).join('; ')}`}`);
      out.guestSecs = (Date.now() - t0) / 1000;
      fs.mkdirSync(path.dirname(OUT), { recursive: true });
      fs.writeFileSync(OUT, JSON.stringify(out, null, 1) + '\n');
    }
  }
  const bad = out.pairs.filter((p) => !p.ok).length;
  log(`done in ${out.guestSecs.toFixed(0)} s: ${out.pairs.length} pairs, ${bad} rejected; wrote ${path.relative(process.cwd(), OUT)}`);
  process.exitCode = bad ? 3 : 0;
}

main().catch((e) => { console.error(e); process.exit(1); });
