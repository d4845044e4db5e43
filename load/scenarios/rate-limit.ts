// `rate-limit`: how the target sheds one key's excess. Ramps plain chat requests on
// the throttled key until 429s (or other rejections) appear, holds twice that rate
// for a burst, then watches recovery the way a well-behaved client would (honouring
// each 429's advised wait), and tests that a client honouring Retry-After succeeds on
// its retry. A second key sends a trickle throughout: is it hurt by the first one's
// throttling? Every 429/503 body and every 429's retry headers are checked
// (LIM-1..4, ERR-1/2/4).
import { isServerError } from '../../lib/spec/rules/status.ts';
import { Recorder } from '../engine/recorder.ts';
import { Findings } from '../report/findings.ts';
import { rampSteps } from '../setup/safety.ts';
import { sleepUnlessStopped } from '../setup/stop.ts';
import { checkRetryHeaders, MAX_HONOURED_WAIT_MS } from '../engine/error-checks.ts';
import type { Outcome } from '../engine/lean-client.ts';
import { drivePhase, requestOnce } from './drive.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

/** Share of rejections (any non-2xx or transport failure) that ends the ramp even without a 429. */
const REJECTION_ENDS_RAMP = 0.1;
/** Most probes after the burst. */
const MAX_PROBES = 400;

interface RampRow {
  phase: string;
  offered_rps: number;
  sent: number;
  ok: number;
  status_429: number;
  status_503: number;
  status_5xx_other: number;
  transport_errors: number;
  ok_rps: number;
}

interface HeaderTally {
  responses_429: number;
  with_retry_after: number;
  with_retry_after_ms: number;
  with_x_ratelimit: number;
  with_no_hint: number;
  advised_wait_ms: { min: number | null; max: number | null };
}

export async function runRateLimit(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const { keys } = ctx.target;
  const thr = new Recorder(false, ctx.findings);
  const tally: HeaderTally = { responses_429: 0, with_retry_after: 0, with_retry_after_ms: 0, with_x_ratelimit: 0, with_no_hint: 0, advised_wait_ms: { min: null, max: null } };
  const count429 = (out: Outcome) => {
    if (out.status !== 429 || !out.headers) return;
    const h = out.headers;
    tally.responses_429++;
    if (h['retry-after'] !== undefined) tally.with_retry_after++;
    if (h['retry-after-ms'] !== undefined) tally.with_retry_after_ms++;
    if (Object.keys(h).some((k) => k.startsWith('x-ratelimit-'))) tally.with_x_ratelimit++;
    const hint = checkRetryHeaders(h);
    if (hint.waitMs === undefined) tally.with_no_hint++;
    else {
      tally.advised_wait_ms.min = Math.min(tally.advised_wait_ms.min ?? Infinity, hint.waitMs);
      tally.advised_wait_ms.max = Math.max(tally.advised_wait_ms.max ?? 0, hint.waitMs);
    }
  };

  // --- the second key: a trickle during ramp and burst ------------------------------
  const bystanderStop = ctx.stop.child();
  const by = new Recorder(false, ctx.findings);
  let throttledSince: number | undefined;
  let burstEndedAt: number | undefined;
  const byBefore = new Recorder(false, new Findings());
  const byDuring = new Recorder(false, new Findings());
  const bystander = keys.bystander !== undefined && keys.bystander !== keys.throttled && o.bystanderRate > 0
    ? drivePhase(ctx, {
      label: 'bystander',
      mode: { kind: 'rate', rate: o.bystanderRate, arrival: 'constant', seed: 1 },
      durationMs: o.capDuration * 1000,
      request: { stream: false, key: keys.bystander, keyLabel: 'bystander', brainShare: 0, keepHeaders: true },
      recorders: [by],
      stop: bystanderStop,
      quietProgress: true,
      onOutcome: (out) => {
        // Judged by when it was sent: before the first key's first 429, or while it was throttled.
        const during = throttledSince !== undefined && out.intendedAt >= throttledSince && (burstEndedAt === undefined || out.intendedAt <= burstEndedAt);
        const phase = during ? byDuring : throttledSince === undefined ? byBefore : undefined;
        phase?.recordSent(out.route, out.intendedAt, 0);
        phase?.recordOutcome(out);
      },
    })
    : undefined;

  // --- ramp -------------------------------------------------------------------------
  const rows: RampRow[] = [];
  const steps = rampSteps(o);
  let seq = 0;
  let firstRejectRate: number | undefined;
  let first429Rate: number | undefined;
  let stopReason = 'completed';
  for (const [i, rate] of steps.entries()) {
    if (ctx.stop.stopped) break;
    const remaining = o.requests === undefined ? undefined : o.requests - seq;
    if (remaining !== undefined && remaining <= 0) break;
    const step = new Recorder(false, new Findings());
    const res = await drivePhase(ctx, {
      label: `ramp ${i + 1}/${steps.length}: ${rate} req/s`,
      mode: { kind: 'rate', rate, arrival: 'constant', seed: 1 },
      durationMs: o.rampStepDuration * 1000,
      maxRequests: remaining,
      request: { stream: false, key: keys.throttled, keyLabel: 'throttled', brainShare: 0, keepHeaders: true },
      recorders: [thr, step],
      seqOffset: seq,
      progressFrom: step,
      onOutcome: (out) => {
        count429(out);
        if (out.status === 429 && throttledSince === undefined) throttledSince = out.intendedAt;
      },
    });
    seq += res.sent;
    rows.push(rampRow(`ramp ${i + 1}`, rate, step, res.sendingEndedAt - res.startedAt));
    const rejected = step.attempted - step.ok;
    if ((step.status.get(429) ?? 0) > 0) {
      first429Rate = rate;
      firstRejectRate = rate;
      break;
    }
    if (step.attempted > 0 && rejected / step.attempted >= REJECTION_ENDS_RAMP) {
      firstRejectRate = rate;
      throttledSince ??= res.startedAt;
      break;
    }
  }

  // --- burst ------------------------------------------------------------------------
  let burstRate: number | undefined;
  let recovery: Record<string, unknown> = { tested: false };
  const honoured: Array<{ advised_wait_ms: number | null; source: string; status: number | null; ok: boolean }> = [];
  if (ctx.stop.stopped) stopReason = 'interrupted';
  else if (firstRejectRate === undefined) {
    stopReason = 'no-429';
    ctx.findings.add('LIM-1', `no 429 up to ${steps[steps.length - 1]} req/s on ${keys.throttledVariable}: the limit was not reached (inconclusive; raise --ramp-max)`, undefined, 'INFO');
  } else {
    burstRate = Math.min(firstRejectRate * 2, o.capRate);
    const step = new Recorder(false, new Findings());
    const res = await drivePhase(ctx, {
      label: `burst: ${burstRate} req/s`,
      mode: { kind: 'rate', rate: burstRate, arrival: 'constant', seed: 2 },
      durationMs: o.burstDuration * 1000,
      maxRequests: o.requests === undefined ? undefined : Math.max(0, o.requests - seq),
      request: { stream: false, key: keys.throttled, keyLabel: 'throttled', brainShare: 0, keepHeaders: true },
      recorders: [thr, step],
      seqOffset: seq,
      progressFrom: step,
      onOutcome: count429,
    });
    seq += res.sent;
    rows.push(rampRow('burst', burstRate, step, res.sendingEndedAt - res.startedAt));
    burstEndedAt = performance.now();
    bystanderStop.trigger('burst over');
    if (!ctx.stop.stopped) {
      recovery = await watchRecovery(ctx, burstEndedAt, seq, count429, honoured);
      seq += Number(recovery.probes ?? 0);
      if (honoured.length === 0 && !ctx.stop.stopped) seq += await retryTest(ctx, seq, count429, honoured);
    }
    if (ctx.stop.stopped) stopReason = 'interrupted';
  }
  bystanderStop.trigger('done');
  await bystander;

  // --- verdicts -----------------------------------------------------------------------
  if (first429Rate === undefined && firstRejectRate !== undefined) {
    const seen = Object.entries(thr.statusCodes()).filter(([k]) => k !== '200').map(([k, v]) => `${v}x${k}`);
    const dropped = (thr.failures.get('dropped') ?? 0) + (thr.failures.get('reset') ?? 0);
    ctx.findings.add('LIM-1', `past its limit (from ${firstRejectRate} req/s) ${keys.throttledVariable} was refused without a 429: ${[...seen, ...(dropped ? [`${dropped} dropped connections`] : [])].join(', ') || 'failures'}`);
  }
  const firstHonoured = honoured[0];
  if (firstHonoured && !firstHonoured.ok) {
    ctx.findings.add('LIM-3', `a client that waited the advised ${firstHonoured.advised_wait_ms ?? '-'} ms (${firstHonoured.source}) still got ${firstHonoured.status ?? 'no answer'} on its retry`);
  }
  if (recovery.tested && recovery.recovered === false) {
    ctx.findings.add('LIM-3', `${keys.throttledVariable} was not served again within ${o.recoveryMax} s after the burst`);
  } else if (recovery.tested && typeof recovery.recovery_ms === 'number' && typeof recovery.first_advised_wait_ms === 'number'
    && recovery.recovery_ms > recovery.first_advised_wait_ms + 1000 && recovery.first_advised_wait_ms < MAX_HONOURED_WAIT_MS) {
    ctx.findings.add('LIM-3', `served again only ${Math.round(recovery.recovery_ms)} ms after the burst although the first 429 advised ${Math.round(recovery.first_advised_wait_ms)} ms`);
  }
  const isolation = isolationVerdict(ctx, byBefore, byDuring, bystander !== undefined);

  const shares = thr.shares();
  let maxOk = 0;
  for (const p of thr.timelinePoints()) maxOk = Math.max(maxOk, p.ok);
  return {
    stopReason,
    recorder: thr,
    details: {
      throttled_key: keys.throttledVariable,
      second_key: bystander ? keys.bystanderVariable : null,
      first_429_offered_rps: first429Rate ?? null,
      first_rejection_offered_rps: firstRejectRate ?? null,
      burst_rps: burstRate ?? null,
      max_ok_per_s: maxOk,
      phases: rows,
      retry_headers: tally,
      honoured_retries: honoured,
      recovery,
      isolation,
      bystander: by.sent > 0 ? { sent: by.sent, ok: by.ok, status_codes: by.statusCodes(), latency_ms: by.latency.summary() } : null,
    },
    metrics: {
      first_429_offered_rps: first429Rate ?? null,
      max_ok_rps: maxOk,
      recovery_ms: typeof recovery.recovery_ms === 'number' ? recovery.recovery_ms : null,
      bystander_error_share: byDuring.attempted > 0 ? byDuring.shares().error_share : null,
      latency_p50_ms: thr.latency.percentileMs(50),
      latency_p95_ms: thr.latency.percentileMs(95),
      share_429: shares.share_429,
    },
    plots: { bystander_timeline: by.timelinePoints() },
  };
}

function rampRow(phase: string, rate: number, r: Recorder, windowMs: number): RampRow {
  let other5xx = 0;
  for (const [s, c] of r.status) if (isServerError(s)) other5xx += c;
  let transport = 0;
  for (const k of ['timeout', 'dropped', 'reset', 'refused', 'other'] as const) transport += r.failures.get(k) ?? 0;
  return {
    phase, offered_rps: rate, sent: r.sent, ok: r.ok,
    status_429: r.status.get(429) ?? 0, status_503: r.status.get(503) ?? 0, status_5xx_other: other5xx,
    transport_errors: transport, ok_rps: Math.round((r.ok / Math.max(0.001, windowMs / 1000)) * 1000) / 1000,
  };
}

/**
 * After the burst: probe the throttled key like a client that honours each 429's
 * advised wait (retry-after-ms, Retry-After, x-ratelimit-reset-requests; 1 s doubling
 * when none), until it is served again or --recovery-max runs out.
 */
async function watchRecovery(
  ctx: ScenarioContext, burstEndedAt: number, seq: number, count429: (o: Outcome) => void,
  honoured: Array<{ advised_wait_ms: number | null; source: string; status: number | null; ok: boolean }>,
): Promise<Record<string, unknown>> {
  const o = ctx.options;
  const probes = new Recorder(false, ctx.findings);
  const limitAt = burstEndedAt + o.recoveryMax * 1000;
  let firstAdvice: number | undefined;
  let advisedBefore: { waitMs: number | null; source: string } | undefined;
  let backoff = 1000;
  let n = 0;
  ctx.progress.note(`recovery: probing ${ctx.target.keys.throttledVariable} until it is served again (at most ${o.recoveryMax} s)`);
  while (n < MAX_PROBES && performance.now() < limitAt && !ctx.stop.stopped) {
    const out = await requestOnce(ctx, { stream: false, key: ctx.target.keys.throttled, keyLabel: 'throttled', brainShare: 0, keepHeaders: true }, seq + n);
    n++;
    probes.recordOutcome(out);
    count429(out);
    if (advisedBefore) {
      honoured.push({ advised_wait_ms: advisedBefore.waitMs, source: advisedBefore.source, status: out.status ?? null, ok: out.ok });
      advisedBefore = undefined;
    }
    if (out.ok) {
      return { tested: true, recovered: true, recovery_ms: round1(out.endAt - burstEndedAt), first_advised_wait_ms: firstAdvice ?? null, probes: n };
    }
    let wait = 200;
    if (out.status === 429) {
      const hint = checkRetryHeaders(out.headers ?? {});
      if (hint.waitMs !== undefined) {
        firstAdvice ??= hint.waitMs;
        wait = Math.max(50, Math.min(hint.waitMs, MAX_HONOURED_WAIT_MS));
        advisedBefore = { waitMs: hint.waitMs, source: hint.source! };
      } else {
        wait = backoff;
        backoff = Math.min(backoff * 2, 8000);
        advisedBefore = { waitMs: null, source: 'no hint: 1 s doubling backoff' };
      }
    }
    await sleepUnlessStopped(Math.min(wait, Math.max(0, limitAt - performance.now())), ctx.stop);
  }
  return { tested: true, recovered: false, recovery_ms: null, first_advised_wait_ms: firstAdvice ?? null, probes: n };
}

/**
 * When recovery never met a 429 (the key was served at once), provoke one with a
 * short concurrent burst, wait as advised, retry once. Returns requests sent.
 */
async function retryTest(
  ctx: ScenarioContext, seq: number, count429: (o: Outcome) => void,
  honoured: Array<{ advised_wait_ms: number | null; source: string; status: number | null; ok: boolean }>,
): Promise<number> {
  const spec = { stream: false, key: ctx.target.keys.throttled, keyLabel: 'throttled', brainShare: 0, keepHeaders: true };
  const n = Math.min(200, Math.max(20, Math.ceil(ctx.options.rampMax)));
  const outs = await Promise.all(Array.from({ length: n }, (_, i) => requestOnce(ctx, spec, seq + i)));
  outs.forEach(count429);
  const throttled = outs.find((x) => x.status === 429);
  if (!throttled) return n;
  const hint = checkRetryHeaders(throttled.headers ?? {});
  await sleepUnlessStopped(Math.min(hint.waitMs ?? 1000, MAX_HONOURED_WAIT_MS), ctx.stop);
  if (ctx.stop.stopped) return n;
  const retry = await requestOnce(ctx, spec, seq + n);
  count429(retry);
  honoured.push({ advised_wait_ms: hint.waitMs ?? null, source: hint.source ?? 'no hint: waited 1 s', status: retry.status ?? null, ok: retry.ok });
  return n + 1;
}

function isolationVerdict(ctx: ScenarioContext, before: Recorder, during: Recorder, ran: boolean): Record<string, unknown> {
  const { keys } = ctx.target;
  if (!ran) {
    const why = keys.bystander === undefined || keys.bystander === keys.throttled
      ? 'no second key (set RATE_LIMIT_API_KEY to a key other than API_KEY, or LIMITED_API_KEY)'
      : '--bystander-rate is 0';
    return { tested: false, reason: why };
  }
  const d429 = during.status.get(429) ?? 0;
  const summary = {
    tested: true,
    before: { sent: before.sent, ok: before.ok, latency_p50_ms: before.latency.percentileMs(50) },
    during_throttle: { sent: during.sent, ok: during.ok, status_429: d429, latency_p50_ms: during.latency.percentileMs(50) },
    affected: during.attempted > 0 && during.ok < during.attempted,
  };
  if (during.attempted === 0) {
    ctx.findings.add('LIM-4', `${keys.bystanderVariable} sent nothing while ${keys.throttledVariable} was throttled (the throttled phase was too short to tell)`);
  } else if (summary.affected) {
    ctx.findings.add('LIM-4', `throttling ${keys.throttledVariable} also hurt ${keys.bystanderVariable}: ${during.attempted - during.ok} of ${during.attempted} of its requests failed (${d429} got 429)`);
  } else {
    ctx.findings.add('LIM-4', `${keys.bystanderVariable} was unaffected while ${keys.throttledVariable} was throttled (${during.ok}/${during.attempted} ok, p50 ${during.latency.percentileMs(50)} ms vs ${before.latency.percentileMs(50)} ms before)`);
  }
  return summary;
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
