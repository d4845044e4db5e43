// `stream`: streaming chat completions, open loop (constant or Poisson arrivals) or a
// fixed number of concurrent streams; per request TTFT, inter-token gaps, time per
// output token and E2E, output tokens from the final chunk's usage.
import { runSeconds } from '../setup/options.ts';
import { Recorder } from '../engine/recorder.ts';
import type { DriveMode } from '../engine/load-driver.ts';
import { drivePhase } from './drive.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

export function streamMode(ctx: ScenarioContext): DriveMode {
  const o = ctx.options;
  return o.concurrency !== undefined
    ? { kind: 'concurrency', concurrency: o.concurrency, rampUpMs: o.rampUp * 1000 }
    : { kind: 'rate', rate: o.rate ?? 10, arrival: o.arrival ?? 'poisson', seed: o.seed };
}

export async function runStream(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const recorder = new Recorder(true, ctx.findings);
  const mode = streamMode(ctx);
  const result = await drivePhase(ctx, {
    label: mode.kind === 'rate' ? `stream ${mode.rate} req/s ${mode.arrival}` : `stream x${mode.concurrency}`,
    mode,
    durationMs: runSeconds(o) * 1000,
    maxRequests: o.requests,
    request: { stream: true, key: ctx.target.keys.main, keyLabel: 'main' },
    recorders: [recorder],
  });
  const secs = recorder.activeSeconds();
  const ttft = recorder.ttft;
  return {
    stopReason: result.stoppedEarly ? 'interrupted' : 'completed',
    recorder,
    details: {
      mode: mode.kind === 'rate'
        ? { kind: 'rate', rate_rps: mode.rate, arrival: mode.arrival, seed: mode.seed }
        : { kind: 'concurrency', concurrency: mode.concurrency, ramp_up_s: mode.rampUpMs / 1000 },
      sending_s: round3((result.sendingEndedAt - result.startedAt) / 1000),
      peak_concurrent_streams: result.peakInFlight,
      aborted_in_flight: result.abortedInFlight,
      schedule_lag_p99_ms: recorder.scheduleLag.percentileMs(99),
      sse_events: recorder.sseEvents,
    },
    metrics: {
      ttft_p50_ms: ttft.percentileMs(50),
      ttft_p95_ms: ttft.percentileMs(95),
      ttft_p99_ms: ttft.percentileMs(99),
      itl_p50_ms: recorder.itl.percentileMs(50),
      itl_p95_ms: recorder.itl.percentileMs(95),
      itl_p99_ms: recorder.itl.percentileMs(99),
      tpot_p50_ms: recorder.tpot.count ? recorder.tpot.percentileMs(50) : null,
      e2e_p50_ms: recorder.e2e.percentileMs(50),
      e2e_p95_ms: recorder.e2e.percentileMs(95),
      e2e_p99_ms: recorder.e2e.percentileMs(99),
      output_tokens_per_s: recorder.output().output_tokens_per_s,
      streams_ok_per_s: round3(recorder.ok / secs),
    },
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
