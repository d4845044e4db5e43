// Non-streaming chat throughput: POST /chat/completions at a fixed arrival rate
// (SCENARIO=constant) or a ramp (SCENARIO=ramp), every answer checked against
// schemas/chat-completion.schema.json (or error.schema.json for a failing status).
//   k6 run --no-usage-report -e RATE=20 -e DURATION=2m load/k6/dist/chat-throughput.js
import exec from 'k6/execution';
import { expectedStatuses, setResponseCallback } from 'k6/http';
import type { Options } from 'k6/options';
import { targetConfig } from '../lib/config.ts';
import { addLimitThresholds, arrivalScenario, commonThresholds, loadSettings, SUMMARY_TREND_STATS, thresholdSettings } from '../lib/load.ts';
import { chatBody, judgeCompletion, postJson } from '../lib/chat.ts';
import { summaryHandler, type SummaryData } from '../lib/summary.ts';
import { distributionThresholds } from '../lib/distributions.ts';
import { checkTarget, setupTimeout } from '../lib/reachability.ts';

const cfg = targetConfig();
const load = loadSettings({ rate: 10, duration: '1m' });
const limits = thresholdSettings({ p95Ms: 10000 });

// A 429 is a legal answer under load: not an http_req_failed, judged by the 429-share threshold.
setResponseCallback(expectedStatuses({ min: 200, max: 299 }, 429));

export const options: Options = {
  scenarios: { chat: arrivalScenario(load, 1) },
  thresholds: addLimitThresholds({ ...commonThresholds(limits), ...distributionThresholds(['req_ms']) }, {
    error_share: ['http_req_failed', 'rate'],
    latency_p50_ms: ['http_req_duration{status:200}', 'med'],
    latency_p95_ms: ['http_req_duration{status:200}', 'p(95)'],
    latency_p99_ms: ['http_req_duration{status:200}', 'p(99)'],
  }),
  summaryTrendStats: SUMMARY_TREND_STATS,
  setupTimeout: setupTimeout(cfg),
};

const CHAT_URL = `${cfg.targetUrl}/chat/completions`;

export default function (): void {
  // Models rotate by VU and iteration; idInTest keeps the rotation spread across runners.
  const model = cfg.models[(exec.vu.idInTest + exec.vu.iterationInScenario) % cfg.models.length]!;
  const tags = { name: 'POST /chat/completions', kind: 'chat', model };
  judgeCompletion(postJson(CHAT_URL, chatBody(model), cfg.apiKey, tags, cfg.timeoutMs), tags);
}

/** Before any load: the key is set and the target gives an HTTP answer (lib/reachability.ts). */
export function setup(): void {
  checkTarget(cfg);
}

const summarize = summaryHandler('chat-throughput', options);
export function handleSummary(data: SummaryData): Record<string, string> {
  return summarize(data);
}
