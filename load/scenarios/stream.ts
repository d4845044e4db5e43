// `stream`: streaming chat completions, open loop (constant, Poisson, gamma or trace
// arrivals) or a fixed number of concurrent streams; per request TTFT, inter-token gaps,
// time per output token and E2E, input and output tokens (usage, else the tokenizer),
// goodput under the --slo-* options.
import { runSeconds } from '../setup/options.ts';
import { Recorder } from '../engine/recorder.ts';
import type { DriveMode } from '../engine/load-driver.ts';
import { drivePhase, tokenMetrics } from './drive.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

export function streamMode(ctx: ScenarioContext): DriveMode {
  const o = ctx.options;
  if (o.concurrency !== undefined) return { kind: 'concurrency', concurrency: o.concurrency, rampUpMs: o.rampUp * 1000 };
  const arrival = o.arrival ?? 'poisson';
  const trace = ctx.workload?.spec.trace;
  return {
    kind: 'rate', rate: o.rate ?? 10, arrival, seed: o.seed,
    ...(arrival === 'gamma' ? { arrivalOptions: { burstiness: o.burstiness } } : {}),
    ...(arrival === 'trace' && trace ? { arrivalOptions: { offsetsMs: trace.records.map((r) => r.offsetMs) } } : {}),
  };
}

export async function runStream(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const recorder = new Recorder(true, ctx.findings);
  recorder.slo = { ttftMs: o.sloTtftP95Ms, itlP95Ms: o.sloItlP95Ms, e2eMs: o.sloE2eP95Ms };
  const mode = streamMode(ctx);
  const trace = mode.kind === 'rate' && mode.arrival === 'trace';
  // A trace ends sending when its schedule ends (or at --duration / the duration cap, if sooner);
  // the progress line counts towards the trace's own length.
  const limitS = trace ? o.duration ?? o.capDuration : runSeconds(o);
  const shownS = trace ? Math.min(limitS, traceSpanS(ctx.workload?.spec.trace?.records)) : limitS;
  const result = await drivePhase(ctx, {
    label: mode.kind === 'concurrency' ? `stream x${mode.concurrency}` : trace ? 'stream trace replay' : `stream ${mode.rate} req/s ${mode.arrival}`,
    mode,
    durationMs: limitS * 1000,
    totalS: shownS,
    maxRequests: o.requests,
    request: { stream: true, key: ctx.target.keys.main, keyLabel: 'main' },
    recorders: [recorder],
  });
  const secs = recorder.activeSeconds();
  return {
    stopReason: result.stoppedEarly ? 'interrupted' : 'completed',
    recorder,
    details: {
      mode: mode.kind === 'rate'
        ? trace ? { kind: 'trace', source: ctx.options.trace, records: mode.arrivalOptions?.offsetsMs?.length }
          : { kind: 'rate', rate_rps: mode.rate, arrival: mode.arrival, seed: mode.seed, ...(mode.arrival === 'gamma' ? { burstiness: o.burstiness } : {}) }
        : { kind: 'concurrency', concurrency: mode.concurrency, ramp_up_s: mode.rampUpMs / 1000 },
      sending_s: round3((result.sendingEndedAt - result.startedAt) / 1000),
      peak_concurrent_streams: result.peakInFlight,
      aborted_in_flight: result.abortedInFlight,
      schedule_lag_p99_ms: recorder.scheduleLag.percentileMs(99),
      sse_events: recorder.sseEvents,
      // SVC-9 (whose reply is whose) and EV-13 (streams held back) over the run's replies.
      cross_talk: result.concurrency.cross_talk,
      delivery: result.concurrency.delivery,
      goodput: {
        slo: { ttft_ms: o.sloTtftP95Ms, itl_p95_ms: o.sloItlP95Ms ?? null, e2e_ms: o.sloE2eP95Ms ?? null },
        note: 'A success is goodput when its own TTFT, its own p95 inter-token gap and its E2E are within the --slo-* bounds given.',
        requests: recorder.goodOk,
        output_tokens: recorder.goodOutputTokens,
      },
    },
    metrics: streamMetrics(recorder, secs),
  };
}

/** The stream figures of a run (also the rehearsal's, load/scenarios/rehearsal.ts). */
export function streamMetrics(recorder: Recorder, secs: number): ScenarioResult['metrics'] {
  const ttft = recorder.ttft;
  return {
    ttft_p50_ms: ttft.percentileMs(50),
    ttft_p95_ms: ttft.percentileMs(95),
    ttft_p99_ms: ttft.percentileMs(99),
    itl_p50_ms: recorder.itl.percentileMs(50),
    itl_p95_ms: recorder.itl.percentileMs(95),
    itl_p99_ms: recorder.itl.percentileMs(99),
    tpot_p50_ms: recorder.tpot.count ? recorder.tpot.percentileMs(50) : null,
    tpot_p95_ms: recorder.tpot.count ? recorder.tpot.percentileMs(95) : null,
    e2e_p50_ms: recorder.e2e.percentileMs(50),
    e2e_p95_ms: recorder.e2e.percentileMs(95),
    e2e_p99_ms: recorder.e2e.percentileMs(99),
    output_tokens_per_s: recorder.output().output_tokens_per_s,
    streams_ok_per_s: round3(recorder.ok / secs),
    ...tokenMetrics(recorder, secs),
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Seconds from a trace's first record to just past its last (when its last request is due). */
export function traceSpanS(records: ReadonlyArray<{ offsetMs: number }> | undefined): number {
  if (!records || records.length === 0) return Infinity;
  return (records[records.length - 1]!.offsetMs + 1) / 1000;
}
