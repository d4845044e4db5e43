// Load shape from __ENV: the arrival-rate scenario (constant or ramping) and the
// thresholds every script shares. Arrival-rate executors keep sending at the asked
// rate however slow the target gets (an open model), which is what a throughput
// figure of an API should mean; k6 adds VUs up to MAX_VUS to keep the rate and
// reports dropped_iterations when it cannot.
import type { Scenario, Threshold } from 'k6/options';
import { ConfigError, duration, durationMs, env, flag, fraction, integer } from './config.ts';
import { parsePhaseText, PhaseError, phaseStages } from '../../engine/phase-plan.ts';
import { parseLimit, type MetricName } from '../../report/metric-names.ts';
import { LOAD_METRICS } from './load-metrics.ts';

export interface Stage { target: number; duration: string }

export interface LoadSettings {
  scenario: 'constant' | 'ramp';
  /** Iterations per timeUnit (constant), or the peak of the ramp. */
  rate: number;
  timeUnit: string;
  duration: string;
  startRate: number;
  stages: Stage[];
  vus: number;
  maxVus: number;
}

export interface LoadDefaults { rate: number; duration: string }

/** STAGES="10:30s,50:1m,0:10s" -> stages; the ramp's full shape in one variable. */
function parseStages(raw: string): Stage[] {
  return raw.split(',').map((part) => {
    const m = /^\s*(\d+)\s*:\s*(\S+)\s*$/.exec(part);
    if (!m || !/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(m[2]!)) {
      throw new ConfigError('STAGES', `"${part.trim()}" is not rate:duration; write e.g. STAGES=10:30s,50:1m,0:10s`);
    }
    return { target: Number(m[1]), duration: m[2]! };
  });
}

/** PHASES="ramp 30s to 70%, hold 300s" (the Node harness's --phases; a % of CAPACITY req/s) as stages, req/s per 1s. */
function phaseSettings(): { startRate: number; stages: Stage[] } | undefined {
  const raw = env('PHASES');
  if (raw === undefined) return undefined;
  const capRaw = env('CAPACITY');
  const cap = capRaw === undefined ? undefined : Number(capRaw);
  if (capRaw !== undefined && !(cap! > 0)) throw new ConfigError('CAPACITY', `"${capRaw}" is not a rate above 0 (req/s)`);
  if (env('TIME_UNIT') !== undefined && duration('TIME_UNIT', '1s') !== '1s') throw new ConfigError('PHASES', 'the phases\' rates are per second; drop TIME_UNIT');
  try {
    return phaseStages(parsePhaseText(raw, cap === undefined ? undefined : { rps: cap, source: 'CAPACITY' }, 'CAPACITY=<req/s>'));
  } catch (e) {
    if (e instanceof PhaseError) throw new ConfigError('PHASES', e.message);
    throw e;
  }
}

export function loadSettings(defaults: LoadDefaults): LoadSettings {
  const phased = phaseSettings();
  // When the operator makes the change (k6 runs no commands): recorded in every runner's summary and the merged one.
  if (env('CHANGE_AT') !== undefined) duration('CHANGE_AT', '0s');
  const scenario = phased ? 'ramp' : env('SCENARIO') ?? 'constant';
  if (scenario !== 'constant' && scenario !== 'ramp') throw new ConfigError('SCENARIO', `"${scenario}" is not constant or ramp`);
  const rate = integer('RATE', defaults.rate, 1, 1000000);
  const timeUnit = duration('TIME_UNIT', '1s');
  const dur = duration('DURATION', defaults.duration);
  const stagesRaw = env('STAGES');
  if (phased && (stagesRaw !== undefined || env('SCENARIO') === 'constant')) throw new ConfigError('PHASES', 'PHASES gives the whole ramp; drop STAGES and SCENARIO=constant');
  const stages = phased ? phased.stages : stagesRaw !== undefined
    ? parseStages(stagesRaw)
    : [{ target: rate, duration: duration('RAMP_UP', '30s') }, { target: rate, duration: dur }];
  const startRate = phased ? phased.startRate : integer('START_RATE', 1, 0, 1000000);
  const peak = scenario === 'ramp' ? Math.max(startRate, ...stages.map((s) => s.target)) : rate;
  const perSecond = (peak * 1000) / Math.max(1, durationMs(timeUnit));
  // Concurrency = rate x latency: pre-allocate for about 1 s of latency, allow 20 s.
  const vus = integer('VUS', Math.max(2, Math.ceil(perSecond)), 1, 100000);
  const maxVus = integer('MAX_VUS', Math.max(vus, Math.min(2000, Math.ceil(perSecond * 20))), 1, 100000);
  if (maxVus < vus) throw new ConfigError('MAX_VUS', `${maxVus} is below VUS (${vus}); raise MAX_VUS or lower VUS`);
  return { scenario, rate, timeUnit, duration: dur, startRate, stages, vus, maxVus };
}

/** How long the scenario sends (without gracefulStop): where a follow-up scenario may start. */
export function scenarioLengthMs(s: LoadSettings): number {
  if (s.scenario === 'constant') return durationMs(s.duration);
  return s.stages.reduce((sum, st) => sum + durationMs(st.duration), 0);
}

/**
 * The arrival-rate scenario for `share` of the load (brain-mix splits RATE across
 * traffic classes). k6 rates are integers per timeUnit, so a fractional share is
 * expressed over a longer timeUnit (0.3/s = 3 per 10 s) rather than rounded away.
 */
export function arrivalScenario(s: LoadSettings, share: number, extra: { exec?: string; tags?: Record<string, string> } = {}): Scenario {
  const values = s.scenario === 'constant' ? [s.rate * share] : [s.startRate * share, ...s.stages.map((st) => st.target * share)];
  let factor = 1;
  while (factor < 1000 && values.some((v) => Math.abs(v * factor - Math.round(v * factor)) > 1e-9)) factor *= 10;
  const scale = (v: number) => Math.round(v * share * factor);
  const timeUnit = factor === 1 ? s.timeUnit : `${durationMs(s.timeUnit) * factor}ms`;
  const preAllocatedVUs = Math.max(1, Math.ceil(s.vus * share));
  const maxVUs = Math.max(preAllocatedVUs, Math.ceil(s.maxVus * share));
  const common = { timeUnit, preAllocatedVUs, maxVUs, ...(extra.exec ? { exec: extra.exec } : {}), ...(extra.tags ? { tags: extra.tags } : {}) };
  if (s.scenario === 'constant') {
    return { executor: 'constant-arrival-rate', rate: scale(s.rate), duration: s.duration, ...common };
  }
  return {
    executor: 'ramping-arrival-rate',
    startRate: scale(s.startRate),
    stages: s.stages.map((st) => ({ target: scale(st.target), duration: st.duration })),
    ...common,
  };
}

export interface ThresholdSettings {
  p95Ms: number;
  maxFailureRate: number;
  max429Share: number;
  minChecksRate: number;
  abortFailureRate: number;
  abortOnShape: boolean;
}

export function thresholdSettings(defaults: { p95Ms: number; max429Share?: number }): ThresholdSettings {
  return {
    p95Ms: integer('P95_MS', defaults.p95Ms, 1, 3600000),
    maxFailureRate: fraction('MAX_FAILURE_RATE', 0.01),
    max429Share: fraction('MAX_429_SHARE', defaults.max429Share ?? 0.05),
    minChecksRate: fraction('MIN_CHECKS_RATE', 0.99),
    abortFailureRate: fraction('ABORT_FAILURE_RATE', 0.5),
    abortOnShape: flag('ABORT_ON_SHAPE', true),
  };
}

/**
 * The thresholds every chat script has. http_req_failed counts 429 as expected
 * (scripts call setResponseCallback) so the 429 share is judged on its own;
 * abortOnFail only where going on is pointless: most requests failing (target down,
 * wrong key) after a short grace, or a response of the wrong shape (the target
 * is broken; more load only repeats it).
 */
export function commonThresholds(t: ThresholdSettings): Record<string, Threshold[]> {
  return {
    // status:200, not expected_response:true: 429 is marked expected, and fast
    // refusals would pull the latency percentiles down.
    'http_req_duration{status:200}': [`p(95)<${t.p95Ms}`],
    http_req_failed: [
      `rate<${t.maxFailureRate}`,
      { threshold: `rate<${t.abortFailureRate}`, abortOnFail: true, delayAbortEval: '10s' },
    ],
    chatgate_rate_limited: [`rate<=${t.max429Share}`],
    checks: [`rate>=${t.minChecksRate}`],
    chatgate_body_shape_failures: [{ threshold: 'count<1', abortOnFail: t.abortOnShape }],
  };
}

/** p(99) for the summaries; k6's default list stops at p(95). */
export const SUMMARY_TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

/** A figure's k6 metric and the threshold's aggregation: ['http_req_failed', 'rate']. */
export type LimitTarget = [string, string];

/**
 * THRESHOLDS="ttft_p95_ms<500,output_tokens_per_s>100,error_share<0.01": the Node
 * harness's absolute limits (--threshold metric<limit, same names and parser) as k6
 * thresholds, added to `into`. `aliases` maps the figures a script measures under its
 * own metrics (error_share -> its failure rate); `tokenTiming` adds load-metrics.ts's.
 */
export function addLimitThresholds(into: Record<string, Threshold[]>, aliases: Partial<Record<MetricName, LimitTarget>>, tokenTiming = false): Record<string, Threshold[]> {
  const raw = env('THRESHOLDS');
  if (!raw) return into;
  for (const item of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const l = parseLimit(item);
    if (typeof l === 'string') throw new ConfigError('THRESHOLDS', l);
    const known = tokenTiming ? LOAD_METRICS.find(([n]) => n === l.metric) : undefined;
    const target: LimitTarget | undefined = aliases[l.metric] ?? (known ? [known[1], known[2]] : undefined);
    if (!target) throw new ConfigError('THRESHOLDS', `"${item}": this script does not measure ${l.metric}; it measures ${[...Object.keys(aliases), ...(tokenTiming ? LOAD_METRICS.map(([n]) => n) : [])].join(', ')}`);
    (into[target[0]] ??= []).push(`${target[1]}${l.op}${l.value}`);
  }
  return into;
}
