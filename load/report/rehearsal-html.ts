// The rehearsal's part of the report: the verdict line, and per-slice charts (one point
// per slice, slice-charts.ts) with the phases and the change marked.
import type { LoadSummary } from './summary.ts';
import type { SliceRow } from './slices.ts';
import type { Damage } from './damage.ts';
import type { ChangeMark, CommandRecord } from '../setup/change.ts';
import { esc, sliceChart, slicePoints, type SliceSeries } from './slice-charts.ts';

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

/** The requests chart's lines: each a count of the requests due in the slice (none can exceed `sent`), and what was open at its end. */
export function requestSeries(rows: SliceRow[]): SliceSeries[] {
  const lines = (pick: (r: SliceRow) => number | null) => slicePoints(rows, pick);
  return [
    { label: 'sent (due in the slice)', pts: lines((r) => r.sent), color: '#1f77b4' },
    { label: 'ok (of those sent)', pts: lines((r) => r.ok), color: '#2ca02c' },
    { label: 'streams cut (of those sent)', pts: lines((r) => r.streams_cut), color: '#d62728' },
    { label: "in flight at the slice's end", pts: lines((r) => r.in_flight), color: '#9467bd' },
  ];
}

/** The report section: verdict, the change's command, the charts, the lost answers with their curl lines. */
export function rehearsalSection(s: LoadSummary): string {
  const p = parts(s);
  if (!p) return '';
  const { d, rows } = p;
  const dm = d.damage;
  const cmd = d.command;
  const lines = (pick: (r: SliceRow) => number | null) => slicePoints(rows, pick);
  // The plan's end is marked too: past it nothing is sent, so every count drops (the drain).
  const last = d.phases[d.phases.length - 1];
  const frame = { phases: last ? [...d.phases, { phase: 'phases end (drain)', start_s: last.start_s + last.duration_s }] : d.phases, marks: d.marks };
  const chart = (title: string, series: SliceSeries[], limit?: number) =>
    sliceChart(title, series, frame, rows, limit === undefined ? undefined : { value: limit, label: `SLO ${limit}` });
  return `<h2>Rehearsing a change</h2>
<div class="banner ${dm.graceful ? 'ok' : 'fail'}" id="rehearsal-verdict">${esc(dm.verdict)}</div>
<p class="help">Slices of ${d.slice_s} s, one point each; a request counts in the slice it was due to be sent (its latency, its outcome), except output tokens/s, counted when each stream finished (what was served then). Dashed grey lines: phase starts and the plan's end; red: the change (${esc(d.marks.map((m) => `${m.t_s} s ${m.source}: ${m.label}`).join('; ') || 'none')}). Every figure is in slices.csv.</p>
${cmd ? `<p>Command <code>${esc(cmd.command)}</code>: started at ${cmd.started_s} s, ended ${cmd.ended_s === null ? 'not' : `at ${cmd.ended_s} s`}, exit ${cmd.exit_code ?? '–'}${cmd.signal ? ` (${esc(cmd.signal)})` : ''}${cmd.note ? `; ${esc(cmd.note)}` : ''}</p>${cmd.stdout || cmd.stderr ? `<pre>${esc(`${cmd.stdout}${cmd.stderr ? `\n[stderr]\n${cmd.stderr}` : ''}`)}</pre>` : ''}` : ''}
<div id="slice-charts">
${chart('TTFT per slice (ms)', [{ label: 'p50', pts: lines((r) => r.ttft_p50_ms), color: '#1f77b4' }, { label: 'p95', pts: lines((r) => r.ttft_p95_ms), color: '#d62728' }, { label: 'p99', pts: lines((r) => r.ttft_p99_ms), color: '#ff7f0e' }], d.slo.ttft_p95_ms)}
${chart('Requests per slice (by the slice they were due in)', requestSeries(rows))}
${chart('Error share per slice', [{ label: 'error share', pts: lines((r) => r.error_share), color: '#d62728' }], d.slo.error_share)}
${chart('Output tokens/s per slice (of the streams that finished in it)', [{ label: 'output tokens/s', pts: lines((r) => r.output_tokens_per_s), color: '#2ca02c' }])}
</div>
${d.lost_examples.length ? `<h3>Answers that were not graceful (the first ${d.lost_examples.length} answered, by send time)</h3><table><tr><th>sent at</th><th>class</th><th>clause</th><th style="text-align:left">detail</th><th style="text-align:left">reproduce</th></tr>${[...d.lost_examples].sort((a, b) => a.sent_at_s - b.sent_at_s).map((e) => `<tr><td style="white-space:nowrap">${e.sent_at_s} s</td><td>${esc(e.class)}</td><td>${esc(e.clause ?? '–')}</td><td style="text-align:left">${esc(e.detail)}</td><td style="text-align:left"><code>${esc(e.curl ?? '')}</code></td></tr>`).join('')}</table>` : ''}`;
}
