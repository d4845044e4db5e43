// The 429 probe: drives RATE_LIMIT_API_KEY (API_KEY when unset) past its rate limit
// with a bounded burst (RATE x DURATION requests at most, 50/s for 6 s by default),
// then checks the key is served again after the advertised wait. Mirrors the
// suite's LIM clauses under real concurrency:
//   LIM-1  past the limit: 429 with an error body; no 5xx other than 503, no dropped
//          connection (thresholds; no 429 at all fails "count>0": the probe proved nothing)
//   LIM-2  Retry-After / retry-after-ms / x-ratelimit-reset-* on a 429 (SHOULD: counted, no threshold)
//   LIM-3  served again after the advertised wait, 60 s at most (chatgate_recovered)
//   k6 run --no-usage-report load/k6/dist/ratelimit-probe.js
import { isDroppedOrServerError } from '../../../lib/spec/rules/status.ts';
import { sleep } from 'k6';
import { expectedStatuses, setResponseCallback, type Response } from 'k6/http';
import { Counter, Rate } from 'k6/metrics';
import type { Options, Scenario, Threshold } from 'k6/options';
import { fraction, integer, targetConfig } from '../lib/config.ts';
import { arrivalScenario, loadSettings, scenarioLengthMs, SUMMARY_TREND_STATS, thresholdSettings } from '../lib/load.ts';
import { chatBody, judgeCompletion, logProblem, postJson } from '../lib/chat.ts';
import { summaryHandler, type SummaryData } from '../lib/summary.ts';
import { readRetryHints } from '../../../lib/spec/retry-hints.ts';
import { checkTarget, setupTimeout } from '../lib/reachability.ts';

const cfg = targetConfig();
const load = loadSettings({ rate: 50, duration: '6s' });
// Only the failure-rate, checks-rate and shape settings apply: a probe wants 429s and is not about latency.
const limits = thresholdSettings({ p95Ms: 10000 });
const key = cfg.rateLimitApiKey ?? cfg.apiKey;
const attempts = integer('RECOVERY_ATTEMPTS', 3, 0, 10);
const maxWaitS = integer('RECOVERY_MAX_WAIT_S', 60, 1, 600);
const minRecovered = fraction('MIN_RECOVERED_RATE', 1);

setResponseCallback(expectedStatuses({ min: 200, max: 299 }, 429));

/** 5xx other than 503, or no response at all (dropped connection, timeout): LIM-1 forbids both. */
const unexpectedStatus = new Counter('chatgate_unexpected_status');
/** 429s that advertise no wait (LIM-2 is a SHOULD: reported, not a threshold). */
const noRetryHint = new Counter('chatgate_429_without_retry_hint');
/** 1 when the key was served again after the advertised wait (LIM-3). */
const recovered = new Rate('chatgate_recovered');

const scenarios: Record<string, Scenario> = { burst: arrivalScenario(load, 1, { exec: 'burst' }) };
const thresholds: Record<string, Threshold[]> = {
  chatgate_status_429: ['count>0'],
  chatgate_body_shape_failures: [{ threshold: 'count<1', abortOnFail: limits.abortOnShape }],
  chatgate_unexpected_status: [{ threshold: 'count<1', abortOnFail: true }],
  http_req_failed: [`rate<${limits.maxFailureRate}`],
  checks: [`rate>=${limits.minChecksRate}`],
};
if (attempts > 0) {
  // Starts once the burst has stopped sending; a single VU, so the wait is honest.
  scenarios.recovery = {
    executor: 'per-vu-iterations',
    vus: 1,
    iterations: 1,
    startTime: `${scenarioLengthMs(load) + 500}ms`,
    maxDuration: `${attempts * (maxWaitS + Math.ceil(cfg.timeoutMs / 1000)) + 5}s`,
    exec: 'recovery',
  };
  thresholds.chatgate_recovered = [`rate>=${minRecovered}`];
}

export const options: Options = { scenarios, thresholds, summaryTrendStats: SUMMARY_TREND_STATS, setupTimeout: setupTimeout(cfg) };

const CHAT_URL = `${cfg.targetUrl}/chat/completions`;
const MODEL = cfg.models[0]!;

function send(kind: string): Response {
  const tags = { name: 'POST /chat/completions', kind };
  // max_tokens 8 as in the suite's probe: the answer is not the point, the status is.
  return postJson(CHAT_URL, chatBody(MODEL, { extra: { max_tokens: 8 }, fixed: true }), key, tags, cfg.timeoutMs);
}

/** The wait a 429 advertises, in seconds, or undefined when it advertises none. */
export function advertisedWaitS(res: Response): number | undefined {
  // lib/spec/retry-hints.ts: the suite's and the load harness's parser (any header-name case).
  const { waitMs } = readRetryHints(res.headers);
  return waitMs === undefined ? undefined : waitMs / 1000;
}

export function burst(): void {
  const res = send('burst');
  const tags = { name: 'POST /chat/completions', kind: 'burst' };
  judgeCompletion(res, tags);
  const bad = isDroppedOrServerError(res.status);
  unexpectedStatus.add(bad ? 1 : 0, tags);
  if (bad) logProblem(`probe got ${res.status === 0 ? `no response (${res.error})` : `HTTP ${res.status}`} instead of 429 or 503`);
  if (res.status === 429) noRetryHint.add(advertisedWaitS(res) === undefined ? 1 : 0, tags);
}

export function recovery(): void {
  for (let i = 0; i < attempts; i++) {
    const res = send('recovery');
    if (res.status >= 200 && res.status < 300) {
      recovered.add(1);
      return;
    }
    if (i === attempts - 1) break;
    const wait = res.status === 429 ? advertisedWaitS(res) : undefined;
    sleep(Math.min(wait === undefined ? maxWaitS : Math.max(wait, 0.1), maxWaitS));
  }
  logProblem(`RATE_LIMIT_API_KEY was not served again after ${attempts} attempts with the advertised waits (LIM-3)`);
  recovered.add(0);
}

// `k6 run` needs a default function even when every scenario names its own exec.
export default function (): void {
  burst();
}

/** Before any load: the key is set and the target gives an HTTP answer (lib/reachability.ts). */
export function setup(): void {
  checkTarget(cfg);
}

const summarize = summaryHandler('ratelimit-probe', options);
export function handleSummary(data: SummaryData): Record<string, string> {
  return summarize(data);
}
