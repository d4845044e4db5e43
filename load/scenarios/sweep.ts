// `sweep`: streaming load raised step by step (arrival rate, or concurrent streams)
// until a step breaks the SLO or 429/503 dominate, then bisected between the last step
// that met the SLO and the first that broke it until they are within --sweep-tolerance
// (or --sweep-refine-steps ran out). Each step reports the rate offered, the rate sent,
// what completed inside its window (answers finished in it / its length; never more
// than the target completed), the backlog in flight at its end, goodput (answers in the
// window that met every per-request SLO, as in DistServe/GuideLLM), and the latency of
// the requests sent after a short settle; the answer is the interval between the highest
// rate that met the SLO and the lowest that broke it, with the SLO that bound it and the
// samples behind both ends. A step in which the
// driver itself fell behind (schedule lag or event-loop delay past a stated bound) is
// invalid: neither the target's success nor its failure.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Recorder } from '../engine/recorder.ts';
import { Findings } from '../report/findings.ts';
import { stepTiming, sweepSteps } from '../setup/safety.ts';
import type { Outcome } from '../engine/lean-client.ts';
import type { DriveMode } from '../engine/load-driver.ts';
import type { LoadOptions } from '../setup/options.ts';
import { drivePhase } from './drive.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

/** One SLO a step can break: the key names the summary field it is judged on. */
export type SloKey = 'no_success' | 'ttft_p95_ms' | 'itl_p95_ms' | 'tpot_p95_ms' | 'e2e_p95_ms' | 'error_share';

export interface SweepStep {
  step: number;
  /** ladder: the rising steps; refine: the bisection after the first broken one. */
  phase: 'ladder' | 'refine';
  offered: number;
  /** Length of the step's sending window, and its first part whose requests are not in the latency figures. */
  duration_s: number;
  settle_s: number;
  sent: number;
  sent_rps: number;
  /** Successful answers finished inside the window, and per second of it. */
  completed: number;
  completed_rps: number;
  /** Requests still in flight when the window closed (drained before the next step). */
  backlog_at_end: number;
  /** Successful answers of requests sent after the settle: what the latency percentiles rest on. */
  samples: number;
  /** Answers finished inside the window that met every per-request SLO, per second of it. */
  goodput_rps: number;
  /** Output tokens per second of the requests that met every SLO (null: the target sent no usage). */
  goodput_tokens_per_s: number | null;
  ttft_p50_ms: number;
  ttft_p95_ms: number;
  itl_p95_ms: number;
  tpot_p95_ms: number;
  e2e_p95_ms: number;
  error_share: number;
  share_429: number;
  share_503: number;
  output_tokens_per_s: number | null;
  /** Share of the step's prompt tokens served from the target's prefix cache (usage.prompt_tokens_details.cached_tokens); null: not reported. */
  cache_hit_share: number | null;
  /** Driver health: how late requests left against their schedule, and the driver's event-loop delay. */
  schedule_lag_p99_ms: number;
  event_loop_delay_p99_ms: number;
  /** False when the driver fell behind: the step says nothing about the target. */
  valid: boolean;
  invalid_reason?: string;
  /** null on an invalid step: neither met nor broken. */
  slo_met: boolean | null;
  slo_broken_by: string[];
  slo_broken_keys: SloKey[];
  /** SLOs this step had no evidence for (TPOT without usage from the target): not judged, never met by default. */
  slo_unjudged: SloKey[];
}

/** Share of 429 + 503 above which the target is shedding rather than serving. */
const SHEDDING_DOMINATES = 0.5;
/** monitorEventLoopDelay's sampling interval; the histogram holds whole intervals, so it is taken off. */
const LOOP_RESOLUTION_MS = 10;

export async function runSweep(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const ladder = sweepSteps(o);
  const unit = o.sweepBy === 'rate' ? 'req/s' : 'concurrent streams';
  const all = new Recorder(true, ctx.findings);
  const rows: SweepStep[] = [];
  let seqOffset = 0;
  let stopReason = 'completed';
  let extraLeft = o.sweepRefineSteps;

  /** Runs one step at `value`; an invalid step is re-run once while the extra-step budget lasts. */
  const runStep = async (value: number, phase: SweepStep['phase'], label: string, seed: number): Promise<SweepStep | 'stop'> => {
    for (let attempt = 0; ; attempt++) {
      if (ctx.stop.stopped) { stopReason = 'interrupted'; return 'stop'; }
      const remaining = o.requests === undefined ? undefined : o.requests - seqOffset;
      if (remaining !== undefined && remaining <= 0) { stopReason = 'request-limit'; return 'stop'; }
      // Findings are counted once, by the run-wide recorder.
      const step = new Recorder(true, new Findings());
      const measured = new Recorder(true, new Findings());
      const timing = stepTiming(value, o);
      const ends: Array<{ endAt: number; ok: boolean; good: boolean; tokens?: number }> = [];
      // Poisson by default, as a fixed count placed at random (arrivals.ts): the step sends the rate it names.
      const arrival = o.arrival === undefined || o.arrival === 'poisson' ? 'poisson-count' : o.arrival;
      const mode: DriveMode = o.sweepBy === 'rate'
        ? { kind: 'rate', rate: value, arrival, seed }
        : { kind: 'concurrency', concurrency: value, rampUpMs: Math.min(o.rampUp * 1000, (o.stepDuration * 1000) / 4) };
      const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
      loop.enable();
      // The settle window runs on the driver's clock: set again when it starts, after the lone requests (seconds on a slow target).
      let stepStart = performance.now();
      const res = await drivePhase(ctx, {
        label: `${label}: ${value} ${unit}${attempt > 0 ? ' (re-run)' : ''}`,
        mode,
        durationMs: timing.durationS * 1000,
        maxRequests: remaining,
        request: { stream: true, key: ctx.target.keys.main, keyLabel: 'main' },
        recorders: [step, all],
        seqOffset,
        progressFrom: step,
        onStart: () => { stepStart = performance.now(); },
        onOutcome: (out) => {
          ends.push({ endAt: out.endAt, ok: out.ok, good: meetsSlo(out, o), tokens: out.usageTokens });
          if (out.intendedAt - stepStart >= timing.settleS * 1000) measured.recordOutcome(out);
        },
      });
      loop.disable();
      seqOffset += res.sent;
      // The step's window is its planned length (the driver stops sending at the last arrival, which lies inside it),
      // or what ran when it was cut short (Ctrl-C, --requests).
      const ran = (res.sendingEndedAt - res.startedAt) / 1000;
      const cut = res.stoppedEarly || (remaining !== undefined && res.sent >= remaining);
      const window = Math.max(0.001, cut ? ran : Math.max(ran, timing.durationS));
      const windowEnd = res.startedAt + window * 1000;
      const inWindow = ends.filter((e) => e.endAt <= windowEnd);
      const goodIn = inWindow.filter((e) => e.ok && e.good);
      const goodWithUsage = goodIn.filter((e) => e.tokens !== undefined);
      const loopP99 = loop.count > 0 ? Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS) : 0;
      const row = stepRow(rows.length + 1, phase, value, step, measured, {
        window, settleS: timing.settleS,
        completed: inWindow.filter((e) => e.ok).length,
        completedTokens: inWindow.some((e) => e.ok && e.tokens !== undefined) ? inWindow.reduce((a, e) => a + (e.ok ? e.tokens ?? 0 : 0), 0) : null,
        backlog: res.sent - inWindow.length,
        good: goodIn.length,
        goodTokens: goodWithUsage.length > 0 ? goodWithUsage.reduce((a, e) => a + e.tokens!, 0) : null,
      }, loopP99, o);
      rows.push(row);
      ctx.progress.note(`sweep step ${row.step} (${phase}): ${value} ${unit}: sent ${row.sent_rps}/s, completed ${row.completed_rps}/s, backlog ${row.backlog_at_end}, goodput ${row.goodput_rps}/s, ttft p95 ${row.ttft_p95_ms} ms (n=${row.samples}), errors ${(row.error_share * 100).toFixed(1)} %${!row.valid ? `  INVALID (${row.invalid_reason})` : row.slo_met ? '' : `  SLO broken (${row.slo_broken_by.join(', ')})`}`);
      if (res.stoppedEarly) { stopReason = 'interrupted'; return 'stop'; }
      if (row.valid) return row;
      if (attempt > 0 || extraLeft <= 0) { stopReason = 'driver-fell-behind'; return 'stop'; }
      extraLeft--;
    }
  };

  // 1. The ladder: rising steps until one breaks the SLO.
  let lastMet: SweepStep | undefined;
  let firstBroken: SweepStep | undefined;
  for (const [i, value] of ladder.entries()) {
    const row = await runStep(value, 'ladder', `sweep step ${i + 1}/${ladder.length}`, o.seed + i);
    if (row === 'stop') break;
    if (row.share_429 + row.share_503 > SHEDDING_DOMINATES) {
      firstBroken = row;
      stopReason = 'shedding-dominates';
      break;
    }
    if (!row.slo_met) {
      firstBroken = row;
      stopReason = 'slo-broken';
      break;
    }
    lastMet = row;
  }

  // 2. Bisection between the last step that met the SLO and the first that broke it.
  let refined = 0;
  if (lastMet && firstBroken) {
    let lo = lastMet;
    let hi = firstBroken;
    while (extraLeft > 0 && !closeEnough(lo.offered, hi.offered, o)) {
      const mid = midpoint(lo.offered, hi.offered, o);
      if (mid <= lo.offered || mid >= hi.offered) break;
      extraLeft--;
      refined++;
      const row = await runStep(mid, 'refine', `sweep refine ${refined}`, o.seed + ladder.length + refined);
      if (row === 'stop') break;
      if (row.slo_met && row.share_429 + row.share_503 <= SHEDDING_DOMINATES) lo = row;
      else hi = row;
    }
    lastMet = lo;
    firstBroken = hi;
  }

  const best = lastMet;
  const valid = rows.filter((r) => r.valid);
  const maxGoodput = valid.reduce((m, r) => Math.max(m, r.goodput_rps), 0);
  const resolved = best !== undefined && firstBroken !== undefined && closeEnough(best.offered, firstBroken.offered, o);
  const note = best === undefined && firstBroken !== undefined
    ? `the first step (${firstBroken.offered} ${unit}) already broke the SLO: the limit is below it; lower --sweep-start`
    : firstBroken === undefined && stopReason === 'completed'
      ? `every step met the SLO: capacity is above ${rows[rows.length - 1]?.offered ?? '-'} ${unit}; raise --sweep-max or --sweep-steps`
      : stopReason === 'driver-fell-behind'
        ? `the load driver fell behind (schedule lag or event-loop delay p99 above ${o.sweepMaxDriverLagMs} ms) at ${rows[rows.length - 1]?.offered} ${unit}: that step tells nothing about the target; ${best ? `the limit is at least ${best.offered} ${unit}${firstBroken ? ` and below ${firstBroken.offered}` : ''}` : 'no step was judged'} (run the driver on a less busy machine, or fewer streams per process)`
        : best !== undefined && firstBroken !== undefined && !resolved
          ? `the limit lies between ${best.offered} and ${firstBroken.offered} ${unit}; the extra-step budget ran out before they were within ${(o.sweepTolerance * 100).toFixed(1)} % (raise --sweep-refine-steps)`
          : undefined;
  const unjudged = [...new Set(valid.flatMap((r) => r.slo_unjudged))];
  const unjudgedNote = unjudged.length ? `not judged for lack of evidence: ${unjudged.join(', ')} (TPOT needs usage.completion_tokens from the target); the answer holds for the other SLOs only` : undefined;
  if (best) ctx.progress.note(`sweep: highest ${unit} meeting the SLO: ${best.offered} (goodput ${best.goodput_rps} req/s)${firstBroken ? `; ${firstBroken.offered} broke it (${firstBroken.slo_broken_by.join(', ')})` : ''}`);
  return {
    stopReason,
    recorder: all,
    details: {
      sweep_by: o.sweepBy,
      unit,
      slo: { ttft_p95_ms: o.sloTtftP95Ms, itl_p95_ms: o.sloItlP95Ms ?? null, tpot_p95_ms: o.sloTpotP95Ms ?? null, e2e_p95_ms: o.sloE2eP95Ms ?? null, error_share: o.sloErrorShare },
      driver_lag_bound_ms: o.sweepMaxDriverLagMs,
      steps: rows,
      // The answer: the limit lies in [highest met, lowest broken], with the samples behind each end.
      answer: {
        highest_met: best?.offered ?? null,
        lowest_broken: firstBroken?.offered ?? null,
        bound_by: firstBroken?.slo_broken_keys ?? [],
        samples_at_met: best?.samples ?? null,
        samples_at_broken: firstBroken?.samples ?? null,
        completed_rps_at_met: best?.completed_rps ?? null,
        arrival: o.sweepBy === 'rate' ? (o.arrival === undefined || o.arrival === 'poisson' ? 'poisson, a fixed count per step placed at random' : o.arrival) : 'closed loop',
      },
      latency_scope: 'summary latencies pool every step (rates that broke the SLO included); the sweep metrics and the answer are the best step\'s, from requests sent after its settle',
      max_meeting_slo: best?.offered ?? null,
      goodput_at_max_rps: best?.goodput_rps ?? null,
      goodput_tokens_per_s_at_max: best?.goodput_tokens_per_s ?? null,
      // The lowest rate seen to break the SLO, and which SLOs it broke: what bounds the answer.
      broken_at: firstBroken?.offered ?? null,
      bound_by: firstBroken?.slo_broken_keys ?? [],
      bound_by_detail: firstBroken?.slo_broken_by ?? [],
      resolved,
      gap_share: best && firstBroken ? round3((firstBroken.offered - best.offered) / best.offered) : null,
      slo_unjudged: unjudged,
      refine_steps: refined,
      invalid_steps: rows.filter((r) => !r.valid).length,
      max_goodput_rps: maxGoodput,
      saturated: firstBroken !== undefined,
      note: [note, unjudgedNote].filter(Boolean).join('; ') || undefined,
    },
    metrics: {
      max_rate_meeting_slo_rps: best?.offered ?? 0,
      goodput_rps: best?.goodput_rps ?? 0,
      ttft_p50_ms: best?.ttft_p50_ms ?? null,
      ttft_p95_ms: best?.ttft_p95_ms ?? null,
    },
    // The curve over offered load, in order (bisection steps fall between ladder steps).
    plots: { sweep: [...valid].sort((a, b) => a.offered - b.offered) },
  };
}

/** Within the tolerance, or (concurrency) adjacent whole numbers. */
function closeEnough(lo: number, hi: number, o: LoadOptions): boolean {
  if (o.sweepBy === 'concurrency' && hi - lo <= 1) return true;
  return hi - lo <= o.sweepTolerance * lo + 1e-9;
}

function midpoint(lo: number, hi: number, o: LoadOptions): number {
  const mid = (lo + hi) / 2;
  return o.sweepBy === 'concurrency' ? Math.round(mid) : Math.round(mid * 100) / 100;
}

/** Time per output token after the first, from the stream's own timestamps and its usage. */
function tpotMs(o: Outcome): number | undefined {
  if (o.usageTokens === undefined || o.usageTokens < 2 || o.firstContentAt === undefined || o.lastContentAt === undefined) return undefined;
  return (o.lastContentAt - o.firstContentAt) / (o.usageTokens - 1);
}

/** Goodput: a request counts only when it met every per-request SLO. */
export function meetsSlo(out: Outcome, opt: LoadOptions): boolean {
  if (!out.ok || out.firstContentAt === undefined) return false;
  if (out.firstContentAt - out.intendedAt > opt.sloTtftP95Ms) return false;
  if (opt.sloE2eP95Ms !== undefined && out.endAt - out.intendedAt > opt.sloE2eP95Ms) return false;
  if (opt.sloItlP95Ms !== undefined && out.gaps.count > 0 && out.gaps.percentileMs(95) > opt.sloItlP95Ms) return false;
  if (opt.sloTpotP95Ms !== undefined) {
    const t = tpotMs(out);
    if (t !== undefined && t > opt.sloTpotP95Ms) return false;
  }
  return true;
}

interface StepCounts { window: number; settleS: number; completed: number; completedTokens: number | null; backlog: number; good: number; goodTokens: number | null }

/**
 * One step's row. Counts and shares come from every request of the step (`all`);
 * latency percentiles, and the SLO judged on them, from those sent after the settle (`r`).
 */
function stepRow(step: number, phase: SweepStep['phase'], offered: number, all: Recorder, r: Recorder, c: StepCounts, loopP99: number, o: LoadOptions): SweepStep {
  const windowS = c.window;
  const shares = all.shares();
  const broken: string[] = [];
  const keys: SloKey[] = [];
  const breaks = (key: SloKey, text: string) => { keys.push(key); broken.push(text); };
  const ttftP95 = r.ttft.percentileMs(95);
  if (all.ok === 0 || r.ok === 0) breaks('no_success', 'no successful stream');
  if (ttftP95 > o.sloTtftP95Ms) breaks('ttft_p95_ms', `p95 TTFT ${ttftP95} ms > ${o.sloTtftP95Ms} ms`);
  // 429s and 503s are named: a rate limit or shedding binds the sweep, not the engine's speed.
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const shed = shares.share_429 + shares.share_503 > 0 ? ` (429: ${pct(shares.share_429)}, 503: ${pct(shares.share_503)})` : '';
  if (shares.error_share > o.sloErrorShare) breaks('error_share', `errors ${pct(shares.error_share)} > ${pct(o.sloErrorShare)}${shed}`);
  else if (shares.share_429 + shares.share_503 > SHEDDING_DOMINATES) breaks('error_share', `429 + 503 above half the requests${shed}`);
  if (o.sloItlP95Ms !== undefined && r.itl.percentileMs(95) > o.sloItlP95Ms) breaks('itl_p95_ms', `p95 ITL ${r.itl.percentileMs(95)} ms > ${o.sloItlP95Ms} ms`);
  const unjudged: SloKey[] = [];
  if (o.sloTpotP95Ms !== undefined) {
    if (r.tpot.count === 0) unjudged.push('tpot_p95_ms');
    else if (r.tpot.percentileMs(95) > o.sloTpotP95Ms) breaks('tpot_p95_ms', `p95 TPOT ${r.tpot.percentileMs(95)} ms > ${o.sloTpotP95Ms} ms`);
  }
  if (o.sloE2eP95Ms !== undefined && r.e2e.percentileMs(95) > o.sloE2eP95Ms) breaks('e2e_p95_ms', `p95 E2E ${r.e2e.percentileMs(95)} ms > ${o.sloE2eP95Ms} ms`);
  const lagP99 = all.scheduleLag.percentileMs(99);
  const late: string[] = [];
  if (lagP99 > o.sweepMaxDriverLagMs) late.push(`schedule lag p99 ${lagP99} ms`);
  if (loopP99 > o.sweepMaxDriverLagMs) late.push(`event-loop delay p99 ${round3(loopP99)} ms`);
  const out = all.output();
  return {
    step,
    phase,
    offered,
    duration_s: round3(windowS),
    settle_s: round3(c.settleS),
    sent: all.sent,
    sent_rps: round3(all.sent / windowS),
    completed: c.completed,
    completed_rps: round3(c.completed / windowS),
    backlog_at_end: c.backlog,
    samples: r.ok,
    goodput_rps: round3(c.good / windowS),
    goodput_tokens_per_s: c.goodTokens === null ? null : round3(c.goodTokens / windowS),
    ttft_p50_ms: r.ttft.percentileMs(50),
    ttft_p95_ms: ttftP95,
    itl_p95_ms: r.itl.percentileMs(95),
    tpot_p95_ms: r.tpot.percentileMs(95),
    e2e_p95_ms: r.e2e.percentileMs(95),
    error_share: shares.error_share,
    share_429: shares.share_429,
    share_503: shares.share_503,
    // Output tokens of the answers finished inside the window: a throughput, so never more than completed.
    output_tokens_per_s: out.output_tokens_total > 0 && c.completedTokens !== null ? round3(c.completedTokens / windowS) : null,
    cache_hit_share: all.cacheHitShare(),
    schedule_lag_p99_ms: lagP99,
    event_loop_delay_p99_ms: round3(loopP99),
    valid: late.length === 0,
    ...(late.length ? { invalid_reason: `the driver fell behind: ${late.join(', ')} > ${o.sweepMaxDriverLagMs} ms` } : {}),
    slo_met: late.length ? null : broken.length === 0,
    slo_broken_by: late.length ? [] : broken,
    slo_broken_keys: late.length ? [] : keys,
    slo_unjudged: unjudged,
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
