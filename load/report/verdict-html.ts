// report.html's verdict pieces: the gates (SLOs, --threshold limits, the sweep's answer)
// with a red banner when one broke, the not-like-for-like warning, the sweep's chart of
// offered vs sent vs completed with its answer marked, and the baseline's percentile
// curves over this run's. Drawn as inline SVG on the server: the page needs no script
// for its verdict, and what it says comes from the same derivations as the console.
import { redact, redactDeep } from '../../lib/run/redact.ts';
import type { LoadSummary } from './summary.ts';
import { gateLine } from './gates.ts';
import { sweepView } from './sweep-view.ts';
import type { PercentilePlot } from '../engine/histogram.ts';

/** Banners above the figures: broken gates (red), met gates (one muted line), settings that differ (warning). */
export function verdictHtml(input: LoadSummary): string {
  const s = redactDeep(input);
  const out: string[] = [];
  const checks = s.gates?.checks ?? [];
  const broken = checks.filter((c) => !c.met);
  if (broken.length) {
    out.push(`<div class="banner fail" id="gates-broken"><b>${broken.length} gate${broken.length === 1 ? '' : 's'} broken (exit 1)</b><ul>${broken.map((c) => `<li>${esc(gateLine(c))}</li>`).join('')}</ul></div>`);
  }
  const met = checks.filter((c) => c.met);
  if (met.length) out.push(`<div class="muted" id="gates-met">${met.map((c) => esc(gateLine(c))).join(' · ')}</div>`);
  const b = s.baseline;
  if (b && !b.like_for_like) {
    out.push(`<div class="banner partial" id="not-like-for-like"><b>Not like for like</b>: ${b.settings_differ.length} setting${b.settings_differ.length === 1 ? '' : 's'} differ from the baseline's run, so a change may come from them and not from the target${s.options.require_like_for_like ? ' (--require-like-for-like: exit 1)' : ''}:<ul>${b.settings_differ.map((d) => `<li><code>${esc(d.setting)}</code>: ${esc(JSON.stringify(d.baseline))} → ${esc(JSON.stringify(d.current))}</li>`).join('')}</ul></div>`);
  }
  if (b) out.push(`<div class="muted">baseline: ${b.regressions} regression${b.regressions === 1 ? '' : 's'}, ${b.outside_noise ?? 0} metric${b.outside_noise === 1 ? '' : 's'} outside the noise of the two runs (95 % intervals; inside it a change is <code>same</code>)</div>`);
  return out.join('\n');
}

/** The sweep's answer and its chart: offered (y = offered line), sent and completed per step; the answer's ends marked. */
export function sweepChartHtml(input: LoadSummary): string {
  const v = sweepView(redactDeep(input));
  if (!v) return '';
  const rows = v.steps.map((st) => st.row).filter((r) => r.valid).sort((a, b) => a.offered - b.offered);
  const xs = rows.map((r) => r.offered);
  const top = Math.max(1e-9, ...rows.flatMap((r) => [r.offered, r.sent_rps, r.completed_rps]));
  // The x axis spans the steps (from a little below the first), not 0 to the last: the knee is what matters.
  const xMin = Math.max(0, Math.min(...xs) * 0.9 - 1e-9);
  const [lo, hi] = v.interval;
  const marks = [
    ...(lo !== null ? [{ x: lo, label: `met ${lo}`, color: '#2ca02c' }] : []),
    ...(hi !== null ? [{ x: hi, label: `broken ${hi}`, color: '#d62728' }] : []),
  ];
  const svg = lineChart({
    id: 'sweep-rates',
    title: `Offered vs sent vs completed (${v.unit})`,
    xLabel: `offered (${v.unit})`,
    yLabel: 'per second',
    xMin,
    xMax: Math.max(...xs, 1e-9),
    yMax: top,
    series: [
      { label: 'offered (y = offered)', color: '#7f7f7f', dash: true, points: [[xMin, xMin], [Math.max(...xs, 1e-9), Math.max(...xs, 1e-9)]] },
      { label: 'sent/s', color: '#1f77b4', dots: true, points: rows.map((r) => [r.offered, r.sent_rps]) },
      { label: 'completed/s (in the step)', color: '#2ca02c', dots: true, points: rows.map((r) => [r.offered, r.completed_rps]) },
      { label: 'goodput/s', color: '#ff7f0e', dots: true, points: rows.map((r) => [r.offered, r.goodput_rps]) },
    ],
    marks,
  });
  return `<div id="sweep-answer"><p><b>Answer</b>: ${esc(v.answer)}.</p>
<p class="help">Completed counts the answers finished inside a step's window, per second of it: it cannot exceed what the target completed. Where completed stops following offered, and the backlog at the step's end grows, the target is saturated. Latency per step is from the requests sent after the step's settle; ${esc(v.latencyScope)}.</p>
${rows.length ? svg : '<p class="muted">(no valid step)</p>'}</div>`;
}

/** The baseline's percentile curves (dashed) over this run's (solid), one chart per latency. */
export function baselineOverlayHtml(input: LoadSummary): string {
  const s = redactDeep(input);
  const base = s.baseline?.baseline_percentiles;
  if (!base) return '';
  const cur = s.plots.percentiles;
  const names = ['ttft_ms', 'itl_ms', 'e2e_ms', 'latency_ms'].filter((n) => base[n]?.value_ms.length && cur[n]?.value_ms.length);
  if (!names.length) return '';
  // x = -log10(1 - p): 90, 99, 99.9 % evenly spaced, as the page's own percentile charts.
  const px = (p: number) => -Math.log10(1 - Math.min(p, 99.9) / 100);
  const curve = (pl: PercentilePlot): Array<[number, number]> => pl.percentile.map((p, i) => [p, pl.value_ms[i]!] as [number, number]).filter(([p]) => p <= 99.9).map(([p, v]) => [px(p), v]);
  return `<div id="baseline-overlay">${names.map((n) => lineChart({
    id: `baseline-${n}`,
    title: `${n}: this run (solid) vs the baseline (dashed), by percentile`,
    xLabel: 'percentile (0, 90, 99, 99.9)',
    yLabel: 'ms',
    xMax: 3,
    yMax: Math.max(...base[n]!.value_ms, ...cur[n]!.value_ms, 1e-9),
    series: [
      { label: 'this run', color: '#1f77b4', points: curve(cur[n]!) },
      { label: 'baseline', color: '#7f7f7f', dash: true, points: curve(base[n]!) },
    ],
    marks: [],
  })).join('')}</div>`;
}

interface ChartSpec {
  id: string;
  title: string;
  xLabel: string;
  yLabel: string;
  xMin?: number;
  xMax: number;
  yMax: number;
  series: Array<{ label: string; color: string; dash?: boolean; dots?: boolean; points: Array<[number, number]> }>;
  marks: Array<{ x: number; label: string; color: string }>;
}

const W = 640;
const H = 260;
const PAD = { l: 56, r: 16, t: 28, b: 40 };

function lineChart(c: ChartSpec): string {
  const x0 = c.xMin ?? 0;
  const xMax = x0 + (c.xMax - x0) * 1.05 || 1e-9;
  const yMax = c.yMax * 1.1;
  const X = (x: number) => PAD.l + ((x - x0) / (xMax - x0)) * (W - PAD.l - PAD.r);
  const Y = (y: number) => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const ticks = (max: number) => [0, 0.25, 0.5, 0.75, 1].map((f) => f * max);
  const parts: string[] = [];
  for (const t of ticks(yMax)) parts.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(t)}" y2="${Y(t)}" stroke="#eee"/><text x="${PAD.l - 4}" y="${Y(t) + 4}" text-anchor="end" font-size="10">${num(t)}</text>`);
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const t = x0 + f * (xMax - x0);
    parts.push(`<text x="${X(t)}" y="${H - PAD.b + 14}" text-anchor="middle" font-size="10">${num(t)}</text>`);
  }
  parts.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(0)}" y2="${Y(0)}" stroke="#999"/><line x1="${PAD.l}" x2="${PAD.l}" y1="${PAD.t}" y2="${Y(0)}" stroke="#999"/>`);
  // Labels of the marks on their own rows, so two close marks stay readable.
  c.marks.forEach((m, i) => parts.push(`<line x1="${X(m.x)}" x2="${X(m.x)}" y1="${PAD.t}" y2="${Y(0)}" stroke="${m.color}" stroke-dasharray="3 3"/><text x="${X(m.x) + 3}" y="${Y(0) - 6 - i * 12}" font-size="10" fill="${m.color}">${esc(m.label)}</text>`));
  c.series.forEach((s, i) => {
    const pts = s.points.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="6 4"' : ''} points="${pts}"/>`);
    if (s.dots) for (const [x, y] of s.points) parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="3" fill="${s.color}"/>`);
    parts.push(`<rect x="${PAD.l + 8 + i * 150}" y="6" width="10" height="3" fill="${s.color}"/><text x="${PAD.l + 22 + i * 150}" y="11" font-size="10">${esc(s.label)}</text>`);
  });
  parts.push(`<text x="${(W + PAD.l) / 2}" y="${H - 6}" text-anchor="middle" font-size="11">${esc(c.xLabel)}</text><text x="12" y="${(H - PAD.b + PAD.t) / 2}" font-size="11" transform="rotate(-90 12 ${(H - PAD.b + PAD.t) / 2})" text-anchor="middle">${esc(c.yLabel)}</text>`);
  return `<figure class="chart" id="${c.id}" data-title="${esc(c.title)}" data-points="${c.series.reduce((n, x) => n + x.points.length, 0)}" style="margin:8px 0 18px;max-width:100%"><figcaption style="font-size:13px;font-weight:600">${esc(c.title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px" role="img" aria-label="${esc(c.title)}">${parts.join('')}</svg></figure>`;
}

function num(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

function esc(s: string): string {
  return redact(s).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);
}
