'use strict';
// Side-by-side rounds for the guest benches: each round runs every mode once, in an order rotated from
// round to round, and a ratio is taken within a round (both sides ran next to each other), then
// summarised over the rounds.
const median = (a) => { const s = [...a].sort((x, y) => x - y); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };

/** The modes in round r's order (0-based). */
const rotated = (modes, r) => modes.map((_, i) => modes[(i + r) % modes.length]);

/** For each key, a/b within each round: { median, min, max, perRound }. runs: [{ round (1-based), mode, ...keys }]. */
function perRoundRatios(runs, rounds, a, b, keys) {
  const out = {};
  for (const key of keys) {
    const xs = [];
    for (let r = 1; r <= rounds; r++) {
      const x = runs.find((y) => y.round === r && y.mode === a);
      const y = runs.find((z) => z.round === r && z.mode === b);
      xs.push(x[key] / y[key]);
    }
    out[key] = { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), perRound: xs };
  }
  return out;
}

/** The median of each key per mode. */
const mediansByMode = (runs, modes, keys) =>
  Object.fromEntries(modes.map((mode) => [mode, Object.fromEntries(keys.map((k) => [k, median(runs.filter((x) => x.mode === mode).map((x) => x[k]))]))]));

module.exports = { median, rotated, perRoundRatios, mediansByMode };
