// Every exchange a test worker sees is appended once (redacted, summarised in one
// format) to a JSON Lines file in the run directory: our raw client's (each attempt,
// the 429s it waited out included: lib/http/http-client.ts's onExchange), the client
// libraries' (harness/clients/fetch.ts) and the fuzz phase's generated requests. The
// runner adds the preflight's, then judges the per-response rules
// (lib/spec/rules/response-rules.ts) over all of them after the tests end
// (runner/run-wide-checks.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Exchange, ReuseRetry } from '../lib/http/http-client.ts';
import type { ExchangeSource, ExchangeSummary } from '../lib/spec/rules/exchange-summary.ts';
import { errorBodyProblems, errorObjectOf, parseJson } from '../lib/spec/error-body.ts';
import { errorSchemaProblems } from '../lib/spec/schema-validator.ts';
import { echoedSecretLabels, redact, redactDeep } from '../lib/run/redact.ts';
import { parseSse } from '../lib/http/sse-reader.ts';
import { DeltaSnapshotWatch } from '../lib/spec/cumulative-deltas.ts';
import { contentDeltaCount } from '../lib/spec/rules/stream-rules.ts';
import { asksForStream, judgeSuccessBody } from '../lib/spec/rules/success-body.ts';
import { judgeReplyContent } from '../lib/spec/rules/reply-content.ts';
import { ANSWER_BYTES as PREFLIGHT_ANSWER_BYTES } from '../lib/http/preflight.ts';

/** The title of the test whose code is running (clause() sets it), for the run-wide checks' messages. */
export const exchangeContext = new AsyncLocalStorage<string>();

export type { ExchangeSource, ExchangeSummary } from '../lib/spec/rules/exchange-summary.ts';

/** One exchange as either sender saw it: what the summary is made from. */
export interface ExchangeParts {
  seq?: number;
  source?: ExchangeSource;
  method: string;
  url: string;
  status?: number;
  headers: Record<string, string>;
  text?: string;
  transportError?: string;
  /** Known secrets seen in the response (our raw client finds them itself). */
  keyEchoes?: string[];
  curl: string;
  reuseRetry?: ReuseRetry;
  /** The data payloads of an event stream, when the sender parsed them already (else read from `text`). */
  streamData?: string[];
  /** The request's body (its form: whether it asked for a stream). */
  requestBody?: string;
  /** When the request was sent (ms since the epoch). */
  sentAt?: number;
}

/** The error-body rule (lib/spec/error-body.ts) applied to an exchange; a transport failure is its own problem. */
export function exchangeErrorBodyProblems(ex: Pick<Exchange, 'status' | 'error' | 'headers' | 'text'>): string[] {
  if (ex.error && ex.status === undefined) return [`no response (${ex.error.message})`];
  return errorBodyProblems(ex.headers['content-type'], ex.text ?? '', errorSchemaProblems);
}

/** Labels of the known secrets that appear in response headers or body (AUTH-9). */
export function echoedSecrets(headers: Record<string, string>, text: string): string[] {
  return echoedSecretLabels(headers, text);
}

export function summariseParts(p: ExchangeParts, test?: string): ExchangeSummary {
  const text = p.text ?? '';
  const s: ExchangeSummary = {
    seq: p.seq ?? 0, at: Date.now(), test, ...(p.source ? { source: p.source } : {}), method: p.method, url: p.url, status: p.status,
    transportError: p.transportError, keyEchoes: p.keyEchoes ?? echoedSecrets(p.headers, text), curl: p.curl,
    ...(p.reuseRetry ? { reuseRetry: p.reuseRetry } : {}),
    ...(p.sentAt !== undefined ? { sentAt: p.sentAt } : {}),
  };
  if (p.status !== undefined && p.status < 300 && (p.streamData || /^text\/event-stream/i.test(p.headers['content-type'] ?? ''))) {
    Object.assign(s, streamEvidence(p.streamData ?? sseData(text)));
  }
  const requestedStream = asksForStream(p.requestBody);
  if (requestedStream) s.requestedStream = true;
  const isStream = requestedStream || /^text\/event-stream/i.test(p.headers['content-type'] ?? '');
  // The preflight reads only the start of its answer: a body that long is cut by us, no evidence.
  const cutByPreflight = p.source === 'preflight' && Buffer.byteLength(text, 'utf8') >= PREFLIGHT_ANSWER_BYTES - 4;
  const success = judgeSuccessBody({
    method: p.method, path: pathOf(p.url), status: p.status, contentType: p.headers['content-type'], text,
    transportError: cutByPreflight ? `the preflight read only its first ${PREFLIGHT_ANSWER_BYTES} bytes (our cap exceeded)` : p.transportError,
    ...(isStream ? { streamData: p.streamData ?? sseData(text) } : {}),
    ...(requestedStream ? { requestedStream } : {}),
  });
  const content = judgeReplyContent({
    method: p.method, path: pathOf(p.url), status: p.status, contentType: p.headers['content-type'], text, request: parseJson(p.requestBody ?? ''),
    ...(isStream ? { streamData: p.streamData ?? sseData(text) } : {}),
  });
  if (content) {
    s.content = content;
    if (content.seen) s.bodyExcerpt ??= redact(text.slice(0, 300));
  }
  if (success) {
    s.success = success;
    if (success.some((j) => j.seen)) s.bodyExcerpt = redact(text.slice(0, 300));
  }
  if (p.status !== undefined && p.status >= 400) {
    s.errorBodyProblems = errorBodyProblems(p.headers['content-type'], text, errorSchemaProblems);
    const f = errorObjectOf(parseJson(text));
    s.hasErrorObject = !!f;
    if (f) Object.assign(s, { errorType: f.type, errorCode: f.code, errorMessage: f.message, errorHasParam: f.hasParam });
    s.bodyExcerpt = redact(text.slice(0, 300));
  }
  return s;
}

function pathOf(url: string): string {
  try { return new URL(url).pathname; } catch { return url; }
}

/** The data payloads of an event stream's body text (the strict reader, lib/http/sse-reader.ts). */
export function sseData(text: string): string[] {
  return parseSse(text).events.map((e) => e.data);
}

/** What EV-12 needs of a stream: its content deltas counted, and the snapshot finding (the one rule, lib/spec/cumulative-deltas.ts). */
export function streamEvidence(data: string[]): Pick<ExchangeSummary, 'contentDeltas' | 'snapshots'> {
  const watch = new DeltaSnapshotWatch();
  let contentDeltas = 0;
  for (const d of data) {
    if (d.trim() === '[DONE]') break;
    let chunk: unknown;
    try { chunk = JSON.parse(d); } catch { continue; } // EV-3 judges payloads that are not JSON
    contentDeltas += contentDeltaCount([chunk]);
    watch.pushChunk(chunk);
  }
  const snapshots = watch.finding();
  return { contentDeltas, ...(snapshots ? { snapshots } : {}) };
}

export function summarise(ex: Exchange, test?: string, source?: ExchangeSource): ExchangeSummary {
  return summariseParts({
    seq: ex.seq, ...(source ? { source } : {}), method: ex.request.method, url: ex.request.url, status: ex.status, headers: ex.headers,
    text: ex.text, transportError: ex.error?.message ?? (ex.cancelled ? 'the client aborted it on purpose (cancelled)' : undefined), keyEchoes: ex.keyEchoes, curl: ex.curl,
    ...(ex.reuseRetry ? { reuseRetry: ex.reuseRetry } : {}),
    ...(ex.stream ? { streamData: ex.stream.events.map((e) => e.data) } : {}),
    ...(ex.request.body !== undefined ? { requestBody: ex.request.body } : {}),
    sentAt: Date.now() - ex.durationMs,
  }, test);
}

/** Whether this process logs exchanges (a run of the runner; unit tests do not). */
export function exchangeLogOn(): boolean {
  return !!process.env.CHATGATE_RUN_DIR;
}

function append(summary: ExchangeSummary): void {
  const dir = process.env.CHATGATE_RUN_DIR;
  if (!dir) return;
  appendFileSync(join(dir, `exchanges-${process.pid}-${threadId}.jsonl`), JSON.stringify(redactDeep(summary)) + '\n');
}

/** Logs one exchange of our raw client (`source` 'fuzz' for the fuzz phase's generated requests). */
export function logExchange(ex: Exchange, test = exchangeContext.getStore(), source?: 'fuzz'): void {
  if (!process.env.CHATGATE_RUN_DIR) return;
  append(summarise(ex, test, source));
}

/** Logs one exchange a client library made (harness/clients/fetch.ts), in the same format. */
export function logClientExchange(parts: Omit<ExchangeParts, 'source'>, test = exchangeContext.getStore()): void {
  if (!process.env.CHATGATE_RUN_DIR) return;
  append(summariseParts({ ...parts, source: 'client' }, test));
}
