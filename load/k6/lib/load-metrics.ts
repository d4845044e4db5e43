// The k6 token-timing figures under the Node load driver's names: a table and a function
// over summary values, with no k6 import, so the k6 bundles (lib/token-timing.ts) and the
// Node merge (load/report/merge.ts) compute them the same way.
import { METRICS, type MetricName } from '../../report/metric-names.ts';

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
    out[name] = v === undefined || v === null || !isFinite(v) ? null : Math.round(v * 1000) / 1000;
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
