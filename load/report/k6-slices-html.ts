// A merged k6 run's part of the report: its per-slice figures (SLICE and each runner's
// `--out json`, merged by merge.ts into details.k6.slices) drawn by slice-charts.ts, the
// drawer a rehearsal's slices use, with PHASES and CHANGE_AT marked and the k6
// thresholds as the limit lines.
import type { LoadSummary } from './summary.ts';
import type { SliceRow } from '../k6/lib/slices.ts';
import { durationMs } from '../k6/lib/duration.ts';
import { parsePhaseText } from '../engine/phase-plan.ts';
import { esc, sliceChart, slicePoints, type SliceFrame, type SliceLimit, type SliceSeries } from './slice-charts.ts';

interface K6Details {
  script: string;
  thresholds: Array<{ metric: string; expression: string }>;
  relative_error?: number;
  slices?: { slice_s: number; runners: number; rows: SliceRow[] };
}

const k6Of = (s: LoadSummary) => (s.details as { k6?: K6Details }).k6;

/** The first "<stat><N" threshold on a metric, as a limit line ("threshold p(95)<500"). */
function thresholdLine(d: K6Details, metric: string, stat: string): SliceLimit | undefined {
  for (const t of d.thresholds) {
    const m = /^\s*([a-z]+(?:\(\d+(?:\.\d+)?\))?)\s*<=?\s*(\d*\.?\d+)\s*$/.exec(t.expression);
    if (t.metric === metric && m && m[1] === stat) return { value: Number(m[2]), label: `threshold ${metric} ${t.expression.trim()}` };
  }
  return undefined;
}

/** PHASES and CHANGE_AT of the runners' settings (every runner has the same; merge refuses others). */
function frameOf(s: LoadSummary): SliceFrame {
  const env = ((s.options as { env?: Record<string, unknown> }).env ?? {}) as Record<string, string | undefined>;
  let phases: SliceFrame['phases'] = [];
  if (env.PHASES) {
    const cap = Number(env.CAPACITY);
    try {
      phases = parsePhaseText(env.PHASES, cap > 0 ? { rps: cap, source: 'CAPACITY' } : undefined, 'CAPACITY').phases.map((p) => ({ phase: p.text, start_s: p.startS }));
    } catch {
      phases = []; // the runners refused it at init; nothing ran in such phases
    }
  }
  const marks = env.CHANGE_AT ? [{ t_s: durationMs(env.CHANGE_AT) / 1000, label: `CHANGE_AT=${env.CHANGE_AT}` }] : [];
  return { phases, marks };
}

/** The section: per-slice charts when the merge had slices, a line saying how to get them when it had none. */
export function k6SlicesSection(s: LoadSummary): string {
  const d = k6Of(s);
  if (!d) return '';
  const sl = d.slices;
  if (!sl) {
    return d.script === 'chat-stream-sse'
      ? '<h2>Per slice</h2><p class="help" id="k6-slices-none">No per-slice figures: the runners ran without <code>SLICE</code>, or their <code>--out json</code> outputs were not given to the merge (docs/K6.md, "Slices of a split run").</p>'
      : '';
  }
  const rows = sl.rows;
  if (rows.length === 0) return `<h2>Per slice</h2><p class="help" id="k6-slices-none">No slice had a stream in the runners' k6 outputs.</p>`;
  const frame = frameOf(s);
  const lines = (pick: (r: SliceRow) => number | null) => slicePoints(rows, pick);
  const pct = (fam: 'ttft' | 'itl' | 'e2e'): SliceSeries[] => [
    { label: 'p50', pts: lines((r) => r[`${fam}_p50_ms`]), color: '#1f77b4' },
    { label: 'p95', pts: lines((r) => r[`${fam}_p95_ms`]), color: '#d62728' },
    { label: 'p99', pts: lines((r) => r[`${fam}_p99_ms`]), color: '#ff7f0e' },
  ];
  const marked = [
    frame.phases.length ? 'dashed grey lines: phase starts (PHASES)' : '',
    frame.marks.length ? `red: the change (${esc(frame.marks.map((m) => m.label).join('; '))}, made by the operator)` : '',
  ].filter(Boolean).join('; ');
  return `<h2>Per slice (${sl.runners} k6 runner${sl.runners === 1 ? '' : 's'} merged)</h2>
<p class="help">Slices of ${sl.slice_s} s from each runner's start, one point each; a stream counts in the slice it was sent in, and each slice's runners are added before its percentiles are read from the summed log buckets (within ${Math.round((d.relative_error ?? 0) * 1000) / 10} %). A slice without samples breaks a line. Limit lines: the scripts' k6 thresholds, which judge the whole test, not each slice${marked ? `; ${marked}` : ''}. Every figure is in slices.csv.</p>
<div id="k6-slice-charts">
${sliceChart('TTFT per slice (ms)', pct('ttft'), frame, rows, thresholdLine(d, 'ttft_ms', 'p(95)'))}
${sliceChart('ITL per slice (ms)', pct('itl'), frame, rows, thresholdLine(d, 'itl_ms', 'p(95)'))}
${sliceChart('E2E per slice (ms)', pct('e2e'), frame, rows, thresholdLine(d, 'e2e_ms', 'p(95)'))}
${sliceChart('Streams per slice', [{ label: 'sent', pts: lines((r) => r.sent), color: '#1f77b4' }, { label: 'ok', pts: lines((r) => r.ok), color: '#2ca02c' }, { label: 'failed', pts: lines((r) => r.failed), color: '#d62728' }], frame, rows)}
${sliceChart('Failed share per slice', [{ label: 'failed / sent', pts: lines((r) => r.error_share), color: '#d62728' }], frame, rows, thresholdLine(d, 'chatgate_stream_failed', 'rate'))}
</div>`;
}
