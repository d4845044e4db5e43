// Streaming chat with token timing, for a k6 built with the xk6-sse extension
// (`xk6 build --with github.com/phymbert/xk6-sse@v0.1.12`, docs/K6.md): the events are
// read as they arrive, so besides the checks of chat-stream it reports time to first
// token, inter-token latency, time per output token, end-to-end time and output tokens
// under the Node load driver's names and definitions (lib/token-timing.ts), with
// thresholds on the TTFT and ITL percentiles. Stock k6 cannot run it (no k6/x/sse).
// Every event goes through the suite's SSE framing (lib/sse-extension.ts) and every
// data payload is checked against schemas/chat-completion-chunk.schema.json.
//   k6-sse run --no-usage-report -e RATE=5 -e DURATION=2m load/k6/dist/chat-stream-sse.js
import exec from 'k6/execution';
import { check } from 'k6';
import { Counter, Rate } from 'k6/metrics';
import sse from 'k6/x/sse';
import type { Options } from 'k6/options';
import { ConfigError, duration, durationMs, env, extraHeaders, flag, integer, targetConfig } from '../lib/config.ts';
import { addLimitThresholds, arrivalScenario, commonThresholds, loadSettings, SUMMARY_TREND_STATS, thresholdSettings } from '../lib/load.ts';
import { chatBody, CHECK, logProblem } from '../lib/chat.ts';
import { judgeCrossTalk } from '../lib/cross-talk.ts';
import { recordStatus } from '../lib/metrics.ts';
import { mediaType, STREAM_CHECK, StreamJudge } from '../lib/stream.ts';
import { ExtensionFeed } from '../lib/sse-extension.ts';
import { recordTiming, streamsOk } from '../lib/token-timing.ts';
import { distributionThresholds } from '../lib/distributions.ts';
import { summaryHandler, type SummaryData } from '../lib/summary.ts';
import { checkTarget, setupTimeout } from '../lib/reachability.ts';
import { SLICE_METRIC, sliceTag } from '../lib/slices.ts';

const cfg = targetConfig();
const load = loadSettings({ rate: 5, duration: '1m' });
const limits = thresholdSettings({ p95Ms: 60000 });
const ttftP95Ms = integer('TTFT_P95_MS', 10000, 1, 3600000);
const itlP95Ms = integer('ITL_P95_MS', 1000, 1, 3600000);
// Usage in the last chunk gives output tokens and TPOT, as the Node driver asks for it.
const includeUsage = flag('INCLUDE_USAGE', true);
// SLICE: every stream's samples tagged with the slice of its send time, for per-slice figures from `--out json` (lib/slices.ts).
const sliceS = env('SLICE') === undefined ? undefined : durationMs(duration('SLICE', '5s')) / 1000;
if (sliceS !== undefined && !(sliceS >= 1 && Number.isInteger(sliceS))) throw new ConfigError('SLICE', `"${env('SLICE')}" is not a whole number of seconds (1s or more)`);
const slicePoints = new Counter(SLICE_METRIC);

/**
 * Share of sent streams that did not succeed: no answer, a status other than 2xx or
 * 429, or a 2xx stream that failed a check. xk6-sse feeds neither http_req_failed nor
 * a response callback, so this is the script's failure rate (429s are judged by
 * chatgate_rate_limited, as in the other scripts).
 */
const streamFailed = new Rate('chatgate_stream_failed');
/**
 * 2xx streams of which the extension handed over nothing at all: an empty body, or a
 * legal stream with lone-CR line ends, which xk6-sse cannot split (it waits for LF).
 * The two look the same from here, so such a stream is not judged (neither failed nor
 * timed) and the summary warns; chat-stream and the Node driver read either.
 */
const nothingRead = new Counter('chatgate_sse_nothing_read');

const thresholds = commonThresholds(limits);
// xk6-sse's requests carry no expected_response tag and feed no http_req_failed: the
// stream's own figures and failure rate take their places.
delete thresholds['http_req_duration{status:200}'];
delete thresholds.http_req_failed;
thresholds.chatgate_stream_failed = [
  `rate<${limits.maxFailureRate}`,
  { threshold: `rate<${limits.abortFailureRate}`, abortOnFail: true, delayAbortEval: '10s' },
];
thresholds.ttft_ms = [`p(95)<${ttftP95Ms}`];
thresholds.itl_ms = [`p(95)<${itlP95Ms}`];
thresholds.e2e_ms = [`p(95)<${limits.p95Ms}`];
thresholds.chatgate_cumulative_deltas = ['count<1'];
// SVC-9 (MUST): a reply that carries another request's canary or an earlier reply's id.
thresholds.chatgate_cross_talk = ['count<1'];
Object.assign(thresholds, distributionThresholds(['ttft_ms', 'itl_ms', 'tpot_ms', 'e2e_ms']));
addLimitThresholds(thresholds, { error_share: ['chatgate_stream_failed', 'rate'] }, true);

export const options: Options = {
  scenarios: { stream: arrivalScenario(load, 1) },
  thresholds,
  summaryTrendStats: SUMMARY_TREND_STATS,
  setupTimeout: setupTimeout(cfg),
};

const CHAT_URL = `${cfg.targetUrl}/chat/completions`;

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name) return headers[k];
  return undefined;
}

export default function (): void {
  const model = cfg.models[(exec.vu.idInTest + exec.vu.iterationInScenario) % cfg.models.length]!;
  const tags: Record<string, string> = { name: 'POST /chat/completions (stream, xk6-sse)', kind: 'stream', model };
  if (sliceS === undefined) {
    stream(model, tags);
    return;
  }
  tags.slice = sliceTag(Date.now() - exec.scenario.startTime, sliceS);
  const { status, ok } = stream(model, tags);
  slicePoints.add(1, { slice: tags.slice, status: String(status), ok: ok ? '1' : '0' });
}

/** One stream, judged and timed: its status (0: no answer) and whether it succeeded. */
function stream(model: string, tags: Record<string, string>): { status: number; ok: boolean } {
  const body = chatBody(model, { stream: true, extra: includeUsage ? { stream_options: { include_usage: true } } : undefined });
  const judge = new StreamJudge();
  const feed = new ExtensionFeed((ev) => judge.onData(ev.data, Date.now()));
  let timedOut = false;
  const start = Date.now();
  const res = sse.open(CHAT_URL, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { ...extraHeaders(), Authorization: `Bearer ${cfg.apiKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    tags,
  }, (client) => {
    // sse.open blocks the VU's event loop, so no timer can fire: TIMEOUT_MS is checked
    // as events arrive; a stream that sends nothing at all is cut by the scenario's end.
    const overdue = () => {
      if (!timedOut && Date.now() - start > cfg.timeoutMs) {
        timedOut = true;
        client.close();
      }
    };
    client.on('event', (e) => {
      feed.event(e);
      overdue();
    });
    client.on('error', (e) => {
      feed.error(typeof e.error === 'function' ? String(e.error()) : String(e));
      overdue();
    });
  });
  const end = Date.now();
  const framing = feed.end();
  const status = res.error ? 0 : res.status;
  recordStatus(status, tags);
  check(status, { [CHECK.status]: (s) => (s >= 200 && s < 300) || s === 429 }, tags);
  if (status === 0) logProblem(`no response to a stream request: ${res.error}`);
  if (status < 200 || status >= 300) {
    // An error status's body is not judged here (the extension hands over no raw body): chat-stream does that.
    if (status !== 429) streamFailed.add(true, tags);
    streamsOk.add(0, tags);
    return { status, ok: false };
  }
  if (feed.handed === 0 && feed.transportErrors.length === 0 && !timedOut) {
    nothingRead.add(1, tags);
    streamsOk.add(0, tags);
    return { status, ok: false };
  }
  nothingRead.add(0, tags);
  const eventStream = mediaType(headerValue(res.headers, 'content-type')) === 'text/event-stream';
  check(eventStream, { [STREAM_CHECK.eventStream]: (v) => v }, tags);
  judge.record(tags, { unterminated: framing.unterminated });
  judgeCrossTalk(body, judge.content, judge.id, tags);
  if (timedOut) logProblem(`stream still open after TIMEOUT_MS (${cfg.timeoutMs} ms): closed`);
  for (const t of feed.transportErrors.slice(0, 1)) logProblem(`stream read error: ${t}`);
  const ok = eventStream && judge.ok() && !timedOut && feed.transportErrors.length === 0;
  streamFailed.add(!ok, tags);
  if (ok) recordTiming(judge, start, end, tags);
  else streamsOk.add(0, tags);
  return { status, ok };
}

/** Before any load: the key is set and the target gives an HTTP answer (lib/reachability.ts). */
export function setup(): void {
  checkTarget(cfg);
}

const summarize = summaryHandler('chat-stream-sse', options);
export function handleSummary(data: SummaryData): Record<string, string> {
  return summarize(data);
}
