'use strict';
// Turns bench/results/smcr-autocork.json (written by `autocork.cjs run --out`) into the section
// "## Autocorking and TCP_CORK on SMC-R" of bench/REPORT.md and the chart bench/charts/smcr-autocork.svg.
//   node bench/smcr/report.cjs [--in FILE.json] [--report FILE.md] [--chart FILE.svg]
// Only that section is replaced (between its smcr-autocork markers, ../lib/report-section.cjs), so the
// other sections of the report stay as they are. The same tables are what `autocork.cjs run` prints.
// Ratios are taken per run (the configurations of one run ran minutes apart, the runs further apart) and
// then summarized, so a slow phase of the host shows up as a wide range instead of a biased median.
const fs = require('node:fs');
const path = require('node:path');
const st = require('../lib/stats.cjs');
const { svgChart, sizeLabel } = require('../lib/chart.cjs');
const { replaceSection } = require('../lib/report-section.cjs');

const BENCH = path.join(__dirname, '..');
const HEADING = '## Autocorking and TCP_CORK on SMC-R';
const SECTION = 'smcr-autocork'; // its markers in REPORT.md
const DEFAULTS = {
  in: path.join(BENCH, 'results', 'smcr-autocork.json'),
  report: path.join(BENCH, 'REPORT.md'),
  chart: path.join(BENCH, 'charts', 'smcr-autocork.svg'),
};
const NAMES = { autocork: 'autocorking 64 KiB', off: 'autocorking off', cork64: 'off + withTcpCork x64' };
const COLORS = { autocork: '#1f77b4', off: '#d62728', cork64: '#2ca02c' };

/** Significant digits that suit the value: 0.0123, 1.23, 12.3, 123, 1,234. */
function num(x) {
  if (!Number.isFinite(x)) return '-';
  const a = Math.abs(x);
  return st.fmt(x, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}
const range = (s) => (s.n === 0 ? '-' : `${num(s.median)} (${num(s.min)}..${num(s.max)})`);
const ratioText = (s) => (s.n === 0 ? '-' : `${st.fmtRatio(s.median)} (${st.fmtRatio(s.min)}..${st.fmtRatio(s.max)})`);

/** Per config, kind and size: the runs' values; per pair of configs: the per-run ratios. */
function summarize(result) {
  const pts = result.points.filter((p) => p.smcr !== false); // a point that was not SMC-R is not data
  const value = (p) => (p.kind === 'tput' ? p.bytesPerSec / 1000 : p.p50Ms);
  const of = (config, kind, size, f = value) => pts.filter((p) => p.config === config && p.kind === kind && p.size === size).map((p) => ({ run: p.run, v: f(p) }));
  const runRatios = (a, b, kind, size, f = value) => {
    const bs = new Map(of(b, kind, size, f).map((x) => [x.run, x.v]));
    return of(a, kind, size, f).filter((x) => bs.has(x.run)).map((x) => st.ratio(x.v, bs.get(x.run)));
  };
  const rows = result.settings.sizes.map((size) => {
    const row = { size, tput: {}, p50: {}, p99: {}, ratio: {} };
    for (const c of result.settings.configs) {
      row.tput[c] = st.summarize(of(c, 'tput', size).map((x) => x.v));
      row.p50[c] = st.summarize(of(c, 'rtt', size).map((x) => x.v));
      row.p99[c] = st.summarize(of(c, 'rtt', size, (p) => p.p99Ms).map((x) => x.v));
    }
    row.ratio.tputAutocork = st.summarize(runRatios('autocork', 'off', 'tput', size));
    row.ratio.tputCork = st.summarize(runRatios('cork64', 'off', 'tput', size));
    row.ratio.rttAutocork = st.summarize(runRatios('autocork', 'off', 'rtt', size));
    row.ratio.rttCork = st.summarize(runRatios('cork64', 'off', 'rtt', size));
    return row;
  });
  return { rows, dropped: result.points.length - pts.length };
}

function renderTables(result) {
  const { rows, dropped } = summarize(result);
  const n = result.settings.runs;
  const out = [];
  out.push(`Throughput at the receiver, kB/s: median (min..max) of ${n} runs; ratios per run, then median (min..max)`);
  out.push('');
  out.push(`| message | ${NAMES.autocork} | ${NAMES.off} | ${NAMES.cork64} | autocork/off | cork64/off |`);
  out.push('|---|---|---|---|---|---|');
  for (const r of rows) {
    out.push(`| ${sizeLabel(r.size)} | ${range(r.tput.autocork)} | ${range(r.tput.off)} | ${range(r.tput.cork64)} | ${ratioText(r.ratio.tputAutocork)} | ${ratioText(r.ratio.tputCork)} |`);
  }
  out.push('');
  out.push(`Round trip (ping-pong of one message), ms: p50 median (min..max) of ${n} runs, RTT ratio of the p50s per run; p99 medians`);
  out.push('');
  out.push(`| message | p50 ${NAMES.autocork} | p50 ${NAMES.off} | p50 ${NAMES.cork64} | RTT ratio autocork/off | RTT ratio cork64/off | p99 autocork / off / cork64 |`);
  out.push('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const p99 = ['autocork', 'off', 'cork64'].map((c) => num(r.p99[c].median)).join(' / ');
    out.push(`| ${sizeLabel(r.size)} | ${range(r.p50.autocork)} | ${range(r.p50.off)} | ${range(r.p50.cork64)} | ${ratioText(r.ratio.rttAutocork)} | ${ratioText(r.ratio.rttCork)} | ${p99} |`);
  }
  if (dropped) out.push('', `${dropped} points were left out: not SMC-R on both ends.`);
  return out.join('\n');
}

/** The verdicts on the issue's targets, computed rather than written by hand so they follow the data. */
function findings(result) {
  const { rows } = summarize(result);
  const small = rows.filter((r) => r.size <= 64);
  const minSmall = Math.min(...small.map((r) => r.ratio.tputAutocork.min));
  const medSmall = small.map((r) => `${st.fmtRatio(r.ratio.tputAutocork.median)}x at ${sizeLabel(r.size)}`).join(', ');
  const out = [];
  out.push(`- Target "autocorking >= 3x at <= 64 B": ${Number.isFinite(minSmall) && minSmall >= 3 ? 'met' : 'NOT met'} ` +
    `(medians ${medSmall}; lowest single run ${st.fmtRatio(minSmall)}x).`);
  // "within noise": the RTT ratio (per run, median) differs from 1 by no more than the run-to-run spread of
  // the p50 with autocorking off, or 10%, whichever is larger (p99s vary far more than that here)
  const tolOf = (r) => Math.max(0.1, r.p50.off.n > 1 ? (r.p50.off.max - r.p50.off.min) / r.p50.off.median : 0);
  const lat = rows.map((r) => ({ r, tol: tolOf(r), inside: Math.abs(r.ratio.rttAutocork.median - 1) <= tolOf(r) }));
  const outside = lat.filter((x) => !x.inside);
  out.push(`- Latency with autocorking: RTT ratio autocork/off ${rows.map((r) => `${st.fmtRatio(r.ratio.rttAutocork.median)} at ${sizeLabel(r.size)}`).join(', ')}; ` +
    `unchanged within noise (|ratio - 1| at most the spread of the runs without autocorking, or 10%) for ${lat.length - outside.length} of ${lat.length} sizes` +
    (outside.length ? ` (not: ${outside.map((x) => sizeLabel(x.r.size)).join(', ')})` : '') + '.');
  out.push(`- withTcpCork around each request: RTT ratio cork64/off ${rows.map((r) => `${st.fmtRatio(r.ratio.rttCork.median)} at ${sizeLabel(r.size)}`).join(', ')} ` +
    '(two setsockopt calls and a promise per request; a corked request leaves only once Node has handed all of it to the kernel).');
  const big = rows.find((r) => r.size === 65536);
  if (big) {
    const includesOne = (s) => s.n > 0 && s.min <= 1 && s.max >= 1;
    const say = (s) => `${st.fmtRatio(s.median)} (${st.fmtRatio(s.min)}..${st.fmtRatio(s.max)})${includesOne(s) ? ', range includes 1' : ''}`;
    out.push(`- 64 KiB messages: throughput autocork/off ${say(big.ratio.tputAutocork)}, cork64/off ${say(big.ratio.tputCork)}: ` +
      'a write of half the 64 KiB send buffer or more goes out at once whatever the setting, so corking has nothing to gather.');
  }
  const one = rows.find((r) => r.size === 1);
  if (one) {
    // issue 13's hand measurement in the same guests (a non-Node writer): 1 B 2.79 Mb/s with autocorking, 7.66 Kb/s without
    out.push(`- Against issue 13's hand measurement in these guests (1 B: 349 kB/s with autocorking, 0.96 kB/s without, ~360x): ` +
      `Node gets ${num(one.tput.off.median)} kB/s without autocorking (bound by RDMA work requests, one per write) and ` +
      `${num(one.tput.autocork.median)} kB/s with it, i.e. ~${num(one.tput.autocork.median)}k write() calls/s: with autocorking the bound is ` +
      'Node\'s own cost per write on an emulated CPU, hence the smaller factor.');
  }
  if (one && one.tput.cork64.median < one.tput.autocork.median) {
    out.push(`- At 1 B, withTcpCork x64 reaches ${st.fmtRatio(one.tput.cork64.median / one.tput.autocork.median)} of autocorking's rate: ` +
      'the writer pays two setsockopt calls and a promise per batch, and each uncork sends in the writer\'s own call, ' +
      'while autocorking mostly flushes from the send-completion path and the writer only copies bytes.');
  }
  const smallRtt = rows.filter((r) => r.size <= 1024).map((r) => r.p50.off.median);
  if (big && smallRtt.length && Math.min(...smallRtt) > big.p50.off.median) {
    out.push(`- Small requests take longer round trips (${num(Math.min(...smallRtt))} ms) than 64 KiB ones (${num(big.p50.off.median)} ms) ` +
      'in every configuration, corked or not: a property of the emulated path, not of corking.');
  }
  return out.join('\n');
}

/** The emulation's own speed in this run, for the "ratios, not speeds" note. */
function speedNote(result) {
  const { rows } = summarize(result);
  const bulk = Math.max(...rows.map((r) => r.tput.off.median).filter(Number.isFinite));
  const p50s = rows.flatMap((r) => Object.values(r.p50).map((x) => x.median)).filter(Number.isFinite);
  return `bulk at most ${num(bulk / 1000)} MB/s here, round trips ${num(Math.min(...p50s))}..${num(Math.max(...p50s))} ms`;
}

function section(result) {
  const s = result.settings;
  const h = result.host;
  const when = result.date.slice(0, 10);
  const checked = s.smcChecked ? (result.allSmcr ? 'every point was SMC-R on both ends (getSmcInfo in both processes, before and after)' : 'NOT every point was SMC-R (see the note under the tables)') : 'SMC-R NOT checked (smoke run)';
  return [
    `${HEADING} (\`npm run bench:smcr\`)`,
    `The seeds' experiment (qperf tcp_bw / tcp_lat) redone with Node writers: a writer issues one write per message`,
    '(the next only once Node\'s own write queue is empty, so Node never batches them into one writev), the',
    'receiver counts what arrives; round trips are ping-pongs of one message. Sender configurations:',
    '`net.smc.autocorking_size` 65536 (the default) and 0, set with `smc-run sysctl set` on the writer (on both ends for',
    'round trips, where both send) and put back afterwards; and 0 plus `withTcpCork()` around every 64 writes (around each',
    'request for round trips).',
    '',
    `Setup: two qemu TCG guests (1 vCPU each), Debian kernel ${h.kernel}, SoftRoCE (rxe) over a qemu socket link, node ${h.node};`,
    `${s.runs} interleaved runs (configuration order changed per run), after discarded warm-up points, ${s.secs} s per throughput point after ${s.warmup} s warm-up, ` +
      `${s.rttSecs} s per latency point; ${checked}. Measured ${when}, ${Math.round(result.elapsedSecs / 60)} min.`,
    '**SoftRoCE under TCG gives ratios, not speeds**: RDMA is emulated in software on an emulated CPU ' +
      `(${speedNote(result)}), so only the ratios between configurations carry over to real RDMA hardware.`,
    '',
    renderTables(result),
    '',
    '![Autocorking and TCP_CORK on SMC-R](charts/smcr-autocork.svg)',
    '',
    findings(result),
    '',
    'Why: with autocorking off every small write becomes its own RDMA write plus a CDC message, so the rate is bounded',
    'by work-request completions, not bytes. Autocorking holds writes back while an earlier RDMA write is still pending',
    '(up to min(autocorking_size, sndbuf/2)) and the first write of an idle connection is never held, which is why',
    'request/response latency does not move. withTcpCork() gets the same batching for a writer that knows its message',
    'boundaries, at two setsockopt calls per batch.',
    '',
    'On real RDMA hardware, between two hosts with SMC-R set up, from a built checkout on each (the same matrix; needs',
    'CAP_NET_ADMIN for the sysctl on both hosts, which is changed for the whole network namespace while the benchmark',
    'runs and restored at the end; the port, 7300 by default, must be reachable):',
    '',
    '```',
    'hostB$ node bench/smcr/autocork.cjs serve [--port 7300]',
    'hostA$ node bench/smcr/autocork.cjs run --peer HOST_B_IP [--runs 5] [--out smcr-autocork.json]',
    '```',
    '',
    '`run` prints these tables; `node bench/smcr/report.cjs --in smcr-autocork.json --report R.md --chart C.svg` renders them.',
    '',
  ].join('\n');
}

function chart(result) {
  const { rows } = summarize(result);
  const series = (pick) => result.settings.configs.map((c) => ({
    name: NAMES[c],
    color: COLORS[c],
    dashed: c === 'cork64',
    points: rows.map((r) => ({ x: r.size, y: pick(r)[c].median, lo: pick(r)[c].min, hi: pick(r)[c].max })),
  }));
  return svgChart({
    title: `SMC-R over SoftRoCE (TCG guests): autocorking and TCP_CORK, median and min..max of ${result.settings.runs} runs`,
    panels: [
      { title: 'Throughput at the receiver', xLabel: 'message size', yLabel: 'kB/s (log)', yLog: true, series: series((r) => r.tput) },
      { title: 'Round trip, p50', xLabel: 'message size', yLabel: 'ms', yLog: false, series: series((r) => r.p50) },
    ],
  });
}

function writeAll(result, paths = {}) {
  const p = { ...DEFAULTS, ...paths };
  fs.mkdirSync(path.dirname(p.chart), { recursive: true });
  fs.writeFileSync(p.chart, chart(result));
  fs.writeFileSync(p.report, replaceSection(fs.readFileSync(p.report, 'utf8'), SECTION, section(result), 'bench/smcr/report.cjs'));
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const opt = (name) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : undefined; };
  const input = opt('in') || DEFAULTS.in;
  const result = JSON.parse(fs.readFileSync(input, 'utf8'));
  const paths = { report: opt('report') || DEFAULTS.report, chart: opt('chart') || DEFAULTS.chart };
  writeAll(result, paths);
  console.log(renderTables(result));
  console.log(`\n${findings(result)}\n\nwrote ${paths.report} (section "${HEADING}") and ${paths.chart}`);
}

module.exports = { HEADING, summarize, renderTables, findings, section, chart, writeAll };
