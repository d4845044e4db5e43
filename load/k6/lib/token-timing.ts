// Token timing of streams read through xk6-sse, under the names and definitions of the
// Node load driver (load/report/metric-names.ts, load/engine/recorder.ts), so a k6 run and a
// `npm run load -- stream` run of the same target read the same way:
// - k6 trends ttft_ms, itl_ms, tpot_ms, e2e_ms and first_event_ms are the driver's
//   latency families (its summary's `latencies`), one sample per successful stream
//   (itl_ms: one per gap);
// - the summary's `loadMetrics` holds ttft_p50_ms ... output_tokens_per_s, keyed and
//   described by load/report/metric-names.ts.
// Times are from the iteration's start, which an arrival-rate executor schedules: the
// intended send time, as in the driver (no coordinated omission while VUs are free).
import { Counter, Trend } from 'k6/metrics';
import { METRICS, type MetricName } from '../../report/metric-names.ts';
import type { StreamJudge } from './stream.ts';
import type { Tags } from './chat.ts';

export const ttft = new Trend('ttft_ms', true);
export const itl = new Trend('itl_ms', true);
export const tpot = new Trend('tpot_ms', true);
export const e2e = new Trend('e2e_ms', true);
export const firstEvent = new Trend('first_event_ms', true);
/** usage.completion_tokens of successful streams; its rate is output_tokens_per_s. */
export const outputTokens = new Counter('output_tokens');
/** 1 per successful stream, 0 otherwise; its count over the run is streams_ok_per_s. */
export const streamsOk = new Counter('streams_ok');

/** Records one successful stream's timing (intended send at `start`, stream ended at `end`, both ms). */
export function recordTiming(j: StreamJudge, start: number, end: number, tags: Tags): void {
  streamsOk.add(1, tags);
  ttft.add(j.firstContentAt! - start, tags);
  if (j.firstEventAt !== undefined) firstEvent.add(j.firstEventAt - start, tags);
  e2e.add(end - start, tags);
  for (const g of j.gaps) itl.add(g, tags);
  if (j.tokens !== undefined) {
    outputTokens.add(j.tokens, tags);
    if (j.tokens > 1) tpot.add((j.lastContentAt! - j.firstContentAt!) / (j.tokens - 1), tags);
  }
}

/** Summary figure -> [k6 metric, value key]: each name is a load/report/metric-names.ts name. */
export const LOAD_METRICS: Array<[MetricName, string, string]> = [
  ['ttft_p50_ms', 'ttft_ms', 'med'],
  ['ttft_p95_ms', 'ttft_ms', 'p(95)'],
  ['ttft_p99_ms', 'ttft_ms', 'p(99)'],
  ['itl_p50_ms', 'itl_ms', 'med'],
  ['itl_p95_ms', 'itl_ms', 'p(95)'],
  ['itl_p99_ms', 'itl_ms', 'p(99)'],
  ['tpot_p50_ms', 'tpot_ms', 'med'],
  ['e2e_p50_ms', 'e2e_ms', 'med'],
  ['e2e_p95_ms', 'e2e_ms', 'p(95)'],
  ['e2e_p99_ms', 'e2e_ms', 'p(99)'],
  ['output_tokens_per_s', 'output_tokens', 'rate'],
];

interface Values { values: Record<string, number> }

/** The driver-named figures of a k6 summary; null where the run gave no sample (as the driver's summary does). */
export function loadMetrics(metrics: Record<string, Values>, durationMs: number | undefined): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [name, metric, key] of LOAD_METRICS) {
    const m = metrics[metric];
    const v = m ? m.values[key] : undefined;
    out[name] = v === undefined || !isFinite(v) ? null : Math.round(v * 1000) / 1000;
  }
  const ok = metrics.streams_ok;
  out.streams_ok_per_s = ok && durationMs ? Math.round(((ok.values.count ?? 0) / (durationMs / 1000)) * 1000) / 1000 : null;
  return out;
}

/** One line per figure for the text summary: name, value and load/report/metric-names.ts's description. */
export function describeLoadMetrics(figures: Record<string, number | null>): string[] {
  return Object.keys(figures).map((name) => {
    const info = METRICS[name as MetricName];
    const v = figures[name];
    return `${name.padEnd(22)}${v === null || v === undefined ? 'n/a' : `${v} ${info ? info.unit : ''}`.trim()}`;
  });
}
