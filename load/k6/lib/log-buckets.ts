// Log-spaced latency buckets that add across processes: the one bucket scheme shared by
// the k6 bundles (each runner counts its samples per bucket in k6 counters) and the Node
// merge (load/report/merge.ts adds the counts and reads percentiles from the sum). No
// imports, so esbuild takes it whole into the bundles.
//
// Bucket k >= 1 holds values in (LOWEST_MS * GAMMA^(k-1), LOWEST_MS * GAMMA^k]; bucket 0
// holds values <= LOWEST_MS; bucket OVERFLOW holds values above HIGHEST_MS. A bucket's
// representative value 2 * LOWEST_MS * GAMMA^k / (GAMMA + 1) lies within RELATIVE_ERROR
// of every value in the bucket (DDSketch's construction), so a percentile read from
// summed counts is within RELATIVE_ERROR of the true sample at the same rank.

/** Relative error of a value read back from its bucket (1 %). */
export const RELATIVE_ERROR = 0.01;
export const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
/** Values at or below this (ms) share bucket 0 (read back as this value: an absolute error of at most LOWEST_MS). */
export const LOWEST_MS = 0.01;
/** TIMEOUT_MS's largest value: longer values share the overflow bucket. */
export const HIGHEST_MS = 3_600_000;
/** Index of the last regular bucket. */
export const LAST_BUCKET = Math.ceil(Math.log(HIGHEST_MS / LOWEST_MS) / Math.log(GAMMA));
export const OVERFLOW_BUCKET = LAST_BUCKET + 1;
/** Names the scheme inside a summary: merge refuses counts made under another one. */
export const BUCKET_SCHEME = `log-gamma:${RELATIVE_ERROR}:${LOWEST_MS}:${HIGHEST_MS}`;

/** The bucket of a value in ms. */
export function bucketOf(ms: number): number {
  if (!(ms > LOWEST_MS)) return 0;
  if (ms > HIGHEST_MS) return OVERFLOW_BUCKET;
  const k = Math.ceil(Math.log(ms / LOWEST_MS) / Math.log(GAMMA));
  return Math.min(LAST_BUCKET, Math.max(1, k));
}

/** The value a bucket reads back as (ms). */
export function bucketValue(k: number): number {
  if (k <= 0) return LOWEST_MS;
  if (k >= OVERFLOW_BUCKET) return HIGHEST_MS;
  return (2 * LOWEST_MS * Math.pow(GAMMA, k)) / (GAMMA + 1);
}

/** Fixed-width label of a bucket (a k6 tag value; sorts as the bucket order). */
export function bucketLabel(k: number): string {
  const s = String(k);
  return s.length >= 4 ? s : '0000'.slice(s.length) + s;
}

export function bucketLabels(): string[] {
  const out: string[] = [];
  for (let k = 0; k <= OVERFLOW_BUCKET; k++) out.push(bucketLabel(k));
  return out;
}

/**
 * Percentile q (0-100) of summed bucket counts, by nearest rank (the ceil(q/100 * n)-th
 * smallest sample), read back as its bucket's value and clamped into [min, max] when
 * those are known exactly (the extremes are true samples). null without samples.
 */
export function bucketPercentile(counts: Record<string, number>, q: number, min?: number, max?: number): number | null {
  const keys = Object.keys(counts).map(Number).filter((k) => counts[bucketLabel(k)]! > 0).sort((a, b) => a - b);
  let n = 0;
  for (const k of keys) n += counts[bucketLabel(k)]!;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil((q / 100) * n));
  // The extremes are known exactly where the trend gave them.
  if (rank === 1 && min !== undefined && isFinite(min)) return min;
  if (rank === n && max !== undefined && isFinite(max)) return max;
  let seen = 0;
  let v = bucketValue(keys[keys.length - 1]!);
  for (const k of keys) {
    seen += counts[bucketLabel(k)]!;
    if (seen >= rank) {
      v = bucketValue(k);
      break;
    }
  }
  if (min !== undefined && isFinite(min) && v < min) v = min;
  if (max !== undefined && isFinite(max) && v > max) v = max;
  return v;
}

/** Adds b's counts into a (same labels). */
export function addCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  for (const k of Object.keys(b)) a[k] = (a[k] ?? 0) + b[k]!;
  return a;
}

/** Family -> the k6 trend it mirrors (whose min, max, avg and count come with it); req_ms is the chat requests' 200 answers. */
export const DISTRIBUTIONS = {
  ttft_ms: 'ttft_ms',
  itl_ms: 'itl_ms',
  tpot_ms: 'tpot_ms',
  e2e_ms: 'e2e_ms',
  req_ms: 'http_req_duration{status:200}',
  stream_ttfb_ms: 'chatgate_stream_ttfb',
  stream_e2e_ms: 'chatgate_stream_e2e',
} as const;
export type Family = keyof typeof DISTRIBUTIONS;

