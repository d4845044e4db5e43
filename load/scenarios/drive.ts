// Runs one phase of lean-client load (a stream run, a sweep step, a ramp step) with
// the live progress line, feeding every outcome to the given recorders.
import type { Pool } from 'undici';
import { Driver, type DriveMode, type DriveResult } from '../engine/load-driver.ts';
import { requestFactory, type FactorySpec } from '../engine/request-factory.ts';
import { send, type LeanRequest, type Outcome } from '../engine/lean-client.ts';
import type { Recorder } from '../engine/recorder.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';
import type { StopToken } from '../setup/stop.ts';
import { tokenCounts } from '../engine/token-count.ts';
import { CrossTalkWatch } from '../engine/cross-talk-watch.ts';
import { toCurl } from '../../lib/http/curl.ts';

export interface PhaseSpec {
  label: string;
  mode: DriveMode;
  durationMs: number;
  maxRequests?: number;
  request: Omit<FactorySpec, 'target' | 'options'>;
  recorders: Recorder[];
  /** Sequence numbers continue across phases (sampling, prompts). */
  seqOffset?: number;
  onOutcome?: (o: Outcome) => void;
  /** Each request as it is handed to the pool (the rehearsal keeps those in flight for curl lines). */
  onSent?: (req: LeanRequest) => void;
  onNotSent?: (intendedAt: number) => void;
  /** Called in the tick the driver's clock starts (after the lone requests), so a caller's clock can match it. */
  onStart?: () => void;
  /** Progress shows this recorder's figures (default the first). */
  progressFrom?: Recorder;
  /** Stops this phase only (default: the run's token). */
  stop?: StopToken;
  /** Connection pool (default: the run's shared one). */
  pool?: Pool;
  /** Total seconds to show in the progress line. */
  totalS?: number;
  quietProgress?: boolean;
}

/** A phase's result, with SVC-9's and EV-13's judgement of its replies (their findings are in ctx.findings). */
export type PhaseResult = DriveResult & { concurrency: ReturnType<CrossTalkWatch['finish']> };

export async function drivePhase(ctx: ScenarioContext, spec: PhaseSpec): Promise<PhaseResult> {
  // The workload shapes the load of throughput, stream and sweep; rate-limit probes send the fixed prompt.
  const workload = ctx.scenario === 'rate-limit' ? undefined : ctx.workload;
  const make = requestFactory({ ...spec.request, target: ctx.target, options: ctx.options, workload });
  const offset = spec.seqOffset ?? 0;
  const { requestLog, tokenizer } = ctx;
  const phase = ctx.scenario === 'stream' || ctx.scenario === 'throughput' ? undefined : spec.label;
  const mode = spec.mode.kind === 'rate' && spec.mode.arrival === 'gamma' && !spec.mode.arrivalOptions
    ? { ...spec.mode, arrivalOptions: { burstiness: ctx.options.burstiness } }
    : spec.mode;
  // A cross-talk finding shows both requests' curl lines (keys masked).
  const watch = new CrossTalkWatch((req) => toCurl({ method: 'POST', url: `${ctx.target.origin}${req.path}`, headers: req.headers, body: req.body, stream: req.stream }));
  watch.alone(await loneRequests(ctx, (seq) => make(seq, performance.now())));
  const driver = new Driver(spec.pool ?? ctx.pool(), {
    mode,
    durationMs: spec.durationMs,
    maxRequests: spec.maxRequests,
    maxInFlight: ctx.options.capConcurrency,
    ...(mode.kind === 'rate' && ctx.options.maxConcurrency !== undefined ? {
      maxConcurrency: ctx.options.maxConcurrency,
      onQueued: (ms: number) => { for (const r of spec.recorders) r.recordQueued(ms); },
    } : {}),
    timeoutMs: ctx.timeoutMs,
    makeRequest: (seq, intendedAt) => make(seq + offset, intendedAt),
    onSent: (req, lag) => {
      for (const r of spec.recorders) r.recordSent(req.route, req.intendedAt, lag);
      watch.sent(req);
      spec.onSent?.(req);
    },
    onNotSent: (at) => {
      for (const r of spec.recorders) r.recordNotSent(at);
      requestLog?.notSent(at, phase);
      spec.onNotSent?.(at);
    },
    onOutcome: (o) => {
      if (o.failure !== 'aborted') o.tokens = tokenCounts(o, tokenizer);
      workload?.done(o.seq, o.ok, o.reply);
      for (const r of spec.recorders) r.recordOutcome(o);
      requestLog?.outcome(o, phase);
      watch.add(o);
      spec.onOutcome?.(o);
    },
  }, spec.stop ?? ctx.stop);
  const shown = spec.progressFrom ?? spec.recorders[0]!;
  const started = performance.now();
  requestLog?.startClock(started);
  for (const r of spec.recorders) r.markPhase(spec.label, started);
  if (!spec.quietProgress) {
    ctx.progress.start(() => ({
      phase: spec.label,
      elapsedS: (performance.now() - started) / 1000,
      totalS: spec.totalS ?? spec.durationMs / 1000,
      sent: shown.sent,
      ok: shown.ok,
      errors: Math.max(0, shown.sent + shown.notSent - shown.ok - driver.inFlightCount - shown.aborted),
      inFlight: driver.inFlightCount,
      metric: shown.stream ? 'ttft' : 'latency',
      p50Ms: (shown.stream ? shown.ttft : shown.latency).percentileMs(50),
      p95Ms: (shown.stream ? shown.ttft : shown.latency).percentileMs(95),
      samples: (shown.stream ? shown.ttft : shown.latency).count,
    }));
  }
  try {
    spec.onStart?.();
    const result = await driver.run(ctx.options.drain * 1000);
    return { ...result, concurrency: watch.finish(ctx.findings, phase) };
  } finally {
    if (!spec.quietProgress) ctx.progress.stop();
  }
}

/** Requests sent one at a time before a run (not measured), for SVC-9 to learn what evidence the target gives. */
export const LONE_REQUESTS = 3;
/** Their sequence numbers: far past any run's, so their text (and canary) is their own. */
const LONE_SEQ = 1_000_000_000;
const loneByRun = new WeakMap<ScenarioContext, Promise<Outcome[]>>();

/** The run's lone requests, sent once per run (a sweep's steps share them); none where a request depends on the one before (sessions). */
function loneRequests(ctx: ScenarioContext, make: (seq: number) => LeanRequest): Promise<Outcome[]> {
  if (ctx.scenario === 'rate-limit' || ctx.options.turns > 1 || ctx.options.multiTurn) return Promise.resolve([]);
  let p = loneByRun.get(ctx);
  if (!p) {
    p = (async () => {
      const out: Outcome[] = [];
      for (let i = 0; i < LONE_REQUESTS && !ctx.stop.stopped; i++) out.push(await sendRequest(ctx, make(LONE_SEQ + i)));
      return out;
    })();
    loneByRun.set(ctx, p);
  }
  return p;
}

/** One request, awaited (the rate-limit probes): bounded by the request time limit. */
export function requestOnce(ctx: ScenarioContext, spec: Omit<FactorySpec, 'target' | 'options'>, seq: number): Promise<Outcome> {
  const make = requestFactory({ ...spec, target: ctx.target, options: ctx.options });
  return sendOnce(ctx, make, seq);
}

/** One request of a ready factory, awaited (warm-up batches share one factory). */
export function sendOnce(ctx: ScenarioContext, make: ReturnType<typeof requestFactory>, seq: number): Promise<Outcome> {
  return sendRequest(ctx, make(seq, performance.now()));
}

/** One built request, awaited: bounded by the request time limit. */
function sendRequest(ctx: ScenarioContext, req: LeanRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    const call = send(ctx.pool(), req, (o) => {
      clearTimeout(timer);
      resolve(o);
    });
    const timer = setTimeout(() => call.cancel('timeout'), ctx.timeoutMs);
  });
}

/** Token rates (usage, else the tokenizer) and goodput, for stream and throughput. */
export function tokenMetrics(r: Recorder, secs: number): ScenarioResult['metrics'] {
  const sources = r.promptSources.usage + r.promptSources.tokenizer;
  const out: ScenarioResult['metrics'] = {};
  if (sources > 0) {
    out.input_tokens_per_s = r3(r.inputTokens / secs);
    out.total_tokens_per_s = r3((r.inputTokens + r.outputTokens) / secs);
  }
  if (r.slo) {
    out.goodput_rps = r3(r.goodOk / secs);
    out.goodput_output_tokens_per_s = r3(r.goodOutputTokens / secs);
  }
  return out;
}

function r3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
