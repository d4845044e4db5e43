// `throughput`: non-streaming chat completions at full speed or at a fixed rate.
//
// - Fixed connections (closed loop, no --rate): autocannon's programmatic API sends
//   (it is as fast as Node senders get); latencies go into our HDR histograms.
// - Fixed rate (--rate): by default the wrk2 model on our lean client: evenly spaced
//   (or Poisson) arrivals over --connections keep-alive connections, each latency from
//   the request's intended send time, so a stalled target shows in the tail whatever
//   its timing. autocannon's overallRate (--rate-engine autocannon) sends each
//   connection's per-second quota in a burst at the top of the second, so a stall in
//   the quiet part of a second meets no request and no correction can bring it back;
//   its own correction also assumes a 1 ms interval at any rate (autocannon 8). It
//   stays available, with our expected-interval correction, for comparison.
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { runSeconds } from '../setup/options.ts';
import { extraBodyOf } from '../workload/extra-body.ts';
import { Recorder } from '../engine/recorder.ts';
import { LatencyHistogram } from '../engine/histogram.ts';
import { bodyFor, pathFor, routeAt, type BodyOptions, type RouteKind } from '../engine/request-bodies.ts';
import { ALWAYS_CHECKED } from '../engine/request-factory.ts';
import { createPool } from '../engine/load-driver.ts';
import { describe, validate } from '../../lib/spec/schema-validator.ts';
import type { FailureKind } from '../engine/lean-client.ts';
import { drivePhase, tokenMetrics } from './drive.ts';
import { extraHeaders } from '../../lib/http/extra-headers.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';

/** Distinct request bodies autocannon cycles through (it cannot build one per request cheaply). */
const TEMPLATES = 100;

export async function runThroughput(ctx: ScenarioContext): Promise<ScenarioResult> {
  if (ctx.options.rate !== undefined && ctx.options.rateEngine === 'open-loop') return runPaced(ctx, ctx.options.rate);
  return runAutocannon(ctx);
}

/** --rate, wrk2 model: open-loop arrivals over a fixed pool of connections. */
async function runPaced(ctx: ScenarioContext, rate: number): Promise<ScenarioResult> {
  const o = ctx.options;
  const recorder = new Recorder(false, ctx.findings);
  const pool = createPool(ctx.target.origin, o.connections, ctx.timeoutMs);
  const arrival = o.arrival ?? 'constant';
  try {
    const res = await drivePhase(ctx, {
      label: `throughput ${rate} req/s over ${o.connections} connections`,
      mode: { kind: 'rate', rate, arrival, seed: o.seed },
      durationMs: runSeconds(o) * 1000,
      maxRequests: o.requests,
      request: { stream: false, key: ctx.target.keys.main, keyLabel: 'main' },
      recorders: [recorder],
      pool,
    });
    const secs = recorder.activeSeconds();
    return {
      stopReason: res.stoppedEarly ? 'interrupted' : 'completed',
      recorder,
      details: {
        mode: { kind: 'rate', engine: 'open-loop', rate_rps: rate, arrival, connections: o.connections },
        latency_uncorrected_ms: recorder.latencyFromSend.summary(),
        latency_note: 'latency_ms runs from each request\'s intended send time (no coordinated omission); latency_uncorrected_ms from when it actually left, as a closed-loop tool would report it.',
        sending_s: round3((res.sendingEndedAt - res.startedAt) / 1000),
        peak_in_flight: res.peakInFlight,
        schedule_lag_p99_ms: recorder.scheduleLag.percentileMs(99),
      },
      metrics: { ...latencyMetrics(recorder, secs), ...tokenMetrics(recorder, secs) },
      plots: { latency_uncorrected_ms: recorder.latencyFromSend },
    };
  } finally {
    await pool.destroy().catch(() => {});
  }
}

function latencyMetrics(recorder: Recorder, secs: number): ScenarioResult['metrics'] {
  return {
    latency_p50_ms: recorder.latency.percentileMs(50),
    latency_p90_ms: recorder.latency.percentileMs(90),
    latency_p95_ms: recorder.latency.percentileMs(95),
    latency_p99_ms: recorder.latency.percentileMs(99),
    output_tokens_per_s: recorder.withUsage > 0 ? round3(recorder.usageTokens / secs) : null,
  };
}

/** Fixed connections (or --rate-engine autocannon): autocannon sends. */
async function runAutocannon(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const { target } = ctx;
  const recorder = new Recorder(false, ctx.findings);
  const overallRate = o.rate === undefined ? undefined : Math.max(1, Math.round(o.rate));
  // autocannon never runs more connections than the overall rate.
  const connections = overallRate === undefined ? o.connections : Math.min(o.connections, overallRate);
  const expectedIntervalMs = overallRate !== undefined && o.coCorrection ? (1000 * connections) / overallRate : undefined;
  const uncorrected = overallRate !== undefined ? new LatencyHistogram() : undefined;

  // For each response autocannon emits the tracker's 'response' event (status,
  // latency), then calls verifyBody(body), synchronously and in that order; the
  // response is recorded in verifyBody, once its body could be judged. (onResponse
  // would hand over the headers too, but converts every response's header array.)
  let answers = 0;
  let pending: { client: HeaderKeeper; status: number; ms: number } | undefined;
  const verifyBody = (body: string): boolean => {
    const p = pending;
    pending = undefined;
    if (!p) return true;
    answers++;
    let bad: string | undefined;
    if (p.status >= 300) recorder.checkErrorAnswer(p.status, lowerHeaders(p.client.chatgateHeaders), body);
    else if (answers <= ALWAYS_CHECKED || answers % o.sampleEvery === 0) {
      bad = completionProblem(lowerHeaders(p.client.chatgateHeaders), body);
      recorder.recordBodyChecked(bad === undefined);
    }
    recorder.recordResponse(p.status, p.ms, performance.now(), expectedIntervalMs, bad, lastRoute);
    uncorrected?.record(p.ms);
    return true;
  };
  // With a brain mix, each template's onResponse (called before both of the above)
  // names the route of the answer; without one every answer is plain chat and the
  // per-response header conversion onResponse costs is saved.
  let lastRoute: RouteKind = 'chat';
  const requests = templates(ctx, o.brainShare > 0 ? (route) => () => { lastRoute = route; } : undefined);

  const instance = await new Promise<{ result: AutocannonResult; stopped: boolean }>((resolve, reject) => {
    let stopped = false;
    const secs = runSeconds(o);
    const inst = autocannon({
      url: target.origin,
      connections,
      ...(o.requests !== undefined ? { amount: o.requests } : { duration: secs }),
      // Our correction replaces autocannon's (see above); it refuses the flag without a rate.
      ...(overallRate !== undefined ? { overallRate, ignoreCoordinatedOmission: true } : {}),
      timeout: ctx.timeoutMs / 1000,
      pipelining: 1,
      requests,
      verifyBody,
      setupClient: (client) => {
        const keeper = client as unknown as HeaderKeeper;
        client.on('headers', (h: { headers: string[] }) => { keeper.chatgateHeaders = h.headers; });
        client.on('request', () => recorder.countSent(performance.now()));
      },
    }, (err, result) => (err ? reject(err) : resolve({ result, stopped })));
    // With both --requests and --duration, whichever comes first ends the run.
    const timer = o.requests !== undefined && o.duration !== undefined ? setTimeout(() => inst.stop(), secs * 1000) : undefined;
    inst.on('done', () => clearTimeout(timer));
    inst.on('response', (client: HeaderKeeper, statusCode: number, _bytes: number, responseTime: number) => {
      pending = { client, status: statusCode, ms: responseTime };
    });
    inst.on('reqError', (err: Error & { code?: string }) => {
      const kind: FailureKind = /timed out/.test(err.message) ? 'timeout'
        : err.code === 'ECONNREFUSED' ? 'refused'
        : err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'dropped' : 'other';
      recorder.recordTransportFailure(kind, `${err.code ? err.code + ': ' : ''}${err.message}`, performance.now());
    });
    ctx.stop.on(() => {
      stopped = true;
      clearTimeout(timer);
      inst.stop();
    });
    const started = performance.now();
    ctx.progress.start(() => ({
      phase: overallRate !== undefined ? `throughput ${overallRate} req/s` : `throughput x${connections}`,
      elapsedS: (performance.now() - started) / 1000,
      totalS: o.requests !== undefined && o.duration === undefined ? undefined : secs,
      sent: recorder.sent,
      ok: recorder.ok,
      errors: recorder.responses - recorder.ok + countFailures(recorder),
      inFlight: Math.max(0, recorder.sent - recorder.responses - countFailures(recorder)),
      metric: 'latency',
      p50Ms: recorder.latency.percentileMs(50),
      p95Ms: recorder.latency.percentileMs(95),
    }));
  }).finally(() => ctx.progress.stop());

  const { result } = instance;
  // autocannon drops the requests still in flight when it stops: not failures of the target.
  recorder.aborted = Math.max(0, recorder.sent - recorder.responses - countFailures(recorder));
  const secs = recorder.activeSeconds();
  return {
    stopReason: instance.stopped ? 'interrupted' : 'completed',
    recorder,
    details: {
      mode: overallRate !== undefined
        ? { kind: 'rate', engine: 'autocannon', rate_rps: overallRate, connections, co_correction: o.coCorrection, expected_interval_ms: expectedIntervalMs ?? null }
        : { kind: 'connections', engine: 'autocannon', connections },
      ...(uncorrected ? { latency_uncorrected_ms: uncorrected.summary() } : {}),
      autocannon: {
        total_requests: result.totalRequests,
        completed_requests: result.totalCompletedRequests,
        errors: result.errors,
        timeouts: result.timeouts,
        non_2xx: result.non2xx,
        mean_rps: result.requests?.average ?? null,
        latency_p50_ms: result.latency?.p50 ?? null,
        latency_p99_ms: result.latency?.p99 ?? null,
        note: 'autocannon\'s own figures, uncorrected, for cross-checking; autocannon reconnects silently when the target drops a connection, so drops show up here as timeouts or errors.',
      },
    },
    metrics: latencyMetrics(recorder, secs),
    plots: uncorrected ? { latency_uncorrected_ms: uncorrected } : {},
  };
}

/** An autocannon client that keeps its last response's raw headers. */
interface HeaderKeeper { chatgateHeaders?: string[] }

function templates(ctx: ScenarioContext, onResponseFor?: (route: RouteKind) => AutocannonRequest['onResponse']): AutocannonRequest[] {
  const { target, options: o } = ctx;
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: `Bearer ${target.keys.main}`,
    'user-agent': 'chatgate-load',
    ...extraHeaders(), // HEADERS of the run (checked by loadConfig: none of the names above)
  };
  const bodyOptions: BodyOptions = { model: o.model ?? target.models[0] ?? 'svc-auto', prompt: o.prompt, stream: false, maxTokens: o.maxTokens, brainId: target.brainId, extra: extraBodyOf(o) };
  const out: AutocannonRequest[] = [];
  for (let seq = 0; seq < TEMPLATES; seq++) {
    const route = routeAt(seq, o.brainShare);
    out.push({ method: 'POST', path: target.basePath + pathFor(route, target.brainId), headers, body: JSON.stringify(bodyFor(route, bodyOptions, seq)), ...(onResponseFor ? { onResponse: onResponseFor(route) } : {}) });
  }
  return out;
}

/** Why a 2xx body is not a chat completion (undefined when it is one). */
export function completionProblem(headers: Record<string, string>, body: string): string | undefined {
  if (!/json/i.test(headers['content-type'] ?? '')) return `answered with Content-Type ${headers['content-type'] ?? '(none)'}, not JSON`;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return `body is not JSON: ${describe(body, 80)}`;
  }
  const v = validate('chat-completion', json);
  return v.valid ? undefined : `body breaks ${v.errors[0]!.clause}: ${v.errors[0]!.message}`;
}

/** http-parser's [name, value, name, value, ...] as lower-case names; repeats joined. */
function lowerHeaders(raw: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    out[k] = out[k] === undefined ? raw[i + 1]! : `${out[k]}, ${raw[i + 1]}`;
  }
  return out;
}

function countFailures(r: Recorder): number {
  let n = 0;
  for (const [, c] of r.failures) n += c;
  return n;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
