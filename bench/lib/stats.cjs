'use strict';
// Small statistics for benchmark points, shared by every bench script.
// Benchmarks here run a few times per point (interleaved), so we report the median with its min..max
// rather than a mean: under TCG one disturbed run would drag a mean far away.
//
//   summarize(values)        -> { median, min, max, n }        (values: finite numbers; empty -> n 0, NaNs)
//   percentile(values, p)    -> number                          (p in 0..100, nearest-rank on a sorted copy)
//   ratio(a, b)              -> a / b, or NaN when either side is missing or b is 0
//   fmt(x, digits = 1)       -> '12.3' (NaN / undefined -> '-'); large numbers keep no decimals
//   fmtSummary(s, digits)    -> '12.3 [11.9..13.0] n=5'
//   fmtRatio(r)              -> '1.42' ('-' when not finite)

function sorted(values) {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

function percentile(values, p) {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  // nearest rank: the smallest value with at least p% of the samples at or below it
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1];
}

function summarize(values) {
  const s = sorted(values);
  if (s.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1], n: s.length };
}

function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return NaN;
  return a / b;
}

function fmt(x, digits = 1) {
  if (x === undefined || x === null || !Number.isFinite(x)) return '-';
  if (Math.abs(x) >= 10000) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(digits);
}

function fmtSummary(s, digits = 1) {
  if (!s || s.n === 0) return '-';
  return `${fmt(s.median, digits)} [${fmt(s.min, digits)}..${fmt(s.max, digits)}] n=${s.n}`;
}

function fmtRatio(r) {
  return Number.isFinite(r) ? r.toFixed(2) : '-';
}

module.exports = { summarize, percentile, ratio, fmt, fmtSummary, fmtRatio };
