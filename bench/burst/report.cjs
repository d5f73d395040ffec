'use strict';
// Writes the connection-burst section of bench/REPORT.md from bench/results/burst-smcd.json.
// Usage: node bench/burst/report.cjs [results.json] [REPORT.md]
const fs = require('node:fs');
const path = require('node:path');
const { replaceSection } = require('../lib/report-section.cjs');

const file = process.argv[2] || path.join(__dirname, '..', 'results', 'burst-smcd.json');
const reportFile = process.argv[3] || path.join(__dirname, '..', 'REPORT.md');
const data = JSON.parse(fs.readFileSync(file, 'utf8'));

const LABEL = {
  tcp: 'plain TCP (no smc-run)',
  'smc-retry': 'smc-run (TCP retry on)',
  'smc-noretry': 'smc-run --no-tcp-retry',
  'hs1-retry': 'smc-run, limit_smc_hs=1',
  'hs1-noretry': 'smc-run --no-tcp-retry, limit_smc_hs=1',
};
const errs = (e) => Object.entries(e || {}).map(([k, v]) => `${v} ${k}`).join(', ') || '-';

const rows = data.rows.filter((r) => !r.error);
const lines = [
  '## Connection bursts (SMC-D guest)',
  '',
  `One Node process opens N connections at once to its own echo server; each sends 64 KiB and checks the`,
  `echo (sha256). Kernel ${data.kernel}, ${data.cpus} vCPUs under TCG, Node ${data.node}, net.core.somaxconn ${data.somaxconn};`,
  'one run per row (`bench/burst/run.cjs`, `test/scenarios/burst.cjs`). Time = first connect to last echo.',
  '"SMC-D / TCP" is how the completed connections went: SMC-D client handshakes and, for TCP, the',
  'server-side fallbacks (retried connects and limit_smc_hs fallbacks arrive as plain TCP); "hs errors" is',
  "the client kernel's SMC handshake error delta (the shim's retry count equals it unless a row's notes say otherwise).",
  '',
  '| N | server backlog | configuration | time (s) | completed | failed | TCP retries | SMC-D / TCP | hs errors |',
  '|---:|---:|---|---:|---:|---|---:|---|---:|',
];
for (const r of rows) {
  const d = r.delta || {};
  const mix = r.config === 'tcp' ? `0 / ${r.completed}` : `${d.smcdClient} / ${r.completed - d.smcdClient}`;
  lines.push(`| ${r.count} | ${r.backlog} | ${LABEL[r.config] || r.config} | ${(r.ms / 1000).toFixed(1)} | ${r.completed} | ${r.failed ? `${r.failed} (${errs(r.errors)})` : '0'} | ${r.tcpRetries ?? '-'} | ${mix} | ${r.config === 'tcp' ? '-' : d.hsErrClient} |`);
}
if (data.notes) lines.push('', ...data.notes);
const md = fs.readFileSync(reportFile, 'utf8');
fs.writeFileSync(reportFile, replaceSection(md, 'burst', lines.join('\n'), 'bench/burst/report.cjs'));
console.log(lines.join('\n'));
