// Streaming chat: POST /chat/completions with stream: true at a fixed or ramping
// arrival rate. k6/http reads whole responses, so the script reports
// http_req_waiting as time to first byte (chatgate_stream_ttfb) and the request's
// whole duration as end-to-end (chatgate_stream_e2e); the first byte can be the
// headers rather than the first token. Per-event timing (first token,
// inter-token gaps) needs the xk6-sse extension: see docs/K6.md.
// Every data payload is checked against schemas/chat-completion-chunk.schema.json.
//   k6 run --no-usage-report -e RATE=5 -e DURATION=2m load/k6/dist/chat-stream.js
import exec from 'k6/execution';
import { expectedStatuses, setResponseCallback } from 'k6/http';
import type { Options } from 'k6/options';
import { flag, integer, targetConfig } from '../lib/config.ts';
import { addLimitThresholds, arrivalScenario, commonThresholds, loadSettings, SUMMARY_TREND_STATS, thresholdSettings } from '../lib/load.ts';
import { chatBody, postJson } from '../lib/chat.ts';
import { judgeStream } from '../lib/stream.ts';
import { distributionThresholds } from '../lib/distributions.ts';
import { summaryHandler, type SummaryData } from '../lib/summary.ts';
import { checkTarget, setupTimeout } from '../lib/reachability.ts';

const cfg = targetConfig();
const load = loadSettings({ rate: 5, duration: '1m' });
const limits = thresholdSettings({ p95Ms: 30000 });
const ttfbP95Ms = integer('TTFB_P95_MS', 5000, 1, 3600000);
// OpenAI's include_usage: LangChain sends it on every streaming call; off by default (the spec does not show it).
const includeUsage = flag('INCLUDE_USAGE', false);

setResponseCallback(expectedStatuses({ min: 200, max: 299 }, 429));

const thresholds = commonThresholds(limits);
// For streams the latency figures are the two trends below (2xx streams only).
delete thresholds['http_req_duration{status:200}'];
thresholds.chatgate_stream_ttfb = [`p(95)<${ttfbP95Ms}`];
thresholds.chatgate_stream_e2e = [`p(95)<${limits.p95Ms}`];
// EV-12 (COMPAT): content deltas that are cumulative snapshots garble every client's reply.
thresholds.chatgate_cumulative_deltas = ['count<1'];
// SVC-9 (MUST): a reply that carries another request's canary or an earlier reply's id.
thresholds.chatgate_cross_talk = ['count<1'];
Object.assign(thresholds, distributionThresholds(['stream_ttfb_ms', 'stream_e2e_ms']));
addLimitThresholds(thresholds, { error_share: ['http_req_failed', 'rate'], e2e_p95_ms: ['chatgate_stream_e2e', 'p(95)'] });

export const options: Options = {
  scenarios: { stream: arrivalScenario(load, 1) },
  thresholds,
  summaryTrendStats: SUMMARY_TREND_STATS,
  setupTimeout: setupTimeout(cfg),
};

const CHAT_URL = `${cfg.targetUrl}/chat/completions`;

export default function (): void {
  const model = cfg.models[(exec.vu.idInTest + exec.vu.iterationInScenario) % cfg.models.length]!;
  const tags = { name: 'POST /chat/completions (stream)', kind: 'stream', model };
  const body = chatBody(model, { stream: true, extra: includeUsage ? { stream_options: { include_usage: true } } : undefined });
  judgeStream(postJson(CHAT_URL, body, cfg.apiKey, tags, cfg.timeoutMs), tags, body);
}

/** Before any load: the key is set and the target gives an HTTP answer (lib/reachability.ts). */
export function setup(): void {
  checkTarget(cfg);
}

const summarize = summaryHandler('chat-stream', options);
export function handleSummary(data: SummaryData): Record<string, string> {
  return summarize(data);
}
