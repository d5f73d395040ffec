'use strict';
// Real workloads over SMC-D against TCP, in the SMC-D guest (bash bench/smcd/in-guest.sh
// bench/smcd/workloads.cjs boots it in virtual time): a node:http and a fastify server under keep-alive
// load from a Node client, redis-server with an ioredis client (GET, SET, pipelines), gRPC unary and
// server streaming (@grpc/grpc-js), and bulk transfer with 64 KiB and 1 MiB writes. Every workload runs
// three ways in each round, in an order rotated from round to round:
//   tcp      plain node / plain redis-server
//   smcd     the same programs under `smc-run` (Node through the preload, redis-server through the
//            launcher's LD_PRELOAD library)
//   smcd-aa  smcd again: the A/A control, read in the same units as the SMC-D/TCP ratio
//   smcd-1m  bulk only: `smc-run -t 1M -r 1M` (1 MiB socket buffers, so SMC-D makes 1 MiB buffers; with
//            net.core.wmem_max/rmem_max raised to 1 MiB for the run, as smc-run's warning says)
// One unrecorded pass of every workload comes first: the first connections of a boot also create the
// SMC-D link group, and a first run read low (node:http over TCP 826 against 1,048-1,050 requests/s).
// Server on vCPU 1, client on vCPU 0. Each client lists its server port's sockets through sock_diag
// while its connections are open: a tcp run must show none (plain TCP sockets), an SMC-D run at least
// one end each side, every one smcd without fallback; anything else is a problem and the run exits 3.
// The server's CPU time over each measured window is read from /proc/PID/stat (user and system ticks, in
// virtual time here) at the client's window marks, for the per-request profile.
//   node bench/smcd/workloads.cjs [--rounds N] [--dur S] [--warm S] [--only w1,w2] [--out FILE]
//   node bench/smcd/workloads.cjs --report   (host: rewrites its bench/REPORT.md section and chart)
//   node bench/smcd/workloads.cjs --smoke    (host, part of npm run bench:smoke: TCP only, tiny windows,
//                                             then the report, all under build/bench/)
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { startServer } = require('../lib/child-json.cjs');
const { guestClock, clockText } = require('../lib/guest-clock.cjs');
const { median, rotated } = require('../lib/rounds.cjs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const NODE_SIDE = path.join(__dirname, 'workload-node.cjs');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const SMOKE = process.argv.includes('--smoke');
const ROUNDS = SMOKE ? 1 : Number(arg('rounds', '3'));
const DUR = SMOKE ? '0.3' : arg('dur', '2');
const WARM = SMOKE ? '0.1' : arg('warm', '0.5');
const WORKLOADS = arg('only', 'http,fastify,redis,grpc,bulk').split(',');
const SMOKE_DIR = path.join(ROOT, 'build', 'bench');
const OUT = SMOKE ? path.join(SMOKE_DIR, 'workloads-smoke.json') : arg('out', path.join(ROOT, 'bench', 'results', 'workloads-smcd.json'));
const MODES = SMOKE ? ['tcp'] : ['tcp', 'smcd', 'smcd-aa', 'smcd-1m'];
const MODE_WORKLOADS = { 'smcd-1m': ['bulk'] };
const MiB = 1 << 20;
const { pin } = require('../lib/pin.cjs');
const { withCoreSysctls } = require('../lib/smc-sysctl.cjs');
const log = (...a) => console.error(`[workloads ${new Date().toISOString().slice(11, 19)}]`, ...a);
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

const base = { ...process.env };
delete base.NODE_OPTIONS;
delete base.LD_PRELOAD;
const wrap = (mode, argv) => (mode === 'tcp' ? argv : mode === 'smcd-1m' ? [BIN, '-t', '1M', '-r', '1M', ...argv] : [BIN, ...argv]);

/** user and system CPU of a process so far, in microseconds (/proc/PID/stat fields 14 and 15) */
function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) * TICK_US, sys: Number(f[12]) * TICK_US };
}

const freePort = () => new Promise((resolve, reject) => { const s = net.createServer(); s.once('error', reject); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });

async function startRedis(mode) {
  const port = await freePort();
  const argv = pin('1', wrap(mode, ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning']));
  const proc = spawn(argv[0], argv.slice(1), { env: base, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`redis-server under ${mode} exited ${proc.exitCode}`);
    const up = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.end(); r(true); }); s.once('error', () => r(false)); });
    if (up) return { proc, pid: proc.pid, port };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server under ${mode} did not listen on ${port}`);
}

/** Runs the client; samples the server's CPU at its window marks; resolves its result with the server's CPU per phase. */
function runWindowedClient(mode, workload, port, serverPid) {
  return new Promise((resolve, reject) => {
    const argv = pin('0', wrap(mode, [process.execPath, NODE_SIDE, 'client', '--workload', workload, '--port', String(port), '--dur', DUR, '--warm', WARM]));
    const p = spawn(argv[0], argv.slice(1), { env: base, stdio: ['ignore', 'pipe', 'inherit'] });
    const server = [];
    let start = null;
    let last = '';
    readline.createInterface({ input: p.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.mark === 'start') start = cpuOf(serverPid);
      else if (m.mark === 'end') { const c = cpuOf(serverPid); server.push({ user: c.user - start.user, sys: c.sys - start.sys }); } else last = m;
    });
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${workload} client under ${mode} exited ${code}`));
      resolve({ ...last, phases: last.phases.map((ph, i) => ({ ...ph, serverUserUs: server[i].user / ph.ops, serverSysUs: server[i].sys / ph.ops })) });
    });
  });
}

/** problems with what sock_diag listed on the server's port, for this mode */
function endsProblems(mode, ends) {
  // a kernel without SMC (the smoke's host) lists no SMC sockets at all: what a TCP run must see
  if (ends.error && !(mode === 'tcp' && ends.noSmc)) return [`sock_diag: ${ends.error}`];
  if (mode === 'tcp') return ends.server.length + ends.client.length ? [`tcp run lists SMC sockets: server ${ends.server}, client ${ends.client}`] : [];
  const bad = [...ends.server, ...ends.client].filter((m) => m !== 'smcd');
  if (!ends.server.length || !ends.client.length) return [`an end is missing from sock_diag: server ${ends.server.length}, client ${ends.client.length}`];
  return bad.length ? [`not SMC-D: ${bad.join(', ')}`] : [];
}

async function round(r, modes = rotated(MODES, r)) {
  const runs = [];
  for (const mode of modes) {
    const m = mode === 'smcd-aa' ? 'smcd' : mode;
    const workloads = WORKLOADS.filter((w) => !MODE_WORKLOADS[mode] || MODE_WORKLOADS[mode].includes(w));
    if (!workloads.length) continue;
    const node = workloads.some((w) => w !== 'redis') ? await startServer(pin('1', wrap(m, [process.execPath, NODE_SIDE, 'server'])), base) : null;
    const redis = workloads.includes('redis') ? await startRedis(m) : null;
    try {
      for (const w of workloads) {
        const port = w === 'redis' ? redis.port : node.info.ports[w];
        const pid = w === 'redis' ? redis.pid : node.info.pid;
        const out = await runWindowedClient(m, w, port, pid);
        const problems = endsProblems(m === 'smcd-1m' ? 'smcd' : m, out.ends).map((p) => `round ${r + 1} ${mode} ${w}: ${p}`);
        for (const ph of out.phases) runs.push({ round: r + 1, mode, workload: w, ...ph, ends: out.ends });
        log(`round ${r + 1} ${mode} ${w}: ${out.phases.map((ph) => `${ph.name} ${ph.opsPerSec.toFixed(1)}/s`).join('; ')}; ends server ${out.ends.server.join(',') || '-'} client ${out.ends.client.join(',') || '-'}${problems.length ? `; PROBLEMS ${problems.join('; ')}` : ''}`);
        runs[runs.length - 1].problems = problems;
      }
    } finally {
      node?.proc.kill('SIGTERM');
      redis?.proc.kill('SIGTERM');
    }
  }
  return runs;
}

const KEYS = ['opsPerSec', 'p50us', 'p99us', 'cpuUserUs', 'cpuSysUs', 'serverUserUs', 'serverSysUs'];

/** per (workload, phase): medians per mode and the within-round ratios smcd/tcp and smcd-aa/smcd */
function summarise(runs) {
  const phases = [...new Map(runs.map((x) => [`${x.workload}|${x.name}`, { workload: x.workload, name: x.name }])).values()];
  return phases.map(({ workload, name }) => {
    const of = (mode) => runs.filter((x) => x.workload === workload && x.name === name && x.mode === mode);
    const medians = Object.fromEntries(['tcp', 'smcd', 'smcd-aa', 'smcd-1m'].map((mode) => [mode, Object.fromEntries(KEYS.map((k) => [k, median(of(mode).map((x) => x[k]).filter((v) => v !== null))]))]));
    const ratio = (a, b, key) => {
      const xs = [];
      for (let r = 1; r <= ROUNDS; r++) {
        const x = of(a).find((y) => y.round === r);
        const y = of(b).find((z) => z.round === r);
        if (x && y && x[key] !== null) xs.push(x[key] / y[key]);
      }
      return xs.length ? { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), perRound: xs } : null;
    };
    return { workload, name, medians, smcdVsTcp: { opsPerSec: ratio('smcd', 'tcp', 'opsPerSec'), p50us: ratio('smcd', 'tcp', 'p50us'), p99us: ratio('smcd', 'tcp', 'p99us') }, aa: { opsPerSec: ratio('smcd-aa', 'smcd', 'opsPerSec'), p50us: ratio('smcd-aa', 'smcd', 'p50us') },
      smcd1mVsTcp: { opsPerSec: ratio('smcd-1m', 'tcp', 'opsPerSec') } };
  });
}

const reportTo = () => (SMOKE
  ? { md: path.join(SMOKE_DIR, 'workloads-smoke.md'), chart: path.join(SMOKE_DIR, 'workloads-smoke.svg') }
  : { md: path.join(ROOT, 'bench', 'REPORT.md'), chart: path.join(ROOT, 'bench', 'charts', 'workloads-smcd.svg') });
if (process.argv.includes('--report')) {
  require('./workloads-report.cjs').report(OUT, reportTo());
  return;
}

(async () => {
  const runs = [];
  if (!SMOKE) {
    const warm = await round(0, [MODES[0]]);
    log(`warm-up pass (${MODES[0]}, not recorded): ${warm.map((x) => `${x.workload} ${x.opsPerSec.toFixed(0)}/s`).join(', ')}`);
  }
  // net.core.wmem_max/rmem_max at 1 MiB for the smcd-1m mode's -t/-r (the smoke changes nothing on the host)
  const rounds = async () => { for (let r = 0; r < ROUNDS; r++) runs.push(...(await round(r))); };
  await (SMOKE ? rounds() : withCoreSysctls({ wmem_max: MiB, rmem_max: MiB }, rounds));
  const redisVersion = (() => { try { return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim(); } catch { return null; } })();
  const result = {
    kernel: os.release(), clock: guestClock().id, node: process.version, rounds: ROUNDS, durSeconds: Number(DUR), warmSeconds: Number(WARM),
    versions: { fastify: require('fastify/package.json').version, grpc: require('@grpc/grpc-js/package.json').version, ioredis: require('ioredis/package.json').version, redis: redisVersion },
    sysctl: Object.fromEntries(['wmem', 'rmem', 'autocorking_size'].map((k) => { try { return [k, fs.readFileSync(`/proc/sys/net/smc/${k}`, 'utf8').trim()]; } catch { return [k, null]; } })),
    runs: runs.map(({ ends, ...x }) => x), phases: summarise(runs), problems: runs.flatMap((x) => x.problems || []),
  };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  log(`${result.runs.length} measures, ${result.problems.length} problems; results in ${path.relative(ROOT, OUT)}`);
  process.exitCode = result.problems.length ? 3 : 0;
  if (SMOKE) {
    if (result.problems.length || result.runs.some((x) => !(x.opsPerSec > 0))) throw new Error(`smoke: ${JSON.stringify(result.problems)} ${JSON.stringify(result.runs.map((x) => [x.workload, x.name, x.opsPerSec]))}`);
    require('./workloads-report.cjs').report(OUT, reportTo());
  }
})().catch((e) => { console.error(e); process.exitCode = 1; });
