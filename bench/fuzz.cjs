'use strict';
// The long fuzz run (issue 29): every fast-check property of the host suites (the policy parser against
// its BigInt reference, the sock_diag, inet_diag and generic netlink parsers in both byte orders, sysctl
// values, snapshots) with SCALE times npm test's runs, from a seed of its own.
//   node bench/fuzz.cjs [--scale 100] [--seed 1] [--out bench/results/fuzz.json]
// A failure prints fast-check's counterexample with its seed and path: SMC_RUN_FUZZ_SEED=S reproduces it.
// Writes the counts (runs per property, per file, total) to --out and prints a table; exits as vitest did.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const arg = (name, def) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : def; };
const SCALE = Number(arg('--scale', '100'));
const SEED = Number(arg('--seed', '1'));
const OUT = arg('--out', path.join(__dirname, 'results', 'fuzz.json'));
if (!(SCALE > 0) || !Number.isSafeInteger(SEED)) {
  console.error('bench/fuzz.cjs: --scale must be > 0 and --seed an integer');
  process.exit(2);
}

// the test files with properties: those that import fast-check
const unit = path.join(ROOT, 'test', 'unit');
const files = fs.readdirSync(unit).filter((f) => f.endsWith('.test.ts') && /from 'fast-check'/.test(fs.readFileSync(path.join(unit, f), 'utf8'))).map((f) => path.join('test', 'unit', f));
const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-fuzz-')), 'runs.jsonl');
console.error(`fuzz: ${files.length} files, scale ${SCALE}, seed ${SEED}`);
const t0 = process.hrtime.bigint();
const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'vitest.config.mts', ...files], {
  cwd: ROOT,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, SMC_RUN_FUZZ_SCALE: String(SCALE), SMC_RUN_FUZZ_SEED: String(SEED), SMC_RUN_FUZZ_REPORT: report },
});
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const records = fs.existsSync(report) ? fs.readFileSync(report, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
fs.rmSync(path.dirname(report), { recursive: true, force: true });

const byFile = new Map();
for (const rec of records) {
  const f = byFile.get(rec.file) ?? { properties: 0, runs: 0, failed: 0 };
  f.properties++;
  f.runs += rec.runs;
  if (rec.failed) f.failed++;
  byFile.set(rec.file, f);
}
const total = { properties: records.length, runs: records.reduce((n, x) => n + x.runs, 0), failed: records.filter((x) => x.failed).length };
const result = { date: new Date().toISOString(), node: process.version, arch: process.arch, scale: SCALE, seed: SEED, seconds: Math.round(seconds), vitestExit: r.status, total, files: Object.fromEntries(byFile), properties: records };
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);

console.log(`\nfuzz run: seed ${SEED}, scale ${SCALE}x npm test, ${Math.round(seconds)} s (${process.arch}, Node ${process.version})`);
console.log('| file | properties | runs | failed |\n|---|---|---|---|');
for (const [f, v] of byFile) console.log(`| ${f} | ${v.properties} | ${v.runs.toLocaleString('en')} | ${v.failed} |`);
console.log(`| total | ${total.properties} | ${total.runs.toLocaleString('en')} | ${total.failed} |`);
console.log(`written: ${path.relative(ROOT, OUT)}`);
process.exit(r.status === 0 && total.properties > 0 ? 0 : 1);
