// Per-slice charts (one point per time slice) as inline SVG, so the page needs no script
// for them: drawn for a rehearsal (rehearsal-html.ts) and a merged k6 run's slices
// (k6-slices-html.ts), each choosing its series from its own rows.
import { redact } from '../../lib/run/redact.ts';
import { SLO_COLOR } from './colours.ts';

/** What every slice row has: its span from the run's start. */
export interface SliceSpan { t_start_s: number; t_end_s: number }
export interface SliceSeries { label: string; pts: Array<{ x: number; y: number | null }>; color: string }
/** Vertical lines over every chart: phase starts (dashed grey) and changes (red). */
export interface SliceFrame { phases: Array<{ phase: string; start_s: number }>; marks: Array<{ t_s: number; label: string }> }
/** A horizontal limit line and its label ("SLO 500", "threshold p(95)<500"). */
export interface SliceLimit { value: number; label: string }

/** One series' points, at each slice's middle; null (no samples) breaks the line. */
export function slicePoints<R extends SliceSpan>(rows: R[], pick: (r: R) => number | null): SliceSeries['pts'] {
  return rows.map((r) => ({ x: (r.t_start_s + r.t_end_s) / 2, y: pick(r) }));
}

const W = 900;
/** Height of the plotting area; the band of line labels above it grows with their rows. */
const PLOT_H = 168;
const PAD = { l: 56, r: 12, b: 28 };
/** Title row, then rows of phase/change labels above the plot, so they never cross the data. */
const TITLE_H = 22;
const LABEL_ROW = 11;
/** An estimate of a 10 px label's width per character (DejaVu Sans averages about 6 px). */
const CHAR_PX = 6.2;
/** A limit more than this many times the highest point is named above the chart instead of drawn. */
const OFF_SCALE = 3;

/** A "nice" axis from 0: a step of 1, 2, 2.5 or 5 times a power of ten, the top the first step at or above `max`. */
export function niceAxis(max: number, opts: { integer?: boolean; ticks?: number } = {}): { top: number; step: number; ticks: number[]; labels: string[] } {
  const want = opts.ticks ?? 4;
  const hi = max > 1e-300 && Number.isFinite(max) ? max : 1;
  const mag = 10 ** Math.floor(Math.log10(hi / want));
  // Counts never get a fractional step (2.5 only from 25 up).
  const steps = [1, 2, 2.5, 5, 10].map((m) => m * mag).filter((st) => !opts.integer || Number.isInteger(st));
  // Of the steps giving at most want + 1 intervals, the one with the lowest top (the least empty space).
  const count = (st: number) => Math.max(1, Math.ceil(hi / st - 1e-9));
  const fits = steps.filter((st) => count(st) <= want + 1 && count(st) >= 2);
  const better = (a: number, b: number) => count(b) * b < count(a) * a - 1e-12 || (Math.abs(count(b) * b - count(a) * a) <= 1e-12 && Math.abs(count(b) - want) < Math.abs(count(a) - want));
  const step = opts.integer && hi <= want + 1 ? 1 : fits.reduce((a, b) => (better(a, b) ? b : a), fits[fits.length - 1] ?? 10 * mag);
  const n = count(step);
  const ticks = Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  return { top: ticks[n]!, step, ticks, labels: ticks.map((t) => tickLabel(t, step, ticks[n]!)) };
}

/** A tick's text: as many decimals as the step needs, thousands as k and millions as M so it fits the margin. */
function tickLabel(v: number, step: number, top: number): string {
  if (v === 0) return '0';
  // Beyond k and M, or below 0.0001, only an exponent fits the margin.
  if (top >= 1e9 || step < 1e-4) return Number(v.toPrecision(3)).toExponential();
  const [div, suffix] = top >= 1e6 ? [1e6, 'M'] : top >= 1e4 ? [1e3, 'k'] : [1, ''];
  const st = step / div;
  const decimals = Math.max(0, Math.ceil(-Math.log10(st) - 1e-9) + (Math.abs(st / 10 ** Math.floor(Math.log10(st)) - 2.5) < 1e-9 ? 1 : 0));
  return `${(v / div).toFixed(decimals)}${suffix}`;
}

export function sliceChart(title: string, series: SliceSeries[], frame: SliceFrame, rows: SliceSpan[], limit?: SliceLimit): string {
  const xMax = rows.length ? rows[rows.length - 1]!.t_end_s : 1;
  const ys = series.flatMap((s) => s.pts.map((p) => p.y).filter((y): y is number => y !== null));
  // A limit far above every point would flatten the lines onto the axis: named, not drawn.
  const highest = Math.max(0, ...ys);
  const offScale = limit !== undefined && highest > 0 && limit.value > OFF_SCALE * highest;
  const drawn = offScale ? undefined : limit;
  // All zeros (no failure in any slice) keep a plain 0..1 axis; counts get whole-number ticks.
  const yAxis = niceAxis(Math.max(highest, drawn?.value ?? 0), { integer: ys.length > 0 && ys.every(Number.isInteger) && Number.isInteger(drawn?.value ?? 0) });
  const xAxis = niceAxis(xMax, { ticks: 7, integer: xMax >= 4 });
  const X = (x: number) => PAD.l + (x / xMax) * (W - PAD.l - PAD.r);
  // Phase and change labels: each on the first row where it overlaps no label already placed.
  const vlines = [
    ...frame.phases.map((p) => ({ x: p.start_s, color: '#888', dash: '5,4', label: p.phase, full: p.phase })),
    ...frame.marks.map((m) => ({ x: m.t_s, color: '#d62728', dash: '', label: `change: ${clip(m.label, 56)}`, full: `change at ${m.t_s} s: ${m.label}` })),
  ];
  const rowEnds: number[] = [];
  const placed = vlines.map((v) => {
    const width = v.label.length * CHAR_PX;
    // Near the right edge a label ends at its line instead of starting there.
    const left = X(v.x) + 3 + width > W - PAD.r ? X(v.x) - 3 - width : X(v.x) + 3;
    let row = rowEnds.findIndex((end) => end < left - 6);
    if (row < 0) row = rowEnds.length < 3 ? rowEnds.length : rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[row] = Math.max(rowEnds[row] ?? -Infinity, left + width);
    return { ...v, left, width, row };
  });
  const top = TITLE_H + rowEnds.length * LABEL_ROW + 6;
  const H = top + PLOT_H + PAD.b;
  const Y = (y: number) => H - PAD.b - (y / yAxis.top) * PLOT_H;
  // A line lying on an earlier one (p99 on p95 when saturated, ok on sent) is dashed, so the one under it shows;
  // up to three such lines take turns along one dash pattern, so their dashes do not cover each other.
  const onEarlier = (i: number) => {
    const drawnPts = series[i]!.pts.filter((p) => p.y !== null);
    const near = drawnPts.filter((p) => series.slice(0, i).some((e) => e.pts.some((q) => q.x === p.x && q.y !== null && Math.abs(Y(q.y) - Y(p.y!)) < 3)));
    return drawnPts.length > 0 && near.length * 2 >= drawnPts.length;
  };
  const isDashed = series.map((_, i) => onEarlier(i));
  let dashed = 0;
  const dash = (i: number) => (isDashed[i] ? ` stroke-dasharray="5,10" stroke-dashoffset="${(15 - 5 * (dashed++ % 3)) % 15}"` : '');
  const path = (s: SliceSeries, i: number) => {
    // A slice without samples breaks the line (a gap, not a zero).
    let out = '';
    let pen = false;
    for (const p of s.pts) {
      if (p.y === null) { pen = false; continue; }
      out += `${pen ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`;
      pen = true;
    }
    return `<path d="${out}" fill="none" stroke="${s.color}" stroke-width="2"${dash(i)}/>${s.pts.filter((p) => p.y !== null).map((p) => `<circle class="pt" cx="${X(p.x).toFixed(1)}" cy="${Y(p.y!).toFixed(1)}" r="2.5" fill="${s.color}"/>`).join('')}`;
  };
  const vline = (v: (typeof placed)[number]) => `<g>${v.full !== v.label ? `<title>${esc(v.full)}</title>` : ''}<line x1="${X(v.x)}" x2="${X(v.x)}" y1="${TITLE_H + v.row * LABEL_ROW}" y2="${H - PAD.b}" stroke="${v.color}" stroke-dasharray="${v.dash}"/><text x="${v.left.toFixed(1)}" y="${TITLE_H + 8 + v.row * LABEL_ROW}" font-size="10" fill="${v.color}">${esc(v.label)}</text></g>`;
  const ticks = yAxis.ticks.map((t, i) => `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(t).toFixed(1)}" y2="${Y(t).toFixed(1)}" stroke="#eee"/><text x="${PAD.l - 4}" y="${(Y(t) + 3).toFixed(1)}" font-size="10" text-anchor="end">${yAxis.labels[i]}</text>`).join('');
  // Seconds at round steps; a tick at the right edge ends there (centred, it would be cut off).
  const xticks = xAxis.ticks.filter((x) => x <= xMax + 1e-9).map((x, i) => `<text x="${X(x).toFixed(1)}" y="${H - 10}" font-size="10" text-anchor="${X(x) > W - PAD.r - 20 ? 'end' : 'middle'}">${xAxis.labels[i]} s</text>`).join('');
  return `<figure class="chart" data-points="${rows.length}"><svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">
<text x="${PAD.l}" y="14" font-size="12" font-weight="600">${esc(title)}</text>
${ticks}<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${H - PAD.b}" y2="${H - PAD.b}" stroke="#999"/>${xticks}
${drawn !== undefined ? `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(drawn.value)}" y2="${Y(drawn.value)}" stroke="${SLO_COLOR}" stroke-dasharray="4,3"/><text x="${W - PAD.r - 2}" y="${Y(drawn.value) - 3}" font-size="10" text-anchor="end" fill="${SLO_COLOR}">${esc(drawn.label)}</text>` : ''}
${offScale ? `<text class="off-scale" x="${W - PAD.r - 2}" y="14" font-size="10" text-anchor="end" fill="${SLO_COLOR}">${esc(limit!.label)}: far above the data, not drawn</text>` : ''}
${placed.map(vline).join('')}
${series.map(path).join('')}
</svg><figcaption class="muted">${series.map((s, i) => `<span style="color:${s.color}">■</span> ${esc(s.label)}${isDashed[i] ? ', dashed' : ''}${hiddenUnder(series, i)}`).join(' · ')}${dashed > 0 ? '. A dashed line lies on another, which shows between its dashes.' : ''}</figcaption></figure>`;
}

/** Long labels lose their middle: a command's tail (the URL's path and query) tells changes apart. */
function clip(s: string, n: number): string {
  if (s.length <= n) return s;
  const head = Math.floor((n - 1) / 3);
  return `${s.slice(0, head)}…${s.slice(s.length - (n - 1 - head))}`;
}

export function esc(s: string): string {
  return redact(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** A series equal to a later one at every point is drawn under it: the legend says so (sent = ok when nothing failed). */
function hiddenUnder(series: SliceSeries[], i: number): string {
  const same = (a: SliceSeries, b: SliceSeries) => a.pts.length === b.pts.length && a.pts.every((p, k) => p.y === b.pts[k]!.y);
  const over = series.slice(i + 1).find((b) => same(series[i]!, b));
  return over ? ` (= ${esc(over.label)}, under it)` : '';
}
