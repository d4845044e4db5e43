// Mergeable distributions: every timed sample also adds 1 to a k6 counter tagged with
// its log bucket (lib/log-buckets.ts), so runners split by execution segment produce
// counts that add up to the whole test's histogram (npm run load -- merge). k6's
// end-of-test data holds per-tag counts only for submetrics named in thresholds, hence
// one always-true threshold per bucket: k6 keeps the submetrics once per process (a
// counter per bucket would cost every VU thousands of metric objects).
import { Counter } from 'k6/metrics';
import type { Threshold } from 'k6/options';
import { bucketLabels, bucketOf, bucketLabel, DISTRIBUTIONS, type Family } from './log-buckets.ts';

export { DISTRIBUTIONS, type Family } from './log-buckets.ts';

export const DIST_PREFIX = 'chatgate_dist_';
/** The always-true expression of the bucket thresholds (summaries leave these out). */
export const DIST_THRESHOLD = 'count>=0';

export class Distribution {
  private readonly counter: Counter;
  constructor(readonly family: Family) {
    this.counter = new Counter(`${DIST_PREFIX}${family}`);
  }

  add(ms: number): void {
    this.counter.add(1, { b: bucketLabel(bucketOf(ms)) });
  }
}

/** The bucket thresholds of these families, to add to options.thresholds. */
export function distributionThresholds(families: Family[]): Record<string, Threshold[]> {
  const out: Record<string, Threshold[]> = {};
  const labels = bucketLabels();
  for (const f of families) for (const b of labels) out[`${DIST_PREFIX}${f}{b:${b}}`] = [DIST_THRESHOLD];
  return out;
}

/** `chatgate_dist_ttft_ms{b:0512}` -> ['ttft_ms', '0512']; undefined for any other metric name. */
export function parseDistMetric(name: string): [Family, string] | undefined {
  const m = /^chatgate_dist_([a-z0-9_]+)\{b:(\d+)\}$/.exec(name);
  if (!m || !(m[1]! in DISTRIBUTIONS)) return undefined;
  return [m[1] as Family, m[2]!];
}
