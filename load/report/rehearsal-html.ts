// The rehearsal's part of the report: the verdict line, and per-slice charts (one point
// per slice) with the phases and the change marked, drawn as inline SVG so the page
// needs no script for them.
import type { LoadSummary } from './summary.ts';
import type { SliceRow } from './slices.ts';
import type { Damage } from './damage.ts';
import type { ChangeMark, CommandRecord } from '../setup/change.ts';
import { redact } from '../../lib/run/redact.ts';
import { SLO_COLOR } from './colours.ts';

interface RehearsalDetails {
  phases: Array<{ phase: string; start_s: number; duration_s: number }>;
  slice_s: number;
  slo: { ttft_p95_ms: number; error_share: number };
  marks: ChangeMark[];
  command: CommandRecord | null;
  damage: Damage;
  lost_examples: Array<{ sent_at_s: number; class: string; clause: string | null; detail: string; curl: string | null }>;
}

function parts(s: LoadSummary): { d: RehearsalDetails; rows: SliceRow[] } | undefined {
  const d = (s.details as { rehearsal?: RehearsalDetails }).rehearsal;
  const rows = (s.plots?.extra as { slices?: SliceRow[] } | undefined)?.slices;
  return d && rows ? { d, rows } : undefined;
}

/** The one verdict line of a rehearsal (undefined for other runs). */
export function rehearsalVerdict(s: LoadSummary): string | undefined {
  return parts(s)?.d.damage.verdict;
}

/** The report section: verdict, the change's command, the charts, the lost answers with their curl lines. */
export function rehearsalSection(s: LoadSummary): string {
  const p = parts(s);
  if (!p) return '';
  const { d, rows } = p;
  const dm = d.damage;
  const cmd = d.command;
  const lines = (pick: (r: SliceRow) => number | null) => rows.map((r) => ({ x: (r.t_start_s + r.t_end_s) / 2, y: pick(r) }));
  return `<h2>Rehearsing a change</h2>
<div class="banner ${dm.graceful ? 'ok' : 'fail'}" id="rehearsal-verdict">${esc(dm.verdict)}</div>
<p class="help">Slices of ${d.slice_s} s, one point each; a request counts in the slice it was due to be sent. Dashed grey lines: phase starts; red: the change (${esc(d.marks.map((m) => `${m.t_s} s ${m.source}: ${m.label}`).join('; ') || 'none')}).</p>
${cmd ? `<p>Command <code>${esc(cmd.command)}</code>: started at ${cmd.started_s} s, ended ${cmd.ended_s === null ? 'not' : `at ${cmd.ended_s} s`}, exit ${cmd.exit_code ?? '–'}${cmd.signal ? ` (${esc(cmd.signal)})` : ''}${cmd.note ? `; ${esc(cmd.note)}` : ''}</p>${cmd.stdout || cmd.stderr ? `<pre>${esc(`${cmd.stdout}${cmd.stderr ? `\n[stderr]\n${cmd.stderr}` : ''}`)}</pre>` : ''}` : ''}
<div id="slice-charts">
${chart('TTFT per slice (ms)', [{ label: 'p50', pts: lines((r) => r.ttft_p50_ms), color: '#1f77b4' }, { label: 'p95', pts: lines((r) => r.ttft_p95_ms), color: '#d62728' }, { label: 'p99', pts: lines((r) => r.ttft_p99_ms), color: '#ff7f0e' }], d, rows, d.slo.ttft_p95_ms)}
${chart('Requests per slice', [{ label: 'sent', pts: lines((r) => r.sent), color: '#1f77b4' }, { label: 'completed', pts: lines((r) => r.completed), color: '#2ca02c' }, { label: 'in flight at the end', pts: lines((r) => r.in_flight), color: '#9467bd' }, { label: 'streams cut', pts: lines((r) => r.streams_cut), color: '#d62728' }], d, rows)}
${chart('Error share per slice', [{ label: 'error share', pts: lines((r) => r.error_share), color: '#d62728' }], d, rows, d.slo.error_share)}
${chart('Output tokens/s per slice', [{ label: 'tokens/s', pts: lines((r) => r.output_tokens_per_s), color: '#2ca02c' }], d, rows)}
</div>
${d.lost_examples.length ? `<h3>Answers that were not graceful (first ${d.lost_examples.length})</h3><table><tr><th>sent at</th><th>class</th><th>clause</th><th>detail</th><th>reproduce</th></tr>${d.lost_examples.map((e) => `<tr><td>${e.sent_at_s} s</td><td>${esc(e.class)}</td><td>${esc(e.clause ?? '–')}</td><td style="text-align:left">${esc(e.detail)}</td><td style="text-align:left"><code>${esc(e.curl ?? '')}</code></td></tr>`).join('')}</table>` : ''}`;
}

interface Series { label: string; pts: Array<{ x: number; y: number | null }>; color: string }

const W = 900;
const H = 220;
const PAD = { l: 56, r: 12, t: 24, b: 28 };

function chart(title: string, series: Series[], d: RehearsalDetails, rows: SliceRow[], limit?: number): string {
  const xMax = rows.length ? rows[rows.length - 1]!.t_end_s : 1;
  const ys = series.flatMap((s) => s.pts.map((p) => p.y).filter((y): y is number => y !== null));
  const yMax = Math.max(1e-9, ...ys, limit ?? 0) * 1.08;
  const X = (x: number) => PAD.l + (x / xMax) * (W - PAD.l - PAD.r);
  const Y = (y: number) => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const path = (s: Series) => {
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
  const xticks = Array.from({ length: 6 }, (_, i) => (xMax * i) / 5).map((x) => `<text x="${X(x)}" y="${H - 10}" font-size="10" text-anchor="middle">${fmt(x)} s</text>`).join('');
  return `<figure class="chart" data-points="${rows.length}"><svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">
<text x="${PAD.l}" y="14" font-size="12" font-weight="600">${esc(title)}</text>
<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${H - PAD.b}" y2="${H - PAD.b}" stroke="#999"/>${ticks}${xticks}
${limit !== undefined ? `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${Y(limit)}" y2="${Y(limit)}" stroke="${SLO_COLOR}" stroke-dasharray="4,3"/><text x="${W - PAD.r - 2}" y="${Y(limit) - 3}" font-size="10" text-anchor="end" fill="${SLO_COLOR}">SLO ${limit}</text>` : ''}
${d.phases.map((p, i) => vline(p.start_s, '#888', '5,4', p.phase, i)).join('')}
${d.marks.map((m, i) => vline(m.t_s, '#d62728', '', `change: ${m.label.slice(0, 40)}`, i + 2)).join('')}
${series.map(path).join('')}
</svg><figcaption class="muted">${series.map((s) => `<span style="color:${s.color}">■</span> ${esc(s.label)}`).join(' · ')}</figcaption></figure>`;
}

function fmt(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(1) : n.toPrecision(2);
}

function esc(s: string): string {
  return redact(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
