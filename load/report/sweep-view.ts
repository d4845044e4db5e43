// The sweep as the reports say it, derived once from summary.json's details: each step's
// line, the answer (an interval with the SLO that bound it and the samples behind each
// end) and which latencies are pooled and which per step. The console and the HTML page
// both render this, so they cannot disagree.
import type { LoadSummary } from './summary.ts';
import type { SweepStep } from '../scenarios/sweep.ts';

export interface SweepView {
  unit: string;
  steps: Array<{ row: SweepStep; verdict: string; text: string }>;
  /** [highest met, lowest broken]; either end null when the sweep did not reach it. */
  interval: [number | null, number | null];
  answer: string;
  latencyScope: string;
  note?: string;
}

interface SweepDetails {
  unit?: string;
  steps?: SweepStep[];
  answer?: { highest_met: number | null; lowest_broken: number | null; bound_by: string[]; samples_at_met: number | null; samples_at_broken: number | null; arrival: string };
  bound_by_detail?: string[];
  resolved?: boolean;
  latency_scope?: string;
  note?: string;
}

export function sweepView(s: LoadSummary): SweepView | undefined {
  if (s.scenario !== 'sweep') return undefined;
  const d = s.details as SweepDetails;
  const unit = d.unit ?? 'req/s';
  const steps = (d.steps ?? []).map((row) => {
    const verdict = row.slo_met === null ? 'INVALID (the driver fell behind)' : row.slo_met ? 'SLO met' : `SLO broken (${row.slo_broken_by.join(', ')})`;
    const text = `${String(row.offered).padStart(8)} ${unit}: sent ${f(row.sent_rps)}/s, completed ${f(row.completed_rps)}/s, backlog ${row.backlog_at_end} at end, goodput ${f(row.goodput_rps)}/s, ttft p95 ${f(row.ttft_p95_ms)} ms (n=${row.samples}), errors ${(row.error_share * 100).toFixed(1)} %  ${verdict}`;
    return { row, verdict, text };
  });
  const a = d.answer;
  const lo = a?.highest_met ?? null;
  const hi = a?.lowest_broken ?? null;
  const answer = lo === null && hi === null ? 'no step was judged'
    : lo === null ? `no rate met the SLO: the limit is below ${hi} ${unit} (${(d.bound_by_detail ?? []).join(', ')})`
      : hi === null ? `at least ${lo} ${unit}: every step met the SLO (n=${a?.samples_at_met} at ${lo})`
        : `the limit lies in [${lo}, ${hi}] ${unit}: ${lo} met the SLO (n=${a?.samples_at_met}), ${hi} broke it (${(d.bound_by_detail ?? []).join(', ')}; n=${a?.samples_at_broken})${d.resolved ? '' : ', not yet within the tolerance'}; arrivals ${a?.arrival}`;
  return { unit, steps, interval: [lo, hi], answer, latencyScope: d.latency_scope ?? 'summary latencies pool every step', note: d.note };
}

function f(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}
