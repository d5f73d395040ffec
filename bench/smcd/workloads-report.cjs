'use strict';
// The real-workload section of bench/REPORT.md and its chart (bench/charts/workloads-smcd.svg), from the
// results bench/smcd/workloads.cjs wrote. Run on the host: node bench/smcd/workloads.cjs --report
const fs = require('node:fs');
const path = require('node:path');
const { clockText } = require('../lib/guest-clock.cjs');
const { svgChart } = require('../lib/chart.cjs');
const { replaceSection } = require('../lib/report-section.cjs');

const ROOT = path.join(__dirname, '..', '..');
const TITLE = { http: 'node:http', fastify: 'fastify', redis: 'redis-server + ioredis', grpc: 'gRPC (@grpc/grpc-js)', bulk: 'bulk (net)' };

const n = (x, d = 0) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const r3 = (x) => (x ? `${x.median.toFixed(3)} (${x.min.toFixed(3)}-${x.max.toFixed(3)})` : '-');
const unit = (p) => (p.workload === 'bulk' ? 'MiB/s' : p.name.includes('streaming') ? 'messages/s' : p.name.includes('pipeline') ? 'commands/s' : p.workload === 'redis' ? 'commands/s' : p.workload === 'grpc' ? 'calls/s' : 'requests/s');
const perOp = (p) => (p.workload === 'bulk' ? 'MiB' : p.name.includes('streaming') ? 'message' : p.name.includes('pipeline') ? 'command' : 'request');

/** Writes the section into `md` (created if missing) and the chart to `chart`. */
/** the table rows: each phase, and for bulk also its run with 1 MiB buffers (smcd-1m) in the SMC-D columns */
const rows = (r) => r.phases.flatMap((p) => {
  const m = p.medians['smcd-1m'];
  if (!m || !Number.isFinite(m.opsPerSec)) return [p];
  return [p, { ...p, name: `${p.name}, SMC-D with 1 MiB buffers (\`smc-run -t 1M -r 1M\`)`, medians: { ...p.medians, smcd: m }, smcdVsTcp: { opsPerSec: p.smcd1mVsTcp.opsPerSec }, aa: {} }];
});

function report(file, { md, chart }) {
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  const label = (p) => `${TITLE[p.workload]}: ${p.name}`;
  const lines = [
    '## Real workloads, SMC-D against TCP (SMC-D guest, `bash bench/smcd/in-guest.sh bench/smcd/workloads.cjs`)',
    '',
    `Method: kernel ${r.kernel} with loopback-ism, node ${r.node}, fastify ${r.versions.fastify}, @grpc/grpc-js ${r.versions.grpc}, ioredis ${r.versions.ioredis}, ${r.versions.redis ? r.versions.redis.replace(/ sha=.*/, '') : 'redis-server'}; net.smc.wmem/rmem ${r.sysctl.wmem}/${r.sysctl.rmem}. Clock: ${clockText(r)}. ${r.rounds} rounds; in each round every workload runs as TCP (plain programs), SMC-D (the same programs under \`smc-run\`: Node through the preload, redis-server through the launcher's LD_PRELOAD library) and SMC-D again (the A/A control), in an order rotated from round to round; ${r.warmSeconds} s warm-up then ${r.durSeconds} s measured per phase; server on vCPU 1, client on vCPU 0, over 127.0.0.1. Bulk also runs with 1 MiB socket buffers (\`smc-run -t 1M -r 1M\`, so SMC-D makes 1 MiB buffers), net.core.wmem_max/rmem_max raised to 1 MiB for the whole run (they cap only explicit SO_SNDBUF/SO_RCVBUF, which the other runs do not set). One unrecorded pass of every workload ran first (the first connections of a boot also create the SMC-D link group). Ratios are taken within a round and given as the median (min-max) over the rounds. Every run's ends were read through sock_diag while its connections were open: ${r.problems.length ? `**problems**: ${r.problems.join('; ')}` : 'every SMC-D run had both ends listed, all `smcd` with no fallback; every TCP run listed none'}.`,
    '',
    'Load: HTTP (node:http and fastify) is 4 keep-alive connections from a node:http Agent, each looping GET requests with 1 KiB responses; Redis is one ioredis connection doing GET and SET of 64-byte values back to back, then pipelines of 100 SETs; gRPC is 4 unary calls in flight (64-byte messages), then server-streaming calls of 256 messages of 1 KiB; bulk is one connection whose server writes 64 KiB or 1 MiB buffers the textbook way (write until false, wait for drain) to a client counting \'data\' events.',
    '',
    '| workload | unit | TCP | SMC-D | SMC-D/TCP rate | A/A rate | TCP p50 / p99 us | SMC-D p50 / p99 us | p50 SMC-D/TCP | A/A p50 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows(r).map((p) => `| ${label(p)} | ${unit(p)} | ${n(p.medians.tcp.opsPerSec, p.workload === 'bulk' ? 1 : 0)} | ${n(p.medians.smcd.opsPerSec, p.workload === 'bulk' ? 1 : 0)} | ${r3(p.smcdVsTcp.opsPerSec)} | ${r3(p.aa.opsPerSec)} | ${p.workload === 'bulk' ? '-' : `${n(p.medians.tcp.p50us)} / ${n(p.medians.tcp.p99us)}`} | ${p.workload === 'bulk' ? '-' : `${n(p.medians.smcd.p50us)} / ${n(p.medians.smcd.p99us)}`} | ${r3(p.smcdVsTcp.p50us)} | ${r3(p.aa.p50us)} |`),
    '',
    `![Real workloads, SMC-D/TCP](${path.relative(path.dirname(md), chart)})`,
    '',
    `### Where the time goes: CPU per operation, TCP against SMC-D (median over the rounds, ${r.clock === 'icount' ? 'virtual' : 'wall-clock'} microseconds)`,
    '',
    'User and system CPU time of the client (process.cpuUsage over the measured window) and of the server (/proc/PID/stat ticks at the window\'s marks), divided by the operations in the window. User time is Node\'s (or redis-server\'s) own work, the same code on both transports; system time is the kernel\'s, where SMC-D replaces the TCP stack.',
    '',
    '| workload | per | client user TCP / SMC-D | client sys TCP / SMC-D | server user TCP / SMC-D | server sys TCP / SMC-D | sys share of all CPU, TCP / SMC-D |',
    '|---|---|---|---|---|---|---|',
    ...rows(r).map((p) => {
      const t = p.medians.tcp;
      const s = p.medians.smcd;
      const share = (m) => { const x = (100 * (m.cpuSysUs + m.serverSysUs)) / (m.cpuUserUs + m.cpuSysUs + m.serverUserUs + m.serverSysUs); return Number.isFinite(x) ? `${x.toFixed(0)} %` : '-'; };
      return `| ${label(p)} | ${perOp(p)} | ${n(t.cpuUserUs, 1)} / ${n(s.cpuUserUs, 1)} | ${n(t.cpuSysUs, 1)} / ${n(s.cpuSysUs, 1)} | ${n(t.serverUserUs, 1)} / ${n(s.serverUserUs, 1)} | ${n(t.serverSysUs, 1)} / ${n(s.serverSysUs, 1)} | ${share(t)} / ${share(s)} |`;
    }),
    '',
    'The anchors from the SMC reference (loopback-ism, C programs, 8-core VM, 1 MB buffers): sockperf bandwidth +67 %, latency -44 %, nginx +34 %, redis GET +35 %, SET +38 %; what this run found against them is in docs/benchmarks.md.',
  ];
  fs.writeFileSync(md, replaceSection(fs.existsSync(md) ? fs.readFileSync(md, 'utf8') : '', 'workloads-smcd', lines.join('\n'), 'bench/smcd/workloads.cjs --report'));
  const xs = r.phases.map((p, i) => ({ x: i + 1, label: `${p.workload} ${i + 1}` }));
  const series = (name, pick) => ({ name, points: r.phases.map((p, i) => { const v = pick(p); return { x: i + 1, y: v ? v.median : NaN, lo: v ? v.min : undefined, hi: v ? v.max : undefined }; }) });
  fs.writeFileSync(chart, svgChart({
    title: `Real workloads, SMC-D/TCP within a round (${r.rounds} rounds, ${r.clock === 'icount' ? 'virtual time' : 'wall clock'})`,
    columns: 1, panelWidth: 760, panelHeight: 300,
    panels: [{ title: 'rate ratio (> 1: SMC-D faster); numbers as in the table', xLabel: 'workload phase (table row)', yLabel: 'SMC-D / TCP', xLog: false, xTicks: xs, series: [series('SMC-D / TCP', (p) => p.smcdVsTcp.opsPerSec), { ...series('A/A: SMC-D again / SMC-D', (p) => p.aa.opsPerSec), dashed: true }] }],
  }));
  console.log(`bench/REPORT.md: workloads-smcd section and ${path.relative(ROOT, chart)} from ${path.relative(ROOT, file)}`);
}

module.exports = { report };
