// Guards that run before any request: loopback targets only unless --allow-remote,
// hard caps on duration, rate and concurrency (raised only by explicit --cap-*
// options), and the plan (rate x duration, request count) printed for a remote target
// and by --dry-run.
import { UsageError, runSeconds, type LoadOptions, type Scenario } from './options.ts';
import { isRehearsal, resolveRehearsal } from './phases.ts';

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (/^::ffff:127\./.test(h)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A target by its address, as a load summary names it (the embedded reference is named where it starts). */
export function targetKind(url: URL): 'loopback' | 'remote' {
  return isLoopbackHost(url.hostname) ? 'loopback' : 'remote';
}

export function checkRemote(targetUrl: string, allowRemote: boolean): void {
  const host = new URL(targetUrl).hostname;
  if (!isLoopbackHost(host) && !allowRemote) {
    throw new UsageError(`TARGET_URL host ${host} is not loopback; a load run against it needs --allow-remote (LOAD_ALLOW_REMOTE=1), and --dry-run shows the plan first`);
  }
}

/** Share of a sweep step at its start whose requests are left out of its latency figures: they meet an empty system. */
const SETTLE_SHARE = 0.1;

/** A sweep step's length and settle: a rate step lasts long enough for --step-min-requests after the settle. */
export function stepTiming(value: number, o: LoadOptions): { durationS: number; settleS: number } {
  const settleS = o.stepDuration * SETTLE_SHARE;
  if (o.sweepBy !== 'rate') return { durationS: o.stepDuration, settleS: Math.max(settleS, Math.min(o.rampUp, o.stepDuration / 4)) };
  return { durationS: Math.max(o.stepDuration, settleS + o.stepMinRequests / value), settleS };
}

/** The steps a sweep will try (bounded by --sweep-steps and --sweep-max). */
export function sweepSteps(o: LoadOptions): number[] {
  const max = o.sweepMax ?? (o.sweepBy === 'rate' ? o.capRate : o.capConcurrency);
  const start = o.sweepBy === 'concurrency' && o.concurrency !== undefined ? o.concurrency : o.sweepStart;
  const steps: number[] = [];
  let v = start;
  while (steps.length < o.sweepSteps && v <= max * (1 + 1e-9)) {
    steps.push(o.sweepBy === 'concurrency' ? Math.max(1, Math.round(v)) : round2(v));
    v = o.sweepStep !== undefined ? v + o.sweepStep : v * o.sweepFactor;
  }
  return steps;
}

/** Ramp rates of the rate-limit scenario, up to --ramp-max. */
export function rampSteps(o: LoadOptions): number[] {
  const steps: number[] = [];
  for (let r = o.rampStart; r <= o.rampMax * (1 + 1e-9) && steps.length < 200; r *= o.rampFactor) steps.push(round2(r));
  return steps;
}

export interface Plan {
  /** Longest the run can take, seconds (before the requests in flight finish). */
  maxSeconds: number;
  /** Highest request rate it plans, req/s (undefined: closed loop, as fast as the target answers). */
  maxRate?: number;
  /** Most connections or streams at once it plans. */
  maxConcurrency?: number;
  /** Planned request count (undefined: depends on the target's speed). */
  requests?: number;
  lines: string[];
}

/** `traceSpanS`: the length of the --trace being replayed, once it is read. */
export function planFor(scenario: Scenario, o: LoadOptions, traceSpanS?: number): Plan {
  const lines: string[] = [];
  switch (scenario) {
    case 'throughput': {
      const secs = runSeconds(o);
      const requests = o.rate !== undefined ? Math.min(Math.ceil(o.rate * secs), o.requests ?? Infinity) : o.requests;
      lines.push(o.rate !== undefined
        ? `throughput: ${o.rate} req/s (${o.rateEngine === 'open-loop' ? o.arrival ?? 'constant' : 'autocannon'}) x ${secs} s over ${o.connections} connections = ${requests} requests at most`
        : `throughput: ${o.connections} connections, closed loop (as fast as the target answers) for ${secs} s${o.requests ? `, at most ${o.requests} requests` : ''}`);
      return { maxSeconds: secs, maxRate: o.rate, maxConcurrency: o.connections, requests: Number.isFinite(requests) ? requests : undefined, lines };
    }
    case 'stream': {
      if (isRehearsal(o)) {
        const { plan, atS, sliceS } = resolveRehearsal(o);
        const requests = Math.ceil(plan.phases.reduce((a, p) => a + ((p.fromRps + p.toRps) / 2) * p.durationS, 0));
        lines.push(`stream: ${plan.phases.length} phase${plan.phases.length === 1 ? '' : 's'} over ${plan.totalS} s, up to ${plan.peakRps} req/s, about ${Math.min(requests, o.requests ?? Infinity)} streams${plan.capacity ? ` (% of ${plan.capacity.rps} req/s: ${plan.capacity.source})` : ''}`);
        for (const p of plan.phases) lines.push(`  ${p.startS} s: ${p.text} (${p.fromRps === p.toRps ? `${p.toRps} req/s` : `${p.fromRps} to ${p.toRps} req/s`})`);
        if (atS !== undefined) lines.push(`change at ${atS} s: ${o.run !== undefined ? `runs ${JSON.stringify(o.run)}` : 'a mark'}`);
        lines.push(`slices of ${sliceS} s, each judged against the SLOs`);
        return { maxSeconds: plan.totalS, maxRate: plan.peakRps, requests, lines };
      }
      const secs = runSeconds(o);
      if (o.concurrency !== undefined) {
        lines.push(`stream: ${o.concurrency} concurrent streams (closed loop) for ${secs} s${o.requests ? `, at most ${o.requests} requests` : ''}`);
        return { maxSeconds: secs, maxConcurrency: o.concurrency, requests: o.requests, lines };
      }
      if (o.arrival === 'trace') {
        const limit = o.duration ?? o.capDuration;
        const upTo = traceSpanS !== undefined && traceSpanS < limit ? traceSpanS : limit;
        const what = traceSpanS === undefined ? `for at most ${upTo} s` : traceSpanS <= limit ? `${round1(traceSpanS)} s (the trace's length)` : `its first ${upTo} s of ${round1(traceSpanS)} s (${o.duration !== undefined ? '--duration' : '--cap-duration'})`;
        lines.push(`stream: replay of the trace ${o.trace} at its own times, ${what}${o.requests ? `, at most ${o.requests} requests` : ''}`);
        return { maxSeconds: upTo, requests: o.requests, lines };
      }
      const rate = o.rate ?? 10;
      const requests = Math.min(Math.ceil(rate * secs), o.requests ?? Infinity);
      lines.push(`stream: ${o.arrival === 'gamma' ? `gamma (burstiness ${o.burstiness})` : o.arrival ?? 'poisson'} arrivals at ${rate} req/s x ${secs} s = about ${requests} streams`);
      return { maxSeconds: secs, maxRate: rate, requests, lines };
    }
    case 'sweep': {
      const steps = sweepSteps(o);
      // The bisection's steps (and re-runs) lie between ladder steps: none longer than the first, none sending more than the most.
      const dur = (v: number) => stepTiming(v, o).durationS;
      const secs = Math.round((steps.reduce((a, s) => a + dur(s), 0) + o.sweepRefineSteps * dur(steps[0] ?? o.sweepStart)) * 10) / 10;
      const unit = o.sweepBy === 'rate' ? 'req/s' : 'concurrent streams';
      const most = steps.reduce((m, s) => Math.max(m, s * dur(s)), 0);
      const requests = o.sweepBy === 'rate' ? Math.ceil(steps.reduce((a, s) => a + s * dur(s), 0) + o.sweepRefineSteps * most) : undefined;
      lines.push(`sweep: ${steps.length} steps of ${o.stepDuration} s${o.sweepBy === 'rate' ? ` (longer where that sends fewer than ${o.stepMinRequests} requests after the settle)` : ''} at ${steps.join(', ')} ${unit}, up to ${secs} s in all${requests ? `, at most ${Math.min(requests, o.requests ?? Infinity)} streams` : ''}`);
      lines.push(`sweep: stops at the first step that breaks the SLO (p95 TTFT <= ${o.sloTtftP95Ms} ms, errors <= ${(o.sloErrorShare * 100).toFixed(1)} %${o.sloItlP95Ms ? `, p95 ITL <= ${o.sloItlP95Ms} ms` : ''}${o.sloTpotP95Ms ? `, p95 TPOT <= ${o.sloTpotP95Ms} ms` : ''}${o.sloE2eP95Ms ? `, p95 E2E <= ${o.sloE2eP95Ms} ms` : ''}) or where 429/503 dominate`);
      lines.push(`sweep: then bisects up to ${o.sweepRefineSteps} more steps until the limit is within ${(o.sweepTolerance * 100).toFixed(1)} %`);
      const top = steps[steps.length - 1] ?? 0;
      return o.sweepBy === 'rate'
        ? { maxSeconds: secs, maxRate: top, requests, lines }
        : { maxSeconds: secs, maxConcurrency: top, lines };
    }
    case 'rate-limit': {
      const steps = rampSteps(o);
      const top = steps[steps.length - 1] ?? o.rampStart;
      const burst = Math.min(top * 2, o.capRate);
      const secs = steps.length * o.rampStepDuration + o.burstDuration + o.recoveryMax;
      const requests = Math.ceil(steps.reduce((a, s) => a + s * o.rampStepDuration, 0) + burst * o.burstDuration);
      lines.push(`rate-limit: ramp ${steps.length} steps of ${o.rampStepDuration} s from ${o.rampStart} to ${top} req/s until the first 429, then ${o.burstDuration} s at twice that rate (at most ${burst} req/s)`);
      lines.push(`rate-limit: then probes for recovery for up to ${o.recoveryMax} s; a second key sends ${o.bystanderRate} req/s meanwhile; at most ${Math.min(requests, o.requests ?? Infinity)} requests on the throttled key`);
      return { maxSeconds: secs, maxRate: Math.max(top, burst), requests, lines };
    }
  }
}

/** Throws a UsageError naming the cap and how to raise it. */
export function checkCaps(scenario: Scenario, o: LoadOptions, plan: Plan): void {
  if (plan.maxSeconds > o.capDuration) {
    throw new UsageError(`the ${scenario} run is planned for up to ${plan.maxSeconds} s, above the cap of ${o.capDuration} s; shorten it or raise the cap explicitly with --cap-duration ${Math.ceil(plan.maxSeconds)}`);
  }
  if (plan.maxRate !== undefined && plan.maxRate > o.capRate) {
    throw new UsageError(`the ${scenario} run plans ${plan.maxRate} req/s, above the cap of ${o.capRate} req/s; lower it or raise the cap explicitly with --cap-rate ${Math.ceil(plan.maxRate)}`);
  }
  const conc = Math.max(plan.maxConcurrency ?? 0, scenario === 'throughput' ? o.connections : 0);
  if (conc > o.capConcurrency) {
    throw new UsageError(`the ${scenario} run plans ${conc} concurrent ${scenario === 'throughput' ? 'connections' : 'streams'}, above the cap of ${o.capConcurrency}; lower it or raise the cap explicitly with --cap-concurrency ${conc}`);
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
