// Latency histograms: HdrHistogram (hdr-histogram-js) rather than sample arrays, so
// memory stays fixed however many values a run records, percentiles are exact to 3
// significant digits, and runs can be merged and stored (base64) for later analysis.
// Values go in as milliseconds and are kept as microseconds.
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  min_ms: number;
  mean_ms: number;
  p50_ms: number;
  p90_ms: number;
  p95_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
}

/** Percentile plot points: x = percentile (0-100), y = latency (ms). */
export interface PercentilePlot { percentile: number[]; value_ms: number[] }
/** Bar histogram: bucket lower edges (ms) and counts. */
export interface BucketPlot { bucket_ms: number[]; count: number[]; /** Top edge of the last bar. */ upper_ms?: number; /** Logarithmic bins. */ log?: boolean }

/** Percentile ticks for plots: dense near the tail, the way HdrHistogram plots are read. */
const PLOT_PERCENTILES = [
  0, 5, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 97.5, 98, 98.5, 99, 99.25, 99.5, 99.75,
  99.9, 99.95, 99.99, 99.999, 100,
];

/** The percentiles a curve of `n` samples shows: p needs at least 1 / (1 - p/100) of them (p99 100, p99.9 1,000); 100 never (that is the max). */
export function plotPercentiles(n: number): number[] {
  return n > 0 ? PLOT_PERCENTILES.filter((p) => p < 100 && n * (1 - p / 100) >= 1 - 1e-9) : [];
}

type Internal = hdr.Histogram & {
  lowestEquivalentValue(value: number): number;
  recordedValuesIterator: { reset(): void; hasNext(): boolean; next(): { valueIteratedTo: number; countAtValueIteratedTo: number } };
};

export class LatencyHistogram {
  readonly h: hdr.Histogram;

  /** @param digits 3 for run totals; 2 for the per-second buckets of a timeline (1/8 of the memory). */
  constructor(digits: 2 | 3 = 3) {
    this.h = hdr.build({
      bitBucketSize: 32,
      autoResize: true,
      lowestDiscernibleValue: 1,
      highestTrackableValue: 60_000_000,
      numberOfSignificantValueDigits: digits,
      useWebAssembly: false,
    });
  }

  static decode(base64: string): LatencyHistogram {
    const out = new LatencyHistogram();
    out.h.add(hdr.decodeFromCompressedBase64(base64, 32, false));
    return out;
  }

  record(ms: number): void {
    this.h.recordValue(toUs(ms));
  }

  /**
   * Records a latency and, when it exceeds the interval at which requests were due,
   * the samples the sender failed to take while it waited (coordinated-omission
   * correction, as wrk2 and HdrHistogram do it).
   */
  recordCorrected(ms: number, expectedIntervalMs: number): void {
    this.h.recordValueWithExpectedInterval(toUs(ms), Math.max(1, Math.round(expectedIntervalMs * 1000)));
  }

  add(other: LatencyHistogram): void {
    this.h.add(other.h);
  }

  get count(): number {
    return this.h.totalCount;
  }

  /**
   * The one percentile method of the harness (GapTally uses it too): nearest rank, the
   * value reported being the lowest of the bucket holding that rank, never outside the
   * recorded min and max (HdrHistogram's own answer, the bucket's highest value, can
   * exceed the max); p100 is the max.
   */
  percentileMs(p: number): number {
    const h = this.h as Internal;
    if (h.totalCount === 0) return 0;
    if (p >= 100) return round3(h.maxValue / 1000);
    const v = h.lowestEquivalentValue(h.getValueAtPercentile(p));
    return round3(Math.min(h.maxValue, Math.max(h.minNonZeroValue, v)) / 1000);
  }

  summary(): LatencySummary {
    const h = this.h;
    if (h.totalCount === 0) {
      return { count: 0, min_ms: 0, mean_ms: 0, p50_ms: 0, p90_ms: 0, p95_ms: 0, p99_ms: 0, p999_ms: 0, max_ms: 0 };
    }
    return {
      count: h.totalCount,
      min_ms: round3(h.minNonZeroValue / 1000),
      mean_ms: round3(h.mean / 1000),
      p50_ms: this.percentileMs(50),
      p90_ms: this.percentileMs(90),
      p95_ms: this.percentileMs(95),
      p99_ms: this.percentileMs(99),
      p999_ms: this.percentileMs(99.9),
      max_ms: round3(h.maxValue / 1000),
    };
  }

  /**
   * The percentile curve, only as far as the samples reach: percentile p needs at least
   * 1 / (1 - p/100) samples (p99.9 needs 1,000), so 93 samples draw no 99.99 % point.
   */
  percentilePlot(): PercentilePlot {
    const ps = plotPercentiles(this.count);
    return { percentile: ps, value_ms: ps.map((p) => this.percentileMs(p)) };
  }

  /**
   * Bars over the recorded range (min to max), the last one holding the max: every
   * value has its bar. Logarithmic bins when the range spans more than a factor of 20
   * (a fast majority and a slow tail both stay visible).
   */
  bucketPlot(buckets = 40): BucketPlot {
    if (this.count === 0) return { bucket_ms: [], count: [] };
    const h = this.h as Internal;
    // Zeros (two chunks read at once) fall into the first bar; all zeros make one bar at 0.
    const lo = h.maxValue === 0 ? 0 : Math.min(h.minNonZeroValue, h.maxValue) / 1000;
    const hi = Math.max(h.maxValue / 1000, lo);
    if (hi - lo < 0.001) return { bucket_ms: [round3(lo)], count: [this.count], upper_ms: round3(hi + 0.001) };
    const log = lo > 0 && hi / lo >= 20;
    const edge = (i: number) => (log ? lo * Math.pow(hi / lo, i / buckets) : lo + ((hi - lo) * i) / buckets);
    const index = (v: number) => Math.floor(log ? (Math.log(v / lo) / Math.log(hi / lo)) * buckets : ((v - lo) / (hi - lo)) * buckets);
    const counts = new Array<number>(buckets).fill(0);
    const it = h.recordedValuesIterator;
    it.reset();
    while (it.hasNext()) {
      const v = it.next();
      // A bucket's values are filed under its lowest one, never outside the recorded min..max.
      const ms = Math.min(hi, Math.max(lo, h.lowestEquivalentValue(v.valueIteratedTo) / 1000));
      counts[Math.min(buckets - 1, Math.max(0, index(ms)))]! += v.countAtValueIteratedTo;
    }
    return { bucket_ms: counts.map((_, i) => round3(edge(i))), count: counts, upper_ms: round3(hi), ...(log ? { log: true } : {}) };
  }

  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.h);
  }
}

/**
 * One stream's inter-token gaps, bounded: the first 64 are kept as they are (most
 * streams never need more), after that every gap is rounded to the value the run's
 * 3-digit HdrHistogram would file it under (its bucket's lowest value) and equal
 * values are counted, not listed. A stream of a million tokens at a steady pace keeps
 * a handful of entries; the worst case is bounded by the histogram's bucket count,
 * never by the stream's length. Recording the tally into a LatencyHistogram gives
 * exactly the histogram that recording every gap would have given.
 */
export class GapTally {
  private readonly first: number[] = [];
  private counts: Map<number, number> | undefined;
  /** Exact extremes of the counted gaps (µs): recorded as they are, so min and max stay exact. */
  private minUs = Infinity;
  private maxUs = 0;
  count = 0;

  add(ms: number): void {
    this.count++;
    if (this.first.length < GAPS_KEPT) {
      this.first.push(ms);
      return;
    }
    const raw = toUs(ms);
    if (raw < this.minUs) this.minUs = raw;
    if (raw > this.maxUs) this.maxUs = raw;
    const us = hdrKey(raw);
    const counts = (this.counts ??= new Map());
    counts.set(us, (counts.get(us) ?? 0) + 1);
  }

  recordInto(h: LatencyHistogram): void {
    for (let i = 0; i < this.first.length; i++) h.record(this.first[i]!);
    if (!this.counts) return;
    const minKey = hdrKey(this.minUs);
    const maxKey = hdrKey(this.maxUs);
    // Any value of a bucket files the same; the extremes' buckets use the exact extremes.
    for (const [us, n] of this.counts) {
      if (us === minKey && us === maxKey) {
        h.h.recordValue(this.maxUs);
        if (n > 1) h.h.recordValueWithCount(this.minUs, n - 1);
      } else h.h.recordValueWithCount(us === minKey ? this.minUs : us === maxKey ? this.maxUs : us, n);
    }
  }

  /** Percentile (0-100) of this stream's gaps, in ms (0 when there are none), by LatencyHistogram's method (nearest rank, within the exact min and max): exact up to 64 gaps, then the bucket's lowest value. */
  percentileMs(p: number): number {
    return this.percentilesMs([p])[0]!;
  }

  /** percentileMs of each of `ps`, the gaps sorted once (requests.jsonl asks three per request). */
  percentilesMs(ps: readonly number[]): number[] {
    if (this.count === 0) return ps.map(() => 0);
    const rankOf = (p: number) => Math.max(1, Math.ceil((Math.min(100, p) / 100) * this.count));
    if (!this.counts) {
      // A typed array sorts numerically without a comparator or a boxed copy.
      const sorted = Float64Array.from(this.first).sort();
      return ps.map((p) => sorted[rankOf(p) - 1]!);
    }
    let lo = this.minUs;
    let hi = this.maxUs;
    const all = new Map<number, number>(this.counts);
    for (const ms of this.first) {
      const us = toUs(ms);
      if (us < lo) lo = us;
      if (us > hi) hi = us;
      const k = hdrKey(us);
      all.set(k, (all.get(k) ?? 0) + 1);
    }
    const keys = Float64Array.from(all.keys()).sort();
    return ps.map((p) => {
      if (p >= 100) return hi / 1000;
      const rank = rankOf(p);
      let seen = 0;
      let at = keys[keys.length - 1]!;
      for (const k of keys) {
        seen += all.get(k)!;
        if (seen >= rank) {
          at = k;
          break;
        }
      }
      return Math.min(hi, Math.max(lo, at)) / 1000;
    });
  }
}

const GAPS_KEPT = 64;

/** The lowest value of v's bucket in a 3-digit HdrHistogram: 2048 sub-buckets, so values below 2048 are exact, above that the resolution is 2^(floor(log2 v) - 10). */
function hdrKey(us: number): number {
  const shift = us < 2048 ? 0 : 21 - Math.clz32(us);
  return shift === 0 ? us : (us >>> shift) << shift;
}

function toUs(ms: number): number {
  return ms > 0.001 ? Math.round(ms * 1000) : 1;
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
