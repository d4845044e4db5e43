// Every figure of a stream run per time slice (--slice), each slice judged against the
// SLOs. A request belongs to the slice of its intended send time (what a user arriving
// then met: sent, ok, its TTFT, ITL, E2E, error, cut stream); only `finished_ok` and
// tokens/s count by the time a stream ended (what was served then), and `in_flight` is
// what was open at the slice's end. A slice's
// histograms are folded into numbers once no request of it can still be open, so
// memory stays flat however long the run.
import { LatencyHistogram } from '../engine/histogram.ts';
import type { Outcome } from '../engine/lean-client.ts';
import type { Loss, SliceVerdict } from './damage.ts';

export interface SliceSlo {
  ttftP95Ms: number;
  errorShare: number;
  itlP95Ms?: number;
  e2eP95Ms?: number;
}

export interface SliceRow extends SliceVerdict {
  slice: number;
  phase: string;
  offered_rps: number;
  sent: number;
  not_sent: number;
  /** Of the requests sent (due) in the slice, how many succeeded. */
  ok: number;
  /** Streams that ended ok within the slice, whenever they were due: served throughput, may exceed `sent`. */
  finished_ok: number;
  in_flight: number;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  ttft_p99_ms: number | null;
  itl_p50_ms: number | null;
  itl_p95_ms: number | null;
  itl_p99_ms: number | null;
  e2e_p50_ms: number | null;
  e2e_p95_ms: number | null;
  e2e_p99_ms: number | null;
  output_tokens_per_s: number;
  error_share: number | null;
  errors_by_status: Record<string, number>;
  errors_by_class: Record<string, number>;
  streams_cut: number;
  /** Answers that were findings (every loss that is not graceful). */
  findings: number;
  /** Which SLOs the slice broke. */
  broken: string[];
  /** Changes marked within the slice. */
  marks: string[];
}

interface Open {
  sent: number;
  notSent: number;
  ok: number;
  failed: number;
  finishedOk: number;
  ended: number;
  dispatched: number;
  outputTokens: number;
  status: Map<string, number>;
  cls: Map<string, number>;
  cut: number;
  findings: number;
  ttft?: LatencyHistogram;
  itl?: LatencyHistogram;
  e2e?: LatencyHistogram;
  /** Folded percentiles, once the slice is closed. */
  folded?: Pick<SliceRow, 'ttft_p50_ms' | 'ttft_p95_ms' | 'ttft_p99_ms' | 'itl_p50_ms' | 'itl_p95_ms' | 'itl_p99_ms' | 'e2e_p50_ms' | 'e2e_p95_ms' | 'e2e_p99_ms'>;
}

export const SLICE_CSV_COLUMNS = [
  'slice', 't_start_s', 't_end_s', 'phase', 'offered_rps', 'sent', 'not_sent', 'ok', 'finished_ok', 'in_flight',
  'ttft_p50_ms', 'ttft_p95_ms', 'ttft_p99_ms', 'itl_p50_ms', 'itl_p95_ms', 'itl_p99_ms', 'e2e_p50_ms', 'e2e_p95_ms', 'e2e_p99_ms',
  'output_tokens_per_s', 'error_share', 'errors_by_status', 'errors_by_class', 'streams_cut', 'findings', 'within_slo', 'broken', 'marks',
] as const;

export class SliceRecorder {
  private readonly slices: Open[] = [];
  /** Slices before this index are folded. */
  private foldedUpTo = 0;

  constructor(private readonly t0: number, private readonly sliceMs: number, private readonly slo: SliceSlo, private readonly openForMs: number) {}

  sent(intendedAt: number): void {
    const s = this.at(intendedAt);
    s.sent++;
    s.dispatched++;
  }

  notSent(intendedAt: number): void {
    this.at(intendedAt).notSent++;
  }

  outcome(o: Outcome, loss: Loss | undefined): void {
    if (o.failure === 'aborted') {
      this.at(o.endAt).ended++;
      return;
    }
    const end = this.at(o.endAt);
    end.ended++;
    const s = this.at(o.intendedAt);
    if (o.ok) {
      s.ok++;
      end.finishedOk++;
      end.outputTokens += o.tokens?.completion ?? o.usageTokens ?? 0;
      if (o.firstContentAt !== undefined) (s.ttft ??= new LatencyHistogram(2)).record(o.firstContentAt - o.intendedAt);
      if (o.gaps.count > 0) o.gaps.recordInto((s.itl ??= new LatencyHistogram(2)));
      (s.e2e ??= new LatencyHistogram(2)).record(o.endAt - o.intendedAt);
    } else if (loss) {
      s.failed++;
      if (o.status !== undefined) inc(s.status, String(o.status));
      inc(s.cls, loss.cls);
      if (loss.cls === 'stream_cut') s.cut++;
      if (!loss.graceful) s.findings++;
    }
    this.fold(o.endAt);
  }

  /** The rows, one per slice from the start to the last with anything in it. */
  rows(offeredAt: (tS: number) => number, phaseAt: (tS: number) => string, marks: Array<{ t_s: number; label: string }>): SliceRow[] {
    this.fold(Infinity);
    const sliceS = this.sliceMs / 1000;
    let open = 0;
    return this.slices.map((raw, i) => {
      const s = raw ?? blank();
      open += s.dispatched - s.ended;
      const tStart = round3(i * sliceS);
      const tEnd = round3((i + 1) * sliceS);
      const attempted = s.sent + s.notSent;
      const errorShare = attempted > 0 ? round6((s.failed + s.notSent) / attempted) : null;
      const f = s.folded!;
      const broken: string[] = [];
      if (attempted > 0) {
        if (f.ttft_p95_ms !== null && f.ttft_p95_ms > this.slo.ttftP95Ms) broken.push('ttft_p95_ms');
        if (errorShare !== null && errorShare > this.slo.errorShare) broken.push('error_share');
        if (this.slo.itlP95Ms !== undefined && f.itl_p95_ms !== null && f.itl_p95_ms > this.slo.itlP95Ms) broken.push('itl_p95_ms');
        if (this.slo.e2eP95Ms !== undefined && f.e2e_p95_ms !== null && f.e2e_p95_ms > this.slo.e2eP95Ms) broken.push('e2e_p95_ms');
      }
      return {
        slice: i,
        t_start_s: tStart,
        t_end_s: tEnd,
        phase: phaseAt((tStart + tEnd) / 2),
        offered_rps: round3(offeredAt((tStart + tEnd) / 2)),
        sent: s.sent,
        not_sent: s.notSent,
        ok: s.ok,
        finished_ok: s.finishedOk,
        in_flight: Math.max(0, open),
        ...f,
        output_tokens_per_s: round3(s.outputTokens / sliceS),
        error_share: errorShare,
        errors_by_status: Object.fromEntries(s.status),
        errors_by_class: Object.fromEntries(s.cls),
        streams_cut: s.cut,
        findings: s.findings,
        within_slo: attempted === 0 ? null : broken.length === 0,
        broken,
        marks: marks.filter((m) => m.t_s >= tStart && m.t_s < tEnd).map((m) => m.label),
      };
    });
  }

  private at(t: number): Open {
    const i = Math.max(0, Math.floor((t - this.t0) / this.sliceMs));
    for (let k = this.slices.length; k <= i; k++) this.slices.push(blank());
    return this.slices[i]!;
  }

  /** Folds every slice that ended more than the request time limit before `now`: nothing of it can still arrive. */
  private fold(now: number): void {
    while (this.foldedUpTo < this.slices.length && this.t0 + (this.foldedUpTo + 1) * this.sliceMs + this.openForMs < now) {
      const s = this.slices[this.foldedUpTo++]!;
      const p = (h: LatencyHistogram | undefined, q: number) => (h && h.count > 0 ? h.percentileMs(q) : null);
      s.folded = {
        ttft_p50_ms: p(s.ttft, 50), ttft_p95_ms: p(s.ttft, 95), ttft_p99_ms: p(s.ttft, 99),
        itl_p50_ms: p(s.itl, 50), itl_p95_ms: p(s.itl, 95), itl_p99_ms: p(s.itl, 99),
        e2e_p50_ms: p(s.e2e, 50), e2e_p95_ms: p(s.e2e, 95), e2e_p99_ms: p(s.e2e, 99),
      };
      s.ttft = s.itl = s.e2e = undefined;
    }
  }
}

/** The rows as CSV (one line per slice; maps as "503:4;429:1", lists as "a;b"). */
export function slicesCsv<R extends object>(rows: R[], columns: ReadonlyArray<keyof R> = SLICE_CSV_COLUMNS as unknown as ReadonlyArray<keyof R>): string {
  const cell = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    if (Array.isArray(v)) return quote(v.join(';'));
    if (typeof v === 'object') return quote(Object.entries(v as Record<string, number>).map(([k, n]) => `${k}:${n}`).join(';'));
    return quote(String(v));
  };
  return `${columns.join(',')}\n${rows.map((r) => columns.map((c) => cell(r[c])).join(',')).join('\n')}\n`;
}

function quote(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function blank(): Open {
  return { sent: 0, notSent: 0, ok: 0, failed: 0, finishedOk: 0, ended: 0, dispatched: 0, outputTokens: 0, status: new Map(), cls: new Map(), cut: 0, findings: 0 };
}

function inc(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
