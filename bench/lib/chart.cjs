'use strict';
// SVG line charts for bench/REPORT.md and the README: no dependencies, deterministic output (the same
// results give a byte-identical file, so regenerated charts diff cleanly in git).
//
//   svgChart({ title, panels, columns = panels.length, panelWidth = 420, panelHeight = 280 }) -> string
//   panel  = { title, xLabel, yLabel, xLog = true, yLog = false, series, xTicks? }
//   series = { name, points: [{ x, y, lo?, hi? }], color?, dashed? }
//            lo/hi (e.g. min..max of the runs) draw an error bar; points with a non-finite y are skipped.
//   xTicks = [{ x, label }]   (default: one tick per distinct x, labelled with sizeLabel(x))
//   sizeLabel(bytes) -> '1 B', '64 B', '1 KiB', '64 KiB', '1 MiB'
// All panels share one legend (series matched by name), so give the same series the same name in each.

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#17becf', '#7f7f7f'];
const MARGIN = { left: 64, right: 16, top: 34, bottom: 46 };

function sizeLabel(bytes) {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}

function esc(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function num(x) {
  return Number(x.toFixed(1)).toString();
}

/** Maps data to pixels on one axis, linear or log10, with a little padding around the data range. */
function makeScale(values, log, from, to) {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (log) {
    lo = Math.log10(lo);
    hi = Math.log10(hi);
  } else {
    lo = Math.min(0, lo); // throughput/latency axes start at zero so bar heights compare honestly
  }
  if (hi === lo) hi = lo + 1;
  const pad = log ? (hi - lo) * 0.06 : 0;
  lo -= pad;
  hi += log ? pad : (hi - lo) * 0.08;
  const f = (v) => from + (((log ? Math.log10(v) : v) - lo) / (hi - lo)) * (to - from);
  f.domain = [log ? 10 ** lo : lo, log ? 10 ** hi : hi];
  return f;
}

/** About five round tick values covering [lo, hi] (linear) or the powers of ten inside it (log). */
function yTicks(lo, hi, log) {
  if (log) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      const v = 10 ** e;
      if (v >= lo && v <= hi) out.push(v);
    }
    return out.length ? out : [lo, hi];
  }
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function tickLabel(v) {
  if (v >= 1e6) return `${num(v / 1e6)}M`;
  if (v >= 1e4) return `${num(v / 1e3)}k`;
  return Number(v.toPrecision(3)).toString();
}

function renderPanel(panel, colorOf, ox, oy, w, h) {
  const out = [];
  const x0 = ox + MARGIN.left;
  const x1 = ox + w - MARGIN.right;
  const y0 = oy + h - MARGIN.bottom;
  const y1 = oy + MARGIN.top;
  const pts = panel.series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.y)));
  out.push(`<text x="${num((x0 + x1) / 2)}" y="${num(oy + 20)}" class="ptitle">${esc(panel.title)}</text>`);
  if (pts.length === 0) {
    out.push(`<text x="${num((x0 + x1) / 2)}" y="${num((y0 + y1) / 2)}" class="lbl">no data</text>`);
    return out.join('\n');
  }
  const xLog = panel.xLog !== false;
  const yLog = panel.yLog === true;
  const xs = makeScale(pts.map((p) => p.x), xLog, x0, x1);
  const yVals = pts.flatMap((p) => [p.y, p.lo, p.hi]).filter((v) => Number.isFinite(v) && (!yLog || v > 0));
  const ys = makeScale(yVals, yLog, y0, y1);
  out.push(`<rect x="${x0}" y="${y1}" width="${num(x1 - x0)}" height="${num(y0 - y1)}" class="frame"/>`);
  for (const v of yTicks(ys.domain[0], ys.domain[1], yLog)) {
    const y = num(ys(v));
    out.push(`<line x1="${x0}" x2="${num(x1)}" y1="${y}" y2="${y}" class="grid"/>`);
    out.push(`<text x="${x0 - 6}" y="${y}" dy="4" class="ytick">${tickLabel(v)}</text>`);
  }
  const ticks = panel.xTicks || [...new Set(pts.map((p) => p.x))].sort((a, b) => a - b).map((x) => ({ x, label: sizeLabel(x) }));
  for (const t of ticks) {
    out.push(`<text x="${num(xs(t.x))}" y="${y0 + 16}" class="xtick">${esc(t.label)}</text>`);
  }
  out.push(`<text x="${num((x0 + x1) / 2)}" y="${num(oy + h - 8)}" class="lbl">${esc(panel.xLabel || '')}</text>`);
  out.push(`<text transform="translate(${ox + 14} ${num((y0 + y1) / 2)}) rotate(-90)" class="lbl">${esc(panel.yLabel || '')}</text>`);
  for (const s of panel.series) {
    const color = colorOf(s);
    const good = s.points.filter((p) => Number.isFinite(p.y) && (!yLog || p.y > 0)).sort((a, b) => a.x - b.x);
    if (good.length === 0) continue;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    const d = good.map((p, i) => `${i ? 'L' : 'M'}${num(xs(p.x))} ${num(ys(p.y))}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    for (const p of good) {
      const cx = num(xs(p.x));
      if (Number.isFinite(p.lo) && Number.isFinite(p.hi) && (!yLog || p.lo > 0)) {
        out.push(`<line x1="${cx}" x2="${cx}" y1="${num(ys(p.lo))}" y2="${num(ys(p.hi))}" stroke="${color}" stroke-width="1"/>`);
      }
      out.push(`<circle cx="${cx}" cy="${num(ys(p.y))}" r="3" fill="${color}"/>`);
    }
  }
  return out.join('\n');
}

function svgChart({ title, panels, columns, panelWidth = 420, panelHeight = 280 }) {
  const cols = Math.max(1, Math.min(columns || panels.length, panels.length));
  const rows = Math.ceil(panels.length / cols);
  const names = [];
  const colors = new Map();
  for (const p of panels) {
    for (const s of p.series) {
      if (!colors.has(s.name)) {
        names.push(s);
        colors.set(s.name, s.color || PALETTE[(colors.size) % PALETTE.length]);
      }
    }
  }
  const colorOf = (s) => colors.get(s.name);
  const legendRows = Math.ceil(names.length / 3);
  const top = 30;
  const width = cols * panelWidth;
  const height = top + rows * panelHeight + legendRows * 20 + 12;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    '<style>text{font-size:12px;fill:#222}.title{font-size:15px;font-weight:bold;text-anchor:middle}' +
      '.ptitle{font-size:13px;font-weight:bold;text-anchor:middle}.lbl{text-anchor:middle}' +
      '.xtick{text-anchor:middle;font-size:11px}.ytick{text-anchor:end;font-size:11px}' +
      '.grid{stroke:#e4e4e4}.frame{fill:none;stroke:#999}</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="20" class="title">${esc(title || '')}</text>`,
  ];
  panels.forEach((p, i) => {
    out.push(renderPanel(p, colorOf, (i % cols) * panelWidth, top + Math.floor(i / cols) * panelHeight, panelWidth, panelHeight));
  });
  const ly = top + rows * panelHeight + 6;
  const colW = width / 3;
  names.forEach((s, i) => {
    const x = 20 + (i % 3) * colW;
    const y = ly + Math.floor(i / 3) * 20;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<line x1="${num(x)}" x2="${num(x + 26)}" y1="${y + 8}" y2="${y + 8}" stroke="${colorOf(s)}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${num(x + 32)}" y="${y + 12}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { svgChart, sizeLabel };
