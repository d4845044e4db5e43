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
import type { StreamJudge } from './stream.ts';
import type { Tags } from './chat.ts';
import { Distribution } from './distributions.ts';

export const ttft = new Trend('ttft_ms', true);
export const itl = new Trend('itl_ms', true);
export const tpot = new Trend('tpot_ms', true);
export const e2e = new Trend('e2e_ms', true);
export const firstEvent = new Trend('first_event_ms', true);
// The same samples in mergeable form (lib/distributions.ts).
const ttftDist = new Distribution('ttft_ms');
const itlDist = new Distribution('itl_ms');
const tpotDist = new Distribution('tpot_ms');
const e2eDist = new Distribution('e2e_ms');

/** usage.completion_tokens of successful streams; its rate is output_tokens_per_s. */
export const outputTokens = new Counter('output_tokens');
/** 1 per successful stream, 0 otherwise; its count over the run is streams_ok_per_s. */
export const streamsOk = new Counter('streams_ok');

/** Records one successful stream's timing (intended send at `start`, stream ended at `end`, both ms). */
export function recordTiming(j: StreamJudge, start: number, end: number, tags: Tags): void {
  streamsOk.add(1, tags);
  ttft.add(j.firstContentAt! - start, tags);
  ttftDist.add(j.firstContentAt! - start);
  if (j.firstEventAt !== undefined) firstEvent.add(j.firstEventAt - start, tags);
  e2e.add(end - start, tags);
  e2eDist.add(end - start);
  for (const g of j.gaps) {
    itl.add(g, tags);
    itlDist.add(g);
  }
  if (j.tokens !== undefined) {
    outputTokens.add(j.tokens, tags);
    if (j.tokens > 1) {
      const v = (j.lastContentAt! - j.firstContentAt!) / (j.tokens - 1);
      tpot.add(v, tags);
      tpotDist.add(v);
    }
  }
}

// The figures under the driver's names live in lib/load-metrics.ts (no k6 import: the Node merge uses them too).
export { LOAD_METRICS, loadMetrics, describeLoadMetrics } from './load-metrics.ts';
