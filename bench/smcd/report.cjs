'use strict';
// Turns bench/results/smcd-runs.json (bench/smcd/run.cjs, in the guest) into
//   bench/results/smcd-summary.json   medians with min..max per point, ratios, targets
//   bench/REPORT.md                   the SMC-D section, between its markers (the rest is left alone)
//   bench/charts/smcd.svg             throughput and round trip vs message size, TCP vs SMC-D, Node and C
// Only pairs that passed the SMC checks count; rejected ones are listed in the report.
//   node bench/smcd/report.cjs [--in FILE] [--smoke]
// --smoke (bench:smoke) reads build/bench/smcd-smoke.json and writes only into build/bench/ (the report
// section is printed, REPORT.md and the committed results are left alone).
const fs = require('node:fs');
const path = require('node:path');
const { summarize, ratio, fmt, fmtRatio } = require('../lib/stats.cjs');
const { svgChart, sizeLabel } = require('../lib/chart.cjs');
const { replaceSection } = require('../lib/report-section.cjs');

const BENCH = path.join(__dirname, '..');
const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const SMOKE = process.argv.includes('--smoke');
const BUILD = path.join(BENCH, '..', 'build', 'bench');
const IN = path.resolve(arg('in', SMOKE ? path.join(BUILD, 'smcd-smoke.json') : path.join(BENCH, 'results', 'smcd-runs.json')));
const raw = JSON.parse(fs.readFileSync(IN, 'utf8'));
const SIZES = [1, 64, 1024, 16384, 65536];
const CONFIGS = ['tcp', 'smcd', 'smcd-1m-opt', 'smcd-1m-sysctl'];
const SMC_CONFIGS = CONFIGS.slice(1);
const LABEL = { tcp: 'TCP', smcd: 'SMC-D default buffers', 'smcd-1m-opt': 'SMC-D 1 MiB (`-t/-r`)', 'smcd-1m-sysctl': 'SMC-D 1 MiB (sysctl)' };
const SHORT = { tcp: 'TCP', smcd: 'SMC-D', 'smcd-1m-opt': 'SMC-D 1M -t/-r', 'smcd-1m-sysctl': 'SMC-D 1M sysctl' };

// ---------------------------------------------------------------- summaries

const ok = raw.pairs.filter((p) => p.ok);
const rejected = raw.pairs.filter((p) => !p.ok);
/** values of one metric over the accepted runs */
function values(impl, config, test, size, metric) {
  return ok.filter((p) => p.impl === impl && p.config === config)
    .flatMap((p) => p.results.filter((r) => r.test === test && (size === undefined || r.size === size)).map((r) => r[metric]));
}
const S = (impl, config, test, size, metric) => summarize(values(impl, config, test, size, metric));
const med = (impl, config, test, size, metric) => S(impl, config, test, size, metric).median;

const summary = { environment: raw.environment, runs: raw.runs, accepted: ok.length, rejected: rejected.length, points: [] };
for (const impl of ['node', 'c']) {
  for (const config of CONFIGS) {
    for (const size of SIZES) {
      summary.points.push({ impl, config, test: 'bulk', size, MBps: S(impl, config, 'bulk', size, 'MBps') });
      summary.points.push({ impl, config, test: 'pp', size, p50us: S(impl, config, 'pp', size, 'p50us'), p99us: S(impl, config, 'pp', size, 'p99us') });
    }
    summary.points.push({ impl, config, test: 'conn', perSec: S(impl, config, 'conn', undefined, 'perSec') });
    if (impl === 'node') {
      summary.points.push({ impl, config, test: 'bulk-plain', size: 65536, MBps: S(impl, config, 'bulk-plain', 65536, 'MBps') });
      summary.points.push({ impl, config, test: 'http', rps: S(impl, config, 'http', undefined, 'rps'), p99us: S(impl, config, 'http', undefined, 'p99us'), p50us: S(impl, config, 'http', undefined, 'p50us') });
    }
  }
}
// ratios: > 1 means SMC-D is better (throughput SMC/TCP, round trip TCP/SMC)
const bulkRatio = (impl, config, size) => ratio(med(impl, config, 'bulk', size, 'MBps'), med(impl, 'tcp', 'bulk', size, 'MBps'));
const rttRatio = (impl, config, size, m = 'p50us') => ratio(med(impl, 'tcp', 'pp', size, m), med(impl, config, 'pp', size, m));
// Node against C: throughput Node/C, round trip C/Node (1 = as fast as C)
const nodeVsC = (config, test, size) => (test === 'bulk'
  ? ratio(med('node', config, 'bulk', size, 'MBps'), med('c', config, 'bulk', size, 'MBps'))
  : ratio(med('c', config, 'pp', size, 'p50us'), med('node', config, 'pp', size, 'p50us')));
summary.ratios = {};
for (const config of SMC_CONFIGS) {
  summary.ratios[config] = {
    nodeBulk: Object.fromEntries(SIZES.map((s) => [s, bulkRatio('node', config, s)])),
    nodeRttP50: Object.fromEntries(SIZES.map((s) => [s, rttRatio('node', config, s)])),
    nodeRttP99: Object.fromEntries(SIZES.map((s) => [s, rttRatio('node', config, s, 'p99us')])),
    cBulk: Object.fromEntries(SIZES.map((s) => [s, bulkRatio('c', config, s)])),
    cRttP50: Object.fromEntries(SIZES.map((s) => [s, rttRatio('c', config, s)])),
    httpRps: ratio(med('node', config, 'http', undefined, 'rps'), med('node', 'tcp', 'http', undefined, 'rps')),
    nodeConn: ratio(med('node', config, 'conn', undefined, 'perSec'), med('node', 'tcp', 'conn', undefined, 'perSec')),
    cConn: ratio(med('c', config, 'conn', undefined, 'perSec'), med('c', 'tcp', 'conn', undefined, 'perSec')),
  };
}
summary.nodeVsC = Object.fromEntries(CONFIGS.map((c) => [c, { bulk: Object.fromEntries(SIZES.map((s) => [s, nodeVsC(c, 'bulk', s)])), rttP50: Object.fromEntries(SIZES.map((s) => [s, nodeVsC(c, 'pp', s)])) }]));

const small = [1, 64, 1024];
const minOf = (xs) => Math.min(...xs.filter(Number.isFinite));
const targets = [
  { what: 'Node round trip (p50), SMC-D default buffers vs TCP, <= 1 KiB', want: '>= 1.3x', value: minOf(small.map((s) => rttRatio('node', 'smcd', s))), min: 1.3, how: 'worst of 1 B, 64 B, 1 KiB' },
  { what: 'Node round trip (p50), SMC-D 1 MiB (-t/-r) vs TCP, <= 1 KiB', want: '>= 1.3x', value: minOf(small.map((s) => rttRatio('node', 'smcd-1m-opt', s))), min: 1.3, how: 'worst of 1 B, 64 B, 1 KiB' },
  { what: 'Node bulk 64 KiB, SMC-D 1 MiB (-t/-r) vs TCP', want: '>= 1.3x', value: bulkRatio('node', 'smcd-1m-opt', 65536), min: 1.3 },
  { what: 'Node bulk 64 KiB, SMC-D 1 MiB (sysctl) vs TCP', want: '>= 1.3x', value: bulkRatio('node', 'smcd-1m-sysctl', 65536), min: 1.3 },
  { what: 'Node bulk vs C, SMC-D 1 MiB (-t/-r), every size', want: '>= 0.5 (within 2x)', value: minOf(SIZES.map((s) => nodeVsC('smcd-1m-opt', 'bulk', s))), min: 0.5, how: 'worst size' },
  { what: 'Node bulk vs C, SMC-D default buffers, every size', want: '>= 0.5 (within 2x)', value: minOf(SIZES.map((s) => nodeVsC('smcd', 'bulk', s))), min: 0.5, how: 'worst size' },
];
for (const t of targets) t.met = Number.isFinite(t.value) && t.value >= t.min;
summary.targets = targets;

// ---------------------------------------------------------------- chart

const COLOR = { tcp: '#7f7f7f', smcd: '#1f77b4', 'smcd-1m-opt': '#d62728' };
function series(test, metric) {
  const out = [];
  for (const impl of ['node', 'c']) {
    for (const config of ['tcp', 'smcd', 'smcd-1m-opt']) {
      out.push({
        name: `${impl === 'node' ? 'Node' : 'C'} ${SHORT[config]}`, color: COLOR[config], dashed: impl === 'c',
        points: SIZES.map((x) => { const s = S(impl, config, test, x, metric); return { x, y: s.median, lo: s.min, hi: s.max }; }),
      });
    }
  }
  return out;
}
const env = raw.environment;
const chart = svgChart({
  title: `SMC-D (loopback-ism) vs TCP, Node and C: kernel ${env.kernel}, ${env.accel.toUpperCase()}, ${env.cpus} vCPUs, medians of ${raw.runs} runs (bars: min..max)`,
  columns: 3,
  panels: [
    { title: 'Bulk throughput (higher is better)', xLabel: 'message (write) size', yLabel: 'MB/s', yLog: true, series: series('bulk', 'MBps') },
    { title: 'Round trip p50 (lower is better)', xLabel: 'message size', yLabel: 'microseconds', yLog: true, series: series('pp', 'p50us') },
    { title: 'Round trip p99 (lower is better)', xLabel: 'message size', yLabel: 'microseconds', yLog: true, series: series('pp', 'p99us') },
  ],
});

// ---------------------------------------------------------------- report section

// digits by magnitude: 1 B bulk runs at a few hundredths of a MB/s under TCG, 64 KiB at hundreds
const auto = (v) => (!Number.isFinite(v) ? 1 : Math.abs(v) < 1 ? 3 : Math.abs(v) < 10 ? 2 : Math.abs(v) < 100 ? 1 : 0);
const f1 = (s, d) => { const k = d === undefined ? auto(s.median) : d; return s.n ? `${fmt(s.median, k)} [${fmt(s.min, k)}..${fmt(s.max, k)}]` : '-'; };
const lines = [];
const L = (s = '') => lines.push(s);
L('## SMC-D speed: Node over SMC-D against TCP and against C (`npm run bench`)');
L(`Inside the SMC-D guest: kernel ${env.kernel} with loopback-ism, ${env.accel === 'tcg' ? 'TCG emulation (no KVM)' : env.accel}, ${env.cpus} vCPUs, ` +
  `node ${env.node}; client pinned to vCPU ${env.pinned ? env.pinned.client : '?'}, server to vCPU ${env.pinned ? env.pinned.server : '?'} (taskset), over 127.0.0.1. ` +
  `${raw.runs} runs; in each run every configuration is measured once for Node and once for C, in an order rotated from run to run. ` +
  `Windows: ${env.timing.warm} s warm-up then ${env.timing.dur} s measured per point (HTTP: ${env.timing.httpWarm} s + ${env.timing.httpDur} s). ` +
  `Figures are medians [min..max] over the runs; under TCG absolute numbers mean little, ratios measured side by side do. Date ${env.date}.`);
L();
L(`Configurations: **TCP** (plain \`node\`, C with AF_INET), **SMC-D** (\`smc-run node\`, C with AF_SMC; default buffers, net.smc.wmem/rmem = ${env.sysctls ? `${env.sysctls.wmem}/${env.sysctls.rmem}` : '?'}), ` +
  '**SMC-D 1 MiB `-t/-r`** (`smc-run -t 1M -r 1M node`; C sets SO_SNDBUF/SO_RCVBUF to 1 MiB; both with net.core.wmem_max/rmem_max raised to 1 MiB for the run, ' +
  'without which the kernel caps the options at 208 KiB and SMC makes 256 KiB buffers, as smc-run warns) and **SMC-D 1 MiB sysctl** ' +
  '(`smc-run sysctl set net.smc.wmem=1048576 net.smc.rmem=1048576` for the run). Node: bench/smcd/node-bench.cjs; C: bench/c/smc-bench.c (blocking sockets, one write() per message).');
L();
L(`Every SMC point is checked (${ok.length} of ${raw.pairs.length} process pairs accepted): sock_diag (getSmcInfo) of every measured Node connection, both ends, must say ` +
  '`smcd` with no fallback and the configured buffer size (RMBE 65504 by default, 1048544 with 1 MiB), TCP ones `tcp`; for every pair (and every C client run) the namespace counters ' +
  'must show SMC-D handshakes and no fallback or handshake error (none for TCP).' + (rejected.length ? ' Rejected pairs (left out of every figure):' : ''));
for (const p of rejected) L(`- run ${p.run + 1} ${p.config} ${p.impl}: ${p.problems.slice(0, 4).join('; ')}${p.problems.length > 4 ? ` (+${p.problems.length - 4} more)` : ''}`);
L();
if (raw.pinningProbe) {
  const pp = (c, same) => raw.pinningProbe.find((o) => o.config === c && (o.clientCpu === o.serverCpu) === same);
  const txt = (o) => (o ? `${fmt(o.p50us, 0)} us` : '-');
  L(`Pinning probe (C ping-pong 1 B, p50, before the runs): TCP ${txt(pp('tcp', false))} with client and server on different vCPUs, ${txt(pp('tcp', true))} on one; ` +
    `SMC-D ${txt(pp('smcd', false))} and ${txt(pp('smcd', true))}. The matrix uses different vCPUs.`);
  summary.pinningProbe = raw.pinningProbe;
  L();
}
L('![SMC-D vs TCP, Node and C](charts/smcd.svg)');
L();
L('### Ratios (> 1: SMC-D better; bulk = SMC-D/TCP MB/s, round trip = TCP/SMC-D p50)');
L('| message | Node RTT default | Node RTT 1M -t/-r | Node RTT 1M sysctl | C RTT default | Node bulk default | Node bulk 1M -t/-r | Node bulk 1M sysctl | C bulk default | C bulk 1M -t/-r |');
L('|---|---|---|---|---|---|---|---|---|---|');
for (const s of SIZES) {
  L(`| ${sizeLabel(s)} | ${fmtRatio(rttRatio('node', 'smcd', s))} | ${fmtRatio(rttRatio('node', 'smcd-1m-opt', s))} | ${fmtRatio(rttRatio('node', 'smcd-1m-sysctl', s))} | ${fmtRatio(rttRatio('c', 'smcd', s))} | ` +
    `${fmtRatio(bulkRatio('node', 'smcd', s))} | ${fmtRatio(bulkRatio('node', 'smcd-1m-opt', s))} | ${fmtRatio(bulkRatio('node', 'smcd-1m-sysctl', s))} | ${fmtRatio(bulkRatio('c', 'smcd', s))} | ${fmtRatio(bulkRatio('c', 'smcd-1m-opt', s))} |`);
}
L();
L('### Targets (issue 12)');
L('| target | wanted | measured | |');
L('|---|---|---|---|');
for (const t of targets) L(`| ${t.what}${t.how ? ` (${t.how})` : ''} | ${t.want} | ${fmtRatio(t.value)} | ${t.met ? 'met' : '**missed**'} |`);
L();
L('### Node against C (bulk: Node/C MB/s; round trip: C/Node p50; 1 = as fast as C)');
L(`| message | ${CONFIGS.map((c) => `bulk ${SHORT[c]}`).join(' | ')} | ${CONFIGS.map((c) => `RTT ${SHORT[c]}`).join(' | ')} |`);
L(`|---|${CONFIGS.map(() => '---').join('|')}|${CONFIGS.map(() => '---').join('|')}|`);
for (const s of SIZES) L(`| ${sizeLabel(s)} | ${CONFIGS.map((c) => fmtRatio(nodeVsC(c, 'bulk', s))).join(' | ')} | ${CONFIGS.map((c) => fmtRatio(nodeVsC(c, 'pp', s))).join(' | ')} |`);
L();
for (const [title, test, metric, digits] of [['Bulk throughput, MB/s (higher is better)', 'bulk', 'MBps', undefined], ['Round trip p50, microseconds (lower is better)', 'pp', 'p50us', 0], ['Round trip p99, microseconds', 'pp', 'p99us', 0]]) {
  L(`### ${title}`);
  L(`| impl | message | ${CONFIGS.map((c) => LABEL[c]).join(' | ')} |`);
  L(`|---|---|${CONFIGS.map(() => '---').join('|')}|`);
  for (const impl of ['node', 'c']) for (const s of SIZES) L(`| ${impl === 'node' ? 'Node' : 'C'} | ${sizeLabel(s)} | ${CONFIGS.map((c) => f1(S(impl, c, test, s, metric), digits)).join(' | ')} |`);
  L();
}
L('### HTTP keep-alive and connection setup');
const h0 = ok.flatMap((p) => p.results).find((r) => r.test === 'http');
L(`HTTP/1.1 keep-alive: ${h0 ? h0.conns : '?'} connections from a Node load generator (http.Agent, each looping request after request), ` +
  `${h0 ? h0.bodyBytes : '?'}-byte responses from \`http.createServer\`; req/s and latency over the measured window after ${env.timing.httpWarm} s of warm-up. ` +
  'Connection setup: sequential connect + 8-byte request + 1-byte reply + close.');
L();
L(`| measure | ${CONFIGS.map((c) => LABEL[c]).join(' | ')} |`);
L(`|---|${CONFIGS.map(() => '---').join('|')}|`);
L(`| Node HTTP req/s | ${CONFIGS.map((c) => f1(S('node', c, 'http', undefined, 'rps'), 0)).join(' | ')} |`);
L(`| Node HTTP p50 us | ${CONFIGS.map((c) => f1(S('node', c, 'http', undefined, 'p50us'), 0)).join(' | ')} |`);
L(`| Node HTTP p99 us | ${CONFIGS.map((c) => f1(S('node', c, 'http', undefined, 'p99us'), 0)).join(' | ')} |`);
L(`| Node HTTP req/s, SMC-D/TCP | 1 | ${SMC_CONFIGS.map((c) => fmtRatio(summary.ratios[c].httpRps)).join(' | ')} |`);
L(`| Node connections/s | ${CONFIGS.map((c) => f1(S('node', c, 'conn', undefined, 'perSec'), 0)).join(' | ')} |`);
L(`| C connections/s | ${CONFIGS.map((c) => f1(S('c', c, 'conn', undefined, 'perSec'), 0)).join(' | ')} |`);
L(`| Node connections/s, SMC-D/TCP | 1 | ${SMC_CONFIGS.map((c) => fmtRatio(summary.ratios[c].nodeConn)).join(' | ')} |`);
L(`| C connections/s, SMC-D/TCP | 1 | ${SMC_CONFIGS.map((c) => fmtRatio(summary.ratios[c].cConn)).join(' | ')} |`);
L(`| Node bulk 64 KiB, textbook idiom ('data' events, write until false) MB/s | ${CONFIGS.map((c) => f1(S('node', c, 'bulk-plain', 65536, 'MBps'), 1)).join(' | ')} |`);
L(`| Node bulk 64 KiB, tuned (1 MiB onread buffer, corked writev) MB/s | ${CONFIGS.map((c) => f1(S('node', c, 'bulk', 65536, 'MBps'), 1)).join(' | ')} |`);
L();
// Node against C without TCG (host, TCP only: the host has no SMC): `node bench/smcd/run.cjs --host`
const hostFile = path.join(BENCH, 'results', 'smcd-host-tcp.json');
if (!SMOKE && fs.existsSync(hostFile)) {
  const h = JSON.parse(fs.readFileSync(hostFile, 'utf8'));
  const hv = (impl, test, size, m) => summarize(h.pairs.filter((p) => p.ok && p.impl === impl).flatMap((p) => p.results.filter((r) => r.test === test && (size === undefined || r.size === size)).map((r) => r[m])));
  summary.hostTcp = { environment: h.environment, runs: h.runs, points: [] };
  L(`### Node against C on the host, TCP (no TCG; \`node bench/smcd/run.cjs --host\`, ${h.runs} runs, node ${h.environment.node}, kernel ${h.environment.kernel}, ${h.environment.cpus} CPUs, ${h.environment.cpuModel})`);
  L('| message | Node bulk MB/s | C bulk MB/s | Node/C bulk | Node RTT p50 us | C RTT p50 us | C/Node RTT |');
  L('|---|---|---|---|---|---|---|');
  for (const size of SIZES) {
    const nb = hv('node', 'bulk', size, 'MBps'); const cb = hv('c', 'bulk', size, 'MBps');
    const np = hv('node', 'pp', size, 'p50us'); const cp = hv('c', 'pp', size, 'p50us');
    summary.hostTcp.points.push({ size, nodeMBps: nb, cMBps: cb, nodeP50us: np, cP50us: cp });
    L(`| ${sizeLabel(size)} | ${f1(nb)} | ${f1(cb)} | ${fmtRatio(ratio(nb.median, cb.median))} | ${f1(np)} | ${f1(cp)} | ${fmtRatio(ratio(cp.median, np.median))} |`);
  }
  const plain = hv('node', 'bulk-plain', 65536, 'MBps'); const tuned = hv('node', 'bulk', 65536, 'MBps');
  summary.hostTcp.plain64k = plain;
  L(`| 64 KiB, textbook idiom | ${f1(plain)} | | ${fmtRatio(ratio(plain.median, hv('c', 'bulk', 65536, 'MBps').median))} | | | |`);
  L();
  void tuned;
}
const findingsFile = path.join(__dirname, 'findings.md');
if (fs.existsSync(findingsFile)) {
  // hand-written interpretation of the latest full run (kept next to the generator, so a regenerated
  // report keeps it; re-read it after a new run)
  L(fs.readFileSync(findingsFile, 'utf8').trim());
  L();
}
L('The hook\'s own cost (per socket, bulk, start-up) is measured on the host: see "Hook overhead on the host" above (`npm run bench:overhead`).');
L(`Raw runs: \`bench/results/smcd-runs.json\`; summary: \`bench/results/smcd-summary.json\`. Regenerate with \`npm run bench\` (guest time of this run: ${Math.round(raw.guestSecs || 0)} s).`);
const section = lines.join('\n');

// ---------------------------------------------------------------- write

const chartPath = SMOKE ? path.join(BUILD, 'smcd-smoke.svg') : path.join(BENCH, 'charts', 'smcd.svg');
fs.mkdirSync(path.dirname(chartPath), { recursive: true });
fs.writeFileSync(chartPath, chart);
fs.writeFileSync(SMOKE ? path.join(BUILD, 'smcd-smoke-summary.json') : path.join(BENCH, 'results', 'smcd-summary.json'), JSON.stringify(summary, null, 1) + '\n');
if (!SMOKE) {
  const reportPath = path.join(BENCH, 'REPORT.md');
  fs.writeFileSync(reportPath, replaceSection(fs.readFileSync(reportPath, 'utf8'), 'smcd-bench', section, 'bench/smcd/report.cjs'));
}
console.log(section.split('\n').filter((l) => l.startsWith('|') || l.startsWith('###')).slice(0, 30).join('\n'));
