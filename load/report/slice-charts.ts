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
const H = 220;
const PAD = { l: 56, r: 12, t: 24, b: 28 };
/** A limit more than this many times the highest point is named above the chart instead of drawn. */
const OFF_SCALE = 3;

export function sliceChart(title: string, series: SliceSeries[], frame: SliceFrame, rows: SliceSpan[], limit?: SliceLimit): string {
  const xMax = rows.length ? rows[rows.length - 1]!.t_end_s : 1;
  const ys = series.flatMap((s) => s.pts.map((p) => p.y).filter((y): y is number => y !== null));
  // A limit far above every point would flatten the lines onto the axis: named, not drawn.
  const highest = Math.max(0, ...ys);
  const offScale = limit !== undefined && highest > 0 && limit.value > OFF_SCALE * highest;
  const drawn = offScale ? undefined : limit;
  // All zeros (no failure in any slice) keep a plain 0..1 axis.
  const yMax = (Math.max(highest, drawn?.value ?? 0) || 1) * 1.08;
  const X = (x: number) => PAD.l + (x / xMax) * (W - PAD.l - PAD.r);
  const Y = (y: number) => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const path = (s: SliceSeries) => {
    // A slice without samples breaks the line (a gap, not a zero).
    let out = '';
    let pen = false;
    for (const p of s.pts) {
      if (p.y === null) { pen = false; continue; }
      out += `${pen ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`;
      pen = true;
    }
    return `<path d="${out}" fill="none" stroke="${s.color}" stroke-width="2"/>${s.pts.filter((p) => p.y !== null).map((p) => `<circle class="pt" cx="${X(p.x).toFixed(1)}" cy="${Y(p.y!).toFixed(1)}" r="2.5" fill="${s.color}"/>`).join('')}`;
  };
  // Labels of neighbouring lines go on alternate rows so they do not overlap.
  const vline = (x: number, color: string, dash: string, label: string, row: number) => `<line x1="${X(x)}" x2="${X(x)}" y1="${PAD.t}" y2="${H - PAD.b}" stroke="${color}" stroke-dasharray="${dash}"/><text x="${X(x) + 3}" y="${PAD.t + 10 + (row % 3) * 11}" font-size="10" fill="${color}">${esc(label)}</text>`;
  const ticks = [0, 0.5, 1].map((f) => `<text x="${PAD.l - 4}" y="${Y(yMax * f / 1.08) + 3}" font-size="10" text-anchor="end">${fmt(yMax * f / 1.08)}</text>`).join('');
  // The last tick ends at the right edge (centred, it would be cut off).
  const xticks = Array.from({ length: 6 }, (_, i) => (xMax * i) / 5).map((x, i) => `<text x="${X(x)}" y="${H - 10}" font-size="10" text-anchor="${i === 5 ? 'end' : 'middle'}">${fmt(x)} s</text>`).join('');
  return `<figure class="chart" data-points="${rows.length}"><svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">
<text x="${PAD.l}" y="14" font-size="12" font-weight="600">${esc(title)}</text>
<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${H - PAD.b}" y2="${H - PAD.b}" stroke="#999"/>${ticks}${xticks}
${drawn !== undefined ? `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(drawn.value)}" y2="${Y(drawn.value)}" stroke="${SLO_COLOR}" stroke-dasharray="4,3"/><text x="${W - PAD.r - 2}" y="${Y(drawn.value) - 3}" font-size="10" text-anchor="end" fill="${SLO_COLOR}">${esc(drawn.label)}</text>` : ''}
${offScale ? `<text class="off-scale" x="${W - PAD.r - 2}" y="14" font-size="10" text-anchor="end" fill="${SLO_COLOR}">${esc(limit!.label)}: far above the data, not drawn</text>` : ''}
${frame.phases.map((p, i) => vline(p.start_s, '#888', '5,4', p.phase, i)).join('')}
${frame.marks.map((m, i) => vline(m.t_s, '#d62728', '', `change: ${m.label.slice(0, 40)}`, i + 2)).join('')}
${series.map(path).join('')}
</svg><figcaption class="muted">${series.map((s, i) => `<span style="color:${s.color}">■</span> ${esc(s.label)}${hiddenUnder(series, i)}`).join(' · ')}</figcaption></figure>`;
}

function fmt(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(1) : n.toPrecision(2);
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
