// Collects what a run saw, request by request, into fixed-size aggregates: counts by
// status and failure kind, HDR histograms (TTFT, inter-token, E2E, or plain latency),
// per-route figures, a per-second timeline, and the checks of error answers. Nothing
// per request is kept, so memory does not grow with the run.
import { errorBodyClause, isServerError } from '../../lib/spec/rules/status.ts';
import { LatencyHistogram, round3, type LatencySummary } from './histogram.ts';
import { FAILURE_KINDS, type FailureKind, type Outcome } from './lean-client.ts';
import { ROUTE_KINDS, type RouteKind } from './request-bodies.ts';
import { checkRetryHeaders } from './error-checks.ts';
import { errorBodyProblems } from '../../lib/spec/error-body.ts';
import { errorSchemaProblems } from '../../lib/spec/schema-validator.ts';
import type { Findings } from '../report/findings.ts';
import { redact } from '../../lib/run/redact.ts';

export interface TimelinePoint {
  t_s: number;
  sent: number;
  responses: number;
  ok: number;
  failures: number;
  status: Record<string, number>;
  /** TTFT (streams) or latency (plain requests) of the successes sent in this second; null when none (a gap, not 0 ms). */
  p50_ms: number | null;
  p95_ms: number | null;
  /** Requests in flight at the end of this second (lean client; absent for autocannon, which keeps its connections busy). */
  in_flight?: number;
  /** Output tokens of the successes completed in this second (usage, else the tokenizer). */
  output_tokens: number;
}

/** One request in the report's scatter: [send time s, TTFT ms or null, E2E ms, status (0: no answer)]. */
export type RequestPoint = [number, number | null, number, number];
/** The scatter keeps at most this many requests, evenly spread over the run. */
const MAX_POINTS = 4000;

interface Bucket {
  sent: number;
  responses: number;
  ok: number;
  failures: number;
  status: Map<number, number>;
  /** Made on the second's first sample; folded into p50/p95 once nothing more can arrive for it. */
  latency?: LatencyHistogram;
  p50?: number | null;
  p95?: number | null;
  /** Requests sent for this second (by their intended time) not yet answered. */
  pending: number;
  started: number;
  ended: number;
  outputTokens: number;
}

interface RouteStats { sent: number; ok: number; status: Map<number, number>; latency: LatencyHistogram }

const MAX_EXAMPLES_PER_KIND = 3;

export class Recorder {
  /** Time zero of the run (performance.now()): the first phase's start, once one is marked. */
  t0: number;
  private clockStarted = false;
  sent = 0;
  notSent = 0;
  responses = 0;
  ok = 0;
  aborted = 0;
  /** Streams the client cancelled on purpose (--cancel-share): counted apart, never failures. */
  cancelled = 0;
  lastEndAt = 0;
  readonly status = new Map<number, number>();
  readonly failures = new Map<FailureKind, number>();
  readonly failureExamples: Array<{ kind: FailureKind; status?: number; detail: string }> = [];
  /** Plain requests: latency of successes; every other answer's goes to latencyFailed. */
  readonly latency = new LatencyHistogram();
  readonly latencyFailed = new LatencyHistogram();
  /** Plain requests: latency from when the request went on the wire (what a sender blind to coordinated omission reports). */
  readonly latencyFromSend = new LatencyHistogram();
  readonly ttft = new LatencyHistogram();
  readonly firstEvent = new LatencyHistogram();
  readonly itl = new LatencyHistogram();
  readonly tpot = new LatencyHistogram();
  readonly e2e = new LatencyHistogram();
  /** --max-concurrency: each request's wait in the client's own queue for a slot (0 when one was free). */
  readonly clientQueue = new LatencyHistogram();
  /** Time to the second output chunk. */
  readonly ttst = new LatencyHistogram();
  /** Time to the first answer (content) chunk: later than TTFT when reasoning chunks come first. */
  readonly ttfa = new LatencyHistogram();
  /** Streams whose first output was reasoning (delta.reasoning or reasoning_content), and streams with any reasoning. */
  reasoningFirst = 0;
  withReasoning = 0;
  /** usage.prompt_tokens_details.cached_tokens: answers reporting it, its sum, and their prompt tokens. */
  readonly cache = { reporting: 0, cachedTokens: 0, promptTokens: 0 };
  /** Where each phase (sweep step, ramp step) began, for the report's over-time charts. */
  private readonly phaseMarks: Array<{ t_s: number; label: string }> = [];
  /** A bounded, evenly thinned sample of requests for the report's scatter. */
  private readonly points: RequestPoint[] = [];
  private pointStride = 1;
  private pointSeen = 0;
  /** How late the driver sent requests against their schedule (driver health, not target latency). */
  readonly scheduleLag = new LatencyHistogram();
  /** SSE events read, every stream (the bench divides the driver's CPU by it). */
  sseEvents = 0;
  usageTokens = 0;
  withUsage = 0;
  withoutUsage = 0;
  outputChars = 0;
  bodiesChecked = 0;
  bodiesInvalid = 0;
  errorAnswersChecked = 0;
  errorAnswersImproper = 0;
  readonly retryHints: number[] = [];
  /** Token accounting of successful requests: each count from usage, else the tokenizer (load/engine/token-count.ts). */
  inputTokens = 0;
  outputTokens = 0;
  readonly promptSources = { usage: 0, tokenizer: 0, none: 0 };
  readonly completionSources = { usage: 0, tokenizer: 0, none: 0 };
  /** usage.prompt_tokens minus the tokenizer's count of what was sent, where both are known. */
  private readonly promptCheck = { compared: 0, equal: 0, min: Infinity, max: -Infinity };
  /** Per-request SLOs: a success meeting all of them is goodput. */
  slo: { ttftMs?: number; itlP95Ms?: number; e2eMs?: number } | undefined;
  /** False: a failed request's own findings are the caller's (a rehearsal lists each lost request once, with its curl line). */
  requestFindings = true;
  goodOk = 0;
  goodOutputTokens = 0;
  private readonly timeline: Bucket[] = [];
  /** Seconds of the timeline before this one are folded (an hour-long hold kept 3,600 histograms). */
  private foldedUpTo = 0;
  private readonly routes = new Map<RouteKind, RouteStats>();

  constructor(
    readonly stream: boolean,
    private readonly findings: Findings,
    t0 = performance.now(), // until the first phase is marked (markPhase)
    /** Called with each outcome after it is recorded (sweep steps, rate-limit phases). */
    readonly onOutcome?: (o: Outcome) => void,
  ) {
    this.t0 = t0;
  }

  // --- recording ---------------------------------------------------------------------

  recordSent(route: RouteKind, intendedAt: number, lagMs: number): void {
    this.sent++;
    const sentFor = this.bucket(intendedAt);
    sentFor.sent++;
    sentFor.pending++;
    this.route(route).sent++;
    this.scheduleLag.record(Math.max(0, lagMs));
  }

  /** A request autocannon wrote (throughput): counted only, it has no schedule to lag behind. */
  countSent(at: number): void {
    this.sent++;
    this.bucket(at).sent++;
  }

  recordQueued(waitMs: number): void {
    this.clientQueue.record(Math.max(0, waitMs));
  }

  recordNotSent(intendedAt: number): void {
    this.notSent++;
    this.bucket(intendedAt).failures++;
  }

  /** An answer from the lean client (stream or plain). */
  recordOutcome(o: Outcome): void {
    this.sseEvents += o.events;
    this.bucket(o.sentAt).started++;
    this.bucket(o.endAt).ended++;
    this.bucket(o.intendedAt).pending--;
    if (o.failure === 'aborted' || o.failure === 'cancelled') {
      if (o.failure === 'cancelled') this.cancelled++;
      else this.aborted++;
      this.onOutcome?.(o);
      this.foldTimeline(o.endAt);
      return;
    }
    this.lastEndAt = Math.max(this.lastEndAt, o.endAt);
    const b = this.bucket(o.endAt);
    const route = this.route(o.route);
    if (o.status !== undefined) {
      this.responses++;
      b.responses++;
      inc(this.status, o.status);
      inc(b.status, o.status);
      inc(route.status, o.status);
      if (o.status >= 300) this.checkErrorAnswer(o.status, o.headers ?? {}, o.errorBody ?? '');
    }
    if (o.schemaChecked && o.status !== undefined && o.status < 300) {
      this.bodiesChecked++;
      if (o.failure === 'bad_body') this.bodiesInvalid++;
    }
    if (o.failure) {
      b.failures++;
      this.countFailure(o.failure, o.failureDetail ?? '', o.status, outcomeFailureClause(o));
    }
    const e2e = o.endAt - o.intendedAt;
    this.addPoint(o, e2e);
    if (!o.stream && o.status !== undefined) (o.ok ? this.latency : this.latencyFailed).record(e2e);
    if (!o.stream && o.ok) this.latencyFromSend.record(o.endAt - (o.wireAt ?? o.sentAt));
    if (!o.ok) {
      this.onOutcome?.(o);
      return;
    }
    this.ok++;
    b.ok++;
    route.ok++;
    if (o.usageTokens !== undefined) {
      this.withUsage++;
      this.usageTokens += o.usageTokens;
    } else this.withoutUsage++;
    this.outputChars += o.outputChars;
    const t = o.tokens;
    if (t) {
      this.promptSources[t.promptSource]++;
      this.completionSources[t.completionSource]++;
      this.inputTokens += t.prompt ?? 0;
      this.outputTokens += t.completion ?? 0;
      if (t.promptSource === 'usage' && t.promptSent !== undefined) {
        const d = t.prompt! - t.promptSent;
        this.promptCheck.compared++;
        if (d === 0) this.promptCheck.equal++;
        if (d < this.promptCheck.min) this.promptCheck.min = d;
        if (d > this.promptCheck.max) this.promptCheck.max = d;
      }
    }
    const completion = t?.completion ?? o.usageTokens;
    b.outputTokens += completion ?? 0;
    if (o.usageCachedTokens !== undefined && o.usagePromptTokens !== undefined) {
      this.cache.reporting++;
      this.cache.cachedTokens += o.usageCachedTokens;
      this.cache.promptTokens += o.usagePromptTokens;
    }
    if (o.reasoningChunks) {
      this.withReasoning++;
      if (o.firstAnswerAt === undefined || o.firstAnswerAt > o.firstContentAt!) this.reasoningFirst++;
    }
    if (this.slo && this.meetsSlo(o, e2e)) {
      this.goodOk++;
      this.goodOutputTokens += completion ?? 0;
    }
    if (o.stream && o.firstContentAt === undefined) {
      // A capped request answered with no output (legal): no token to time.
      this.e2e.record(e2e);
      if (o.firstEventAt !== undefined) this.firstEvent.record(o.firstEventAt - o.intendedAt);
    } else if (o.stream) {
      const ttft = o.firstContentAt! - o.intendedAt;
      this.ttft.record(ttft);
      this.firstEvent.record(o.firstEventAt! - o.intendedAt);
      this.e2e.record(e2e);
      if (o.secondContentAt !== undefined) this.ttst.record(o.secondContentAt - o.intendedAt);
      if (o.firstAnswerAt !== undefined) this.ttfa.record(o.firstAnswerAt - o.intendedAt);
      o.gaps.recordInto(this.itl);
      if (completion !== undefined && completion > 1) {
        this.tpot.record((o.lastContentAt! - o.firstContentAt!) / (completion - 1));
      }
      // Placed at its send second: a stall shows where it began, not seconds later.
      this.timelineLatency(o.intendedAt, ttft);
      route.latency.record(ttft);
    } else {
      this.timelineLatency(o.intendedAt, e2e);
      route.latency.record(e2e);
    }
    this.onOutcome?.(o);
    this.foldTimeline(o.endAt);
  }

  private addPoint(o: Outcome, e2e: number): void {
    if (this.pointSeen++ % this.pointStride !== 0) return;
    const ttft = o.ok && o.stream && o.firstContentAt !== undefined ? round3(o.firstContentAt - o.intendedAt) : null;
    this.points.push([round3((o.intendedAt - this.t0) / 1000), ttft, round3(e2e), o.status ?? 0]);
    if (this.points.length >= MAX_POINTS) {
      // Keep every other point and halve the rate from now on: an even sample of the whole run.
      let k = 0;
      for (let i = 0; i < this.points.length; i += 2) this.points[k++] = this.points[i]!;
      this.points.length = k;
      this.pointStride *= 2;
    }
  }

  markPhase(label: string, at: number): void {
    // The clock starts with the first phase's driver, not before the unmeasured lone requests (seconds).
    if (!this.clockStarted) { this.t0 = at; this.clockStarted = true; }
    if (this.phaseMarks.length < 1000) this.phaseMarks.push({ t_s: round3((at - this.t0) / 1000), label });
  }

  phases(): Array<{ t_s: number; label: string }> {
    return this.phaseMarks;
  }

  /** The sample of requests for the report's scatter (send time, TTFT, E2E, status), and how many it stands for. */
  requestPoints(): { points: RequestPoint[]; of: number } {
    return { points: this.points, of: this.pointSeen };
  }

  /**
   * A response seen by autocannon (throughput): status and latency, and `badBody` when
   * the sampled body check failed (a 2xx that is not a success).
   */
  recordResponse(status: number, latencyMs: number, atMs: number, expectedIntervalMs: number | undefined, badBody?: string, routeKind: RouteKind = 'chat'): void {
    this.responses++;
    this.lastEndAt = Math.max(this.lastEndAt, atMs);
    const b = this.bucket(atMs);
    b.responses++;
    inc(this.status, status);
    inc(b.status, status);
    // autocannon reports answers, not sends, per route: a route's "sent" counts its answers.
    const route = this.route(routeKind);
    route.sent++;
    inc(route.status, status);
    const ok = status < 300 && badBody === undefined;
    const h = ok ? this.latency : this.latencyFailed;
    if (expectedIntervalMs !== undefined) h.recordCorrected(latencyMs, expectedIntervalMs);
    else h.record(latencyMs);
    if (ok) {
      this.ok++;
      b.ok++;
      this.timelineLatency(atMs, latencyMs);
      route.ok++;
      route.latency.record(latencyMs);
      this.foldTimeline(atMs);
      return;
    }
    b.failures++;
    if (badBody !== undefined) this.countFailure('bad_body', badBody, status);
  }

  recordBodyChecked(valid: boolean): void {
    this.bodiesChecked++;
    if (!valid) this.bodiesInvalid++;
  }

  recordTransportFailure(kind: FailureKind, detail: string, atMs: number): void {
    this.bucket(atMs).failures++;
    this.countFailure(kind, detail, undefined);
  }

  countFailure(kind: FailureKind, detail: string, status: number | undefined, clause = failureClause(kind, detail)): void {
    inc(this.failures, kind);
    if (this.failureExamples.filter((e) => e.kind === kind).length < MAX_EXAMPLES_PER_KIND) {
      this.failureExamples.push({ kind, status, detail: redact(detail).slice(0, 300) });
    }
    if (clause && this.requestFindings) this.findings.add(clause.id, clause.message, detail, clause.level);
  }

  /** Every >= 300 answer: error body (ERR-1/LIM-1/ERR-4), 5xx other than 503 (ERR-2), 429 hints (LIM-2). */
  checkErrorAnswer(status: number, headers: Record<string, string>, body: string): void {
    this.errorAnswersChecked++;
    const example = `HTTP ${status} ${headers['content-type'] ?? '(no Content-Type)'} ${JSON.stringify(body.slice(0, 200))}`;
    if (isServerError(status) && this.requestFindings) this.findings.add('ERR-2', `answered ${status} (a 5xx other than 503) under load`, example);
    if (status < 400) return;
    const problems = errorBodyProblems(headers['content-type'], body, errorSchemaProblems);
    if (problems.length > 0) {
      this.errorAnswersImproper++;
      const clause = errorBodyClause(status);
      if (this.requestFindings) this.findings.add(clause, `${status} without a proper error body: ${problems[0]}`, example);
    }
    if (status === 429) {
      const hint = checkRetryHeaders(headers);
      for (const p of hint.problems) this.findings.add('LIM-2', p, headerExample(headers));
      if (hint.waitMs !== undefined && this.retryHints.length < 10_000) this.retryHints.push(hint.waitMs);
    }
  }

  // --- reading -----------------------------------------------------------------------

  /** Requests that count for shares: sent or due, minus those the driver itself stopped. */
  get attempted(): number {
    return this.sent + this.notSent - this.aborted - this.cancelled;
  }

  activeSeconds(): number {
    return Math.max(0.001, (this.lastEndAt - this.t0) / 1000);
  }

  statusCodes(): Record<string, number> {
    return Object.fromEntries([...this.status].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]));
  }

  failureCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const k of FAILURE_KINDS) out[k] = this.failures.get(k) ?? 0;
    out.not_sent = this.notSent;
    return out;
  }

  shares(): { error_share: number; share_429: number; share_503: number; share_5xx_other: number; share_transport_errors: number; body_invalid_share: number } {
    const n = Math.max(1, this.attempted);
    let other5xx = 0;
    for (const [s, c] of this.status) if (isServerError(s)) other5xx += c;
    const transport = countOf(this.failures, 'timeout', 'dropped', 'reset', 'refused', 'other');
    return {
      error_share: round6(Math.max(0, this.attempted - this.ok) / n),
      share_429: round6((this.status.get(429) ?? 0) / n),
      share_503: round6((this.status.get(503) ?? 0) / n),
      share_5xx_other: round6(other5xx / n),
      share_transport_errors: round6(transport / n),
      body_invalid_share: round6(this.bodiesChecked === 0 ? 0 : this.bodiesInvalid / this.bodiesChecked),
    };
  }

  timelinePoints(): TimelinePoint[] {
    let inFlight = 0;
    return this.timeline.map((b, i) => ({
      t_s: i,
      sent: b?.sent ?? 0,
      responses: b?.responses ?? 0,
      ok: b?.ok ?? 0,
      failures: b?.failures ?? 0,
      status: b ? Object.fromEntries([...b.status].map(([k, v]) => [String(k), v])) : {},
      p50_ms: b?.latency ? b.latency.percentileMs(50) : b?.p50 ?? null,
      p95_ms: b?.latency ? b.latency.percentileMs(95) : b?.p95 ?? null,
      ...(this.pointSeen > 0 ? { in_flight: (inFlight += (b?.started ?? 0) - (b?.ended ?? 0)) } : {}),
      output_tokens: b?.outputTokens ?? 0,
    }));
  }

  routeStats(): Record<string, { sent: number; ok: number; status_codes: Record<string, number>; p50_ms: number; p95_ms: number }> {
    const out: Record<string, { sent: number; ok: number; status_codes: Record<string, number>; p50_ms: number; p95_ms: number }> = {};
    for (const r of ROUTE_KINDS) {
      const s = this.routes.get(r);
      if (!s) continue;
      out[r] = {
        sent: s.sent, ok: s.ok,
        status_codes: Object.fromEntries([...s.status].map(([k, v]) => [String(k), v])),
        p50_ms: s.latency.percentileMs(50), p95_ms: s.latency.percentileMs(95),
      };
    }
    return out;
  }

  output(): { tokens_source: 'usage' | 'characters' | 'none'; output_tokens_total: number; output_tokens_per_s: number | null; output_chars_total: number; output_chars_per_s: number; requests_with_usage: number; requests_without_usage: number; note?: string } {
    const secs = this.activeSeconds();
    const source = this.withUsage > 0 ? 'usage' : this.withoutUsage > 0 ? 'characters' : 'none';
    const out = {
      tokens_source: source as 'usage' | 'characters' | 'none',
      output_tokens_total: this.usageTokens,
      output_tokens_per_s: this.withUsage > 0 ? round3(this.usageTokens / secs) : null,
      output_chars_total: this.outputChars,
      output_chars_per_s: round3(this.outputChars / secs),
      requests_with_usage: this.withUsage,
      requests_without_usage: this.withoutUsage,
    };
    if (source === 'characters') {
      return { ...out, note: 'The target sent no usage (stream_options.include_usage ignored): output is counted in characters, not tokens. Chunks are never counted as tokens. summary.tokens has the tokenizer\'s count of the replies, when a tokenizer was used.' };
    }
    if (this.withUsage > 0 && this.withoutUsage > 0) {
      return { ...out, note: `${this.withoutUsage} successful requests carried no usage; tokens/s counts only the ${this.withUsage} that did.` };
    }
    return out;
  }

  private meetsSlo(o: Outcome, e2e: number): boolean {
    const slo = this.slo!;
    if (o.stream && slo.ttftMs !== undefined && (o.firstContentAt === undefined || o.firstContentAt - o.intendedAt > slo.ttftMs)) return false;
    if (slo.e2eMs !== undefined && e2e > slo.e2eMs) return false;
    if (o.stream && slo.itlP95Ms !== undefined && o.gaps.count > 0 && o.gaps.percentileMs(95) > slo.itlP95Ms) return false;
    return true;
  }

  /** Input, output and total tokens and their rates, each count's source, and usage checked against the tokenizer. */
  tokens(): Record<string, unknown> | null {
    const ps = this.promptSources;
    const cs = this.completionSources;
    if (ps.usage + ps.tokenizer + ps.none === 0) return null;
    const secs = this.activeSeconds();
    const c = this.promptCheck;
    const notes: string[] = [];
    if (ps.tokenizer > 0) notes.push(`${ps.tokenizer} requests had no usage.prompt_tokens: their input tokens are the tokenizer's count of the message contents sent (no chat-template tokens).`);
    if (cs.tokenizer > 0) notes.push(`${cs.tokenizer} requests had no usage.completion_tokens: their output tokens are the tokenizer's count of the reply text received.`);
    if (ps.none + cs.none > 0) notes.push(`${ps.none} input and ${cs.none} output counts are missing (no usage and no tokenizer): the totals leave them out.`);
    return {
      input_tokens_total: this.inputTokens,
      output_tokens_total: this.outputTokens,
      input_tokens_per_s: round3(this.inputTokens / secs),
      output_tokens_per_s: round3(this.outputTokens / secs),
      total_tokens_per_s: round3((this.inputTokens + this.outputTokens) / secs),
      prompt_tokens_source: { ...ps },
      completion_tokens_source: { ...cs },
      prompt_tokens_usage_vs_sent: c.compared === 0 ? null : { compared: c.compared, equal: c.equal, min_difference: c.min, max_difference: c.max },
      ...this.cacheAndReasoning(),
      ...(notes.length ? { note: notes.join(' ') } : {}),
    };
  }

  /** Share of prompt tokens the target served from its cache (null when no answer reported cached_tokens): a step's own with a step's recorder. */
  cacheHitShare(): number | null {
    return this.cache.promptTokens > 0 ? round6(this.cache.cachedTokens / this.cache.promptTokens) : null;
  }

  /** Prefix-cache hits (usage.prompt_tokens_details.cached_tokens) and reasoning streams, when the target reported any. */
  cacheAndReasoning(): Record<string, unknown> {
    const c = this.cache;
    return {
      ...(c.reporting > 0 ? { cache: { requests_reporting_cached_tokens: c.reporting, cached_prompt_tokens: c.cachedTokens, prompt_tokens: c.promptTokens, cache_hit_share: this.cacheHitShare() } } : {}),
      ...(this.withReasoning > 0 ? { reasoning: { streams_with_reasoning: this.withReasoning, reasoning_first: this.reasoningFirst, note: 'TTFT counts the first output chunk, reasoning included; ttfa_ms (time to first answer token) the first content chunk.' } } : {}),
    };
  }

  latencySummaries(): Record<string, LatencySummary> {
    const queue: Record<string, LatencySummary> = this.clientQueue.count > 0 ? { client_queue_ms: this.clientQueue.summary() } : {};
    if (!this.stream) return { latency_ms: this.latency.summary(), latency_failed_ms: this.latencyFailed.summary(), ...queue };
    return {
      ttft_ms: this.ttft.summary(),
      first_event_ms: this.firstEvent.summary(),
      itl_ms: this.itl.summary(),
      tpot_ms: this.tpot.summary(),
      e2e_ms: this.e2e.summary(),
      ...(this.ttst.count > 0 ? { ttst_ms: this.ttst.summary() } : {}),
      ...(this.reasoningFirst > 0 ? { ttfa_ms: this.ttfa.summary() } : {}),
      ...queue,
    };
  }

  /** The histograms to plot and store, by summary name. */
  histograms(): Record<string, LatencyHistogram> {
    return this.stream
      ? { ttft_ms: this.ttft, itl_ms: this.itl, e2e_ms: this.e2e, tpot_ms: this.tpot, first_event_ms: this.firstEvent, ttst_ms: this.ttst, ...(this.reasoningFirst > 0 ? { ttfa_ms: this.ttfa } : {}) }
      : { latency_ms: this.latency, latency_failed_ms: this.latencyFailed };
  }

  private bucket(atMs: number): Bucket {
    const i = Math.max(0, Math.floor((atMs - this.t0) / 1000));
    let b = this.timeline[i];
    if (!b) {
      for (let k = this.timeline.length; k <= i; k++) {
        this.timeline[k] ??= { sent: 0, responses: 0, ok: 0, failures: 0, status: new Map(), pending: 0, started: 0, ended: 0, outputTokens: 0 };
      }
      b = this.timeline[i]!;
    }
    return b;
  }

  /** Seconds of the timeline still holding a histogram (the rest are folded). */
  openTimelineHistograms(): number {
    return this.timeline.filter((b) => b?.latency).length;
  }

  /** A latency in its second of the timeline; a second already folded keeps its figures (an answer past its deadline). */
  private timelineLatency(atMs: number, ms: number): void {
    const i = Math.max(0, Math.floor((atMs - this.t0) / 1000));
    if (i < this.foldedUpTo) return;
    (this.bucket(atMs).latency ??= new LatencyHistogram(2)).record(ms);
  }

  /** Folds the seconds that ended 2 s before `now` and wait for no answer: their p50/p95 are all the chart needs. */
  private foldTimeline(now: number): void {
    const current = Math.floor((now - this.t0) / 1000);
    while (this.foldedUpTo < Math.min(this.timeline.length, current - 2)) {
      const b = this.timeline[this.foldedUpTo]!;
      if (b.pending > 0) return;
      if (b.latency) {
        b.p50 = b.latency.percentileMs(50);
        b.p95 = b.latency.percentileMs(95);
        b.latency = undefined;
      }
      this.foldedUpTo++;
    }
  }

  private route(r: RouteKind): RouteStats {
    let s = this.routes.get(r);
    if (!s) this.routes.set(r, (s = { sent: 0, ok: 0, status: new Map(), latency: new LatencyHistogram(2) }));
    return s;
  }
}

/** Which clause a failure breaks (the recorder's findings, a rehearsal's lost requests). Timeouts are capacity, not misbehaviour: INFO. */
/** A 2xx stream that began and was cut (a lost connection or no data: [DONE]): EV-6, not LIM-1, whose no-answer case it is not. */
export function isCutStream(o: Pick<Outcome, 'stream' | 'status' | 'failure'>): boolean {
  return o.stream && o.status !== undefined && o.status < 300 && (o.failure === 'reset' || o.failure === 'incomplete_stream');
}

/** The clause a failed outcome breaks: one rule for the recorder's findings and the rehearsal's damage report. */
export function outcomeFailureClause(o: Pick<Outcome, 'stream' | 'status' | 'failure' | 'failureDetail' | 'events'>): ReturnType<typeof failureClause> {
  if (isCutStream(o)) return { id: 'EV-6', message: o.failure === 'reset' ? 'stream cut by a lost connection before data: [DONE]' : 'stream ended without data: [DONE]' };
  return o.failure ? failureClause(o.failure, o.failureDetail ?? '') : undefined;
}

export function failureClause(kind: FailureKind, detail: string): { id: string; message: string; level?: 'INFO' } | undefined {
  switch (kind) {
    case 'dropped': return { id: 'LIM-1', message: 'connection dropped without a response under load' };
    case 'reset': return { id: 'LIM-1', message: 'connection lost in the middle of a response under load' };
    case 'incomplete_stream': return { id: 'EV-6', message: 'stream ended without data: [DONE]' };
    case 'timeout': return { id: 'LOAD', message: 'requests timed out (no complete answer within the time limit)', level: 'INFO' };
    case 'refused': return { id: 'LOAD', message: 'connections refused', level: 'INFO' };
    case 'bad_body': {
      const m = /breaks ([A-Z]+-[A-Z0-9-]+)/.exec(detail);
      if (m) return { id: m[1]!, message: `2xx body breaks ${m[1]} (a fast wrong answer is not a success)` };
      if (/text\/event-stream/.test(detail)) return { id: 'EV-1', message: 'stream not served as text/event-stream' };
      if (/not JSON|not an object/.test(detail) && /chunk/.test(detail)) return { id: 'EV-3', message: 'stream chunk is not a JSON object' };
      if (/SSE:/.test(detail)) return { id: 'EV-2', message: 'malformed server-sent events' };
      if (/no content/.test(detail)) return { id: 'EV-4', message: 'stream carried no content' };
      if (/after \[DONE\]/.test(detail)) return { id: 'EV-6', message: 'data after [DONE]' };
      if (/error event/.test(detail)) return { id: 'EV-3', message: 'error event inside a 200 stream' };
      if (/Content-Type/.test(detail)) return { id: 'CHAT-1', message: 'reply not served as JSON' };
      return { id: 'SVC-1', message: 'a 2xx reply that is not a usable chat completion' };
    }
    default: return undefined;
  }
}

function headerExample(h: Record<string, string>): string {
  const keep = Object.entries(h).filter(([k]) => /^(retry-after|retry-after-ms|x-ratelimit-|ratelimit)/.test(k));
  return keep.length ? keep.map(([k, v]) => `${k}: ${v}`).join('; ') : '(no rate-limit headers)';
}

function inc<K>(m: Map<K, number>, k: K): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

function countOf(m: Map<FailureKind, number>, ...kinds: FailureKind[]): number {
  let n = 0;
  for (const k of kinds) n += m.get(k) ?? 0;
  return n;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
