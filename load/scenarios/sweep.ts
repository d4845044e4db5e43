// `sweep`: streaming load raised step by step (arrival rate, or concurrent streams)
// until a step breaks the SLO or 429/503 dominate. Each step reports offered and
// achieved rate, goodput (requests per second that met every per-request SLO, as in
// DistServe/GuideLLM), latency percentiles and shares; the result is the highest
// step that met the SLO, and the curve.
import { Recorder } from '../engine/recorder.ts';
import { Findings } from '../report/findings.ts';
import { sweepSteps } from '../setup/safety.ts';
import type { Outcome } from '../engine/lean-client.ts';
import type { DriveMode } from '../engine/load-driver.ts';
import { drivePhase } from './drive.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

export interface SweepStep {
  step: number;
  offered: number;
  sent: number;
  achieved_ok_rps: number;
  goodput_rps: number;
  ttft_p50_ms: number;
  ttft_p95_ms: number;
  itl_p95_ms: number;
  e2e_p95_ms: number;
  error_share: number;
  share_429: number;
  share_503: number;
  output_tokens_per_s: number | null;
  slo_met: boolean;
  slo_broken_by: string[];
}

/** Share of 429 + 503 above which the target is shedding rather than serving. */
const SHEDDING_DOMINATES = 0.5;

export async function runSweep(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const steps = sweepSteps(o);
  const unit = o.sweepBy === 'rate' ? 'req/s' : 'concurrent streams';
  const all = new Recorder(true, ctx.findings);
  const rows: SweepStep[] = [];
  let seqOffset = 0;
  let stopReason = 'completed';
  for (const [i, value] of steps.entries()) {
    if (ctx.stop.stopped) {
      stopReason = 'interrupted';
      break;
    }
    const remaining = o.requests === undefined ? undefined : o.requests - seqOffset;
    if (remaining !== undefined && remaining <= 0) {
      stopReason = 'request-limit';
      break;
    }
    // Findings are counted once, by the run-wide recorder.
    const step = new Recorder(true, new Findings());
    let good = 0;
    const mode: DriveMode = o.sweepBy === 'rate'
      ? { kind: 'rate', rate: value, arrival: o.arrival ?? 'poisson', seed: o.seed + i }
      : { kind: 'concurrency', concurrency: value, rampUpMs: Math.min(o.rampUp * 1000, (o.stepDuration * 1000) / 4) };
    const res = await drivePhase(ctx, {
      label: `sweep step ${i + 1}/${steps.length}: ${value} ${unit}`,
      mode,
      durationMs: o.stepDuration * 1000,
      maxRequests: remaining,
      request: { stream: true, key: ctx.target.keys.main, keyLabel: 'main' },
      recorders: [step, all],
      seqOffset,
      progressFrom: step,
      onOutcome: (out) => { if (meetsSlo(out, ctx)) good++; },
    });
    seqOffset += res.sent;
    const window = Math.max(0.001, (res.sendingEndedAt - res.startedAt) / 1000);
    const row = stepRow(i + 1, value, step, good, window, ctx);
    rows.push(row);
    ctx.progress.note(`sweep step ${i + 1}: ${value} ${unit}: ${row.achieved_ok_rps} ok/s, goodput ${row.goodput_rps}/s, ttft p95 ${row.ttft_p95_ms} ms, errors ${(row.error_share * 100).toFixed(1)} %${row.slo_met ? '' : `  SLO broken (${row.slo_broken_by.join(', ')})`}`);
    if (res.stoppedEarly) {
      stopReason = 'interrupted';
      break;
    }
    if (row.share_429 + row.share_503 > SHEDDING_DOMINATES) {
      stopReason = 'shedding-dominates';
      break;
    }
    if (!row.slo_met) {
      stopReason = 'slo-broken';
      break;
    }
  }
  // The answer: the highest step before the first one that broke the SLO.
  let best: SweepStep | undefined;
  for (const r of rows) {
    if (!r.slo_met) break;
    best = r;
  }
  const maxGoodput = rows.reduce((m, r) => Math.max(m, r.goodput_rps), 0);
  return {
    stopReason,
    recorder: all,
    details: {
      sweep_by: o.sweepBy,
      unit,
      slo: { ttft_p95_ms: o.sloTtftP95Ms, itl_p95_ms: o.sloItlP95Ms ?? null, e2e_p95_ms: o.sloE2eP95Ms ?? null, error_share: o.sloErrorShare },
      steps: rows,
      max_meeting_slo: best?.offered ?? null,
      goodput_at_max_rps: best?.goodput_rps ?? null,
      max_goodput_rps: maxGoodput,
      saturated: stopReason === 'slo-broken' || stopReason === 'shedding-dominates',
      note: stopReason === 'completed' ? `every step met the SLO: capacity is above ${rows[rows.length - 1]?.offered ?? '-'} ${unit}; raise --sweep-max or --sweep-steps` : undefined,
    },
    metrics: {
      max_rate_meeting_slo_rps: best?.offered ?? 0,
      goodput_rps: best?.goodput_rps ?? 0,
      ttft_p50_ms: best?.ttft_p50_ms ?? null,
      ttft_p95_ms: best?.ttft_p95_ms ?? null,
    },
    plots: { sweep: rows },
  };
}

function meetsSlo(o: Outcome, ctx: ScenarioContext): boolean {
  if (!o.ok || o.firstContentAt === undefined) return false;
  const opt = ctx.options;
  if (o.firstContentAt - o.intendedAt > opt.sloTtftP95Ms) return false;
  if (opt.sloE2eP95Ms !== undefined && o.endAt - o.intendedAt > opt.sloE2eP95Ms) return false;
  if (opt.sloItlP95Ms !== undefined && o.gaps.count > 0 && o.gaps.percentileMs(95) > opt.sloItlP95Ms) return false;
  return true;
}

function stepRow(step: number, offered: number, r: Recorder, good: number, windowS: number, ctx: ScenarioContext): SweepStep {
  const o = ctx.options;
  const shares = r.shares();
  const broken: string[] = [];
  const ttftP95 = r.ttft.percentileMs(95);
  if (r.ok === 0) broken.push('no successful stream');
  if (ttftP95 > o.sloTtftP95Ms) broken.push(`p95 TTFT ${ttftP95} ms > ${o.sloTtftP95Ms} ms`);
  if (shares.error_share > o.sloErrorShare) broken.push(`errors ${(shares.error_share * 100).toFixed(1)} % > ${(o.sloErrorShare * 100).toFixed(1)} %`);
  if (o.sloItlP95Ms !== undefined && r.itl.percentileMs(95) > o.sloItlP95Ms) broken.push(`p95 ITL ${r.itl.percentileMs(95)} ms > ${o.sloItlP95Ms} ms`);
  if (o.sloE2eP95Ms !== undefined && r.e2e.percentileMs(95) > o.sloE2eP95Ms) broken.push(`p95 E2E ${r.e2e.percentileMs(95)} ms > ${o.sloE2eP95Ms} ms`);
  const out = r.output();
  return {
    step,
    offered,
    sent: r.sent,
    achieved_ok_rps: round3(r.ok / windowS),
    goodput_rps: round3(good / windowS),
    ttft_p50_ms: r.ttft.percentileMs(50),
    ttft_p95_ms: ttftP95,
    itl_p95_ms: r.itl.percentileMs(95),
    e2e_p95_ms: r.e2e.percentileMs(95),
    error_share: shares.error_share,
    share_429: shares.share_429,
    share_503: shares.share_503,
    output_tokens_per_s: out.output_tokens_total > 0 ? round3(out.output_tokens_total / windowS) : null,
    slo_met: broken.length === 0,
    slo_broken_by: broken,
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
