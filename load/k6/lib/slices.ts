// Time slices of a k6 run that merge across runners: with SLICE set, chat-stream-sse
// tags each stream's samples with the slice of its intended send time (`slice`:
// "<start s>+<length s>") and adds one `chatgate_slice` point per stream (its status,
// ok or not). A runner's `--out json` output holds those points; here they become
// per-slice counts and log-bucket histograms (lib/log-buckets.ts), which add across
// runners slice by slice, and the merged slices' percentiles are read from the summed
// buckets. No k6 import: the bundles and the Node merge (load/report/merge.ts) share it.
import { addCounts, bucketLabel, bucketOf, bucketPercentile } from './log-buckets.ts';

/** The counter with one point per stream (tags: slice, status, ok). */
export const SLICE_METRIC = 'chatgate_slice';
/** The timed families kept per slice, by their k6 trend names. */
export const SLICE_FAMILIES = ['ttft_ms', 'itl_ms', 'e2e_ms'] as const;
export type SliceFamily = (typeof SLICE_FAMILIES)[number];

/** The tag value of the slice holding `elapsedMs` from the scenario's start. */
export function sliceTag(elapsedMs: number, sliceS: number): string {
  return `${Math.floor(Math.max(0, elapsedMs) / 1000 / sliceS) * sliceS}+${sliceS}`;
}

/** One slice of one runner (or of the merged test). */
export interface SliceCounts {
  sent: number;
  /** Streams that succeeded (judged and timed). */
  ok: number;
  /** Streams that did not end well (a status other than 2xx, no answer, a broken stream). */
  failed: number;
  /** Status -> streams; "0" is no answer. */
  status: Record<string, number>;
  /** Family -> log-bucket label -> samples. */
  buckets: Record<SliceFamily, Record<string, number>>;
}

export interface RunnerSlices {
  slice_s: number;
  /** Slice start (s from the runner's scenario start) -> its counts. */
  slices: Record<string, SliceCounts>;
}

function emptySlice(): SliceCounts {
  return { sent: 0, ok: 0, failed: 0, status: {}, buckets: { ttft_ms: {}, itl_ms: {}, e2e_ms: {} } };
}

export class SliceError extends Error {}

/** Per-slice counts from k6 `--out json` lines (points without a slice tag are not in any slice); undefined when none has one. */
export function slicesFromPoints(lines: Iterable<string>, where = 'k6 output'): RunnerSlices | undefined {
  let sliceS: number | undefined;
  const slices: Record<string, SliceCounts> = {};
  let n = 0;
  for (const line of lines) {
    n++;
    if (!line.includes('"Point"') || !line.includes('"slice"')) continue;
    let p: { type?: string; metric?: string; data?: { value?: number; tags?: Record<string, string> } };
    try {
      p = JSON.parse(line);
    } catch {
      throw new SliceError(`${where}:${n}: not a k6 JSON output line`);
    }
    const tag = p.type === 'Point' ? p.data?.tags?.slice : undefined;
    if (tag === undefined) continue;
    const m = /^(\d+(?:\.\d+)?)\+(\d+(?:\.\d+)?)$/.exec(tag);
    if (!m) throw new SliceError(`${where}:${n}: slice tag "${tag}" is not <start>+<length>`);
    const len = Number(m[2]);
    if (sliceS === undefined) sliceS = len;
    else if (len !== sliceS) throw new SliceError(`${where}:${n}: slices of ${len} s beside slices of ${sliceS} s`);
    const s = (slices[m[1]!] ??= emptySlice());
    const v = p.data!.value ?? 0;
    const tags = p.data!.tags!;
    if (p.metric === SLICE_METRIC) {
      s.sent++;
      s.status[tags.status ?? '0'] = (s.status[tags.status ?? '0'] ?? 0) + 1;
      if (tags.ok === '1') s.ok++;
      else s.failed++;
    } else if ((SLICE_FAMILIES as readonly string[]).includes(p.metric ?? '')) {
      const b = s.buckets[p.metric as SliceFamily];
      const label = bucketLabel(bucketOf(v));
      b[label] = (b[label] ?? 0) + 1;
    }
  }
  return sliceS === undefined ? undefined : { slice_s: sliceS, slices };
}

/** The runners' slices added slice by slice (slice i of each runner is from its own start, as k6 starts the runners of a test together). */
export function mergeSlices(runners: Array<{ path: string; slices: RunnerSlices }>): RunnerSlices | undefined {
  if (runners.length === 0) return undefined;
  const first = runners[0]!;
  const out: RunnerSlices = { slice_s: first.slices.slice_s, slices: {} };
  for (const r of runners) {
    if (r.slices.slice_s !== out.slice_s) throw new SliceError(`${r.path}: slices of ${r.slices.slice_s} s, but ${first.path} has ${out.slice_s} s (give every runner the same SLICE)`);
    for (const [start, s] of Object.entries(r.slices.slices)) {
      const into = (out.slices[start] ??= emptySlice());
      into.sent += s.sent;
      into.ok += s.ok;
      into.failed += s.failed;
      addCounts(into.status, s.status);
      for (const f of SLICE_FAMILIES) addCounts(into.buckets[f], s.buckets[f]);
    }
  }
  return out;
}

/** One row per slice, in time order, with its percentiles read from its buckets (null: no sample in the slice). */
export interface SliceRow {
  t_start_s: number;
  t_end_s: number;
  sent: number;
  ok: number;
  failed: number;
  error_share: number | null;
  errors_by_status: Record<string, number>;
  ttft_p50_ms: number | null; ttft_p95_ms: number | null; ttft_p99_ms: number | null;
  itl_p50_ms: number | null; itl_p95_ms: number | null; itl_p99_ms: number | null;
  e2e_p50_ms: number | null; e2e_p95_ms: number | null; e2e_p99_ms: number | null;
  samples: Record<SliceFamily, number>;
  /** The merged buckets themselves, so the rows merge again. */
  buckets: Record<SliceFamily, Record<string, number>>;
}

export function sliceRows(r: RunnerSlices): SliceRow[] {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
  return Object.keys(r.slices).map(Number).sort((a, b) => a - b).map((start) => {
    const s = r.slices[String(start)]!;
    const pct = (f: SliceFamily, q: number) => round(bucketPercentile(s.buckets[f], q));
    const errors: Record<string, number> = {};
    for (const [code, n] of Object.entries(s.status)) if (!(Number(code) >= 200 && Number(code) < 300)) errors[code] = n;
    const count = (f: SliceFamily) => Object.values(s.buckets[f]).reduce((a, b) => a + b, 0);
    return {
      t_start_s: start,
      t_end_s: start + r.slice_s,
      sent: s.sent,
      ok: s.ok,
      failed: s.failed,
      error_share: s.sent ? Math.round((s.failed / s.sent) * 10000) / 10000 : null,
      errors_by_status: errors,
      ttft_p50_ms: pct('ttft_ms', 50), ttft_p95_ms: pct('ttft_ms', 95), ttft_p99_ms: pct('ttft_ms', 99),
      itl_p50_ms: pct('itl_ms', 50), itl_p95_ms: pct('itl_ms', 95), itl_p99_ms: pct('itl_ms', 99),
      e2e_p50_ms: pct('e2e_ms', 50), e2e_p95_ms: pct('e2e_ms', 95), e2e_p99_ms: pct('e2e_ms', 99),
      samples: { ttft_ms: count('ttft_ms'), itl_ms: count('itl_ms'), e2e_ms: count('e2e_ms') },
      buckets: s.buckets,
    };
  });
}

/** The columns of a merged k6 run's slices.csv (written by load/report/slices.ts's slicesCsv). */
export const SLICE_CSV_COLUMNS = ['t_start_s', 't_end_s', 'sent', 'ok', 'failed', 'error_share', 'errors_by_status',
  'ttft_p50_ms', 'ttft_p95_ms', 'ttft_p99_ms', 'itl_p50_ms', 'itl_p95_ms', 'itl_p99_ms', 'e2e_p50_ms', 'e2e_p95_ms', 'e2e_p99_ms'] as const;
