// Every exchange a test worker sees, our raw client's and the client libraries' alike
// (harness/clients/fetch.ts), is appended (redacted, summarised in one format) to a
// JSON Lines file in the run directory, so the runner can judge run-wide clauses
// (ERR-1, ERR-2, ERR-3, ERR-4, ERR-5, AUTH-9) over all of them after the tests end
// (runner/run-wide-checks.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Exchange, ReuseRetry } from '../lib/http-client.ts';
import { errorBodyProblems, errorObjectOf, parseJson } from '../lib/error-body.ts';
import { errorSchemaProblems } from '../lib/schema-validator.ts';
import { knownSecrets, redact, redactDeep } from '../lib/redact.ts';

/** The title of the test whose code is running (clause() sets it), for the run-wide checks' messages. */
export const exchangeContext = new AsyncLocalStorage<string>();

export interface ExchangeSummary {
  seq: number;
  test?: string;
  /** 'client': sent by a client library through the Wire (harness/clients/fetch.ts); absent: our raw client. */
  source?: 'client';
  method: string;
  url: string;
  status?: number;
  transportError?: string;
  /** For status >= 400: what is wrong with the error body (empty = fine). */
  errorBodyProblems?: string[];
  /** For status >= 400: the body is JSON with an `error` object (ERR-3 judges its members whatever ERR-1 says). */
  hasErrorObject?: boolean;
  errorType?: unknown;
  errorCode?: unknown;
  errorMessage?: unknown;
  errorHasParam?: boolean;
  keyEchoes: string[];
  curl: string;
  bodyExcerpt?: string;
  /** Sent again on a new connection after the reused one failed before any response (SVC-8 evidence, lib/connection-reuse.ts). */
  reuseRetry?: ReuseRetry;
}

/** One exchange as either sender saw it: what the summary is made from. */
export interface ExchangeParts {
  seq?: number;
  source?: 'client';
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
}

/** The error-body rule (lib/error-body.ts) applied to an exchange; a transport failure is its own problem. */
export function exchangeErrorBodyProblems(ex: Pick<Exchange, 'status' | 'error' | 'headers' | 'text'>): string[] {
  if (ex.error && ex.status === undefined) return [`no response (${ex.error.message})`];
  return errorBodyProblems(ex.headers['content-type'], ex.text ?? '', errorSchemaProblems);
}

/** Labels of the known secrets that appear in response headers or body (AUTH-9). */
export function echoedSecrets(headers: Record<string, string>, text: string): string[] {
  const hay = [JSON.stringify(headers), text];
  return knownSecrets().filter((s) => hay.some((h) => h.includes(s.value))).map((s) => s.label);
}

export function summariseParts(p: ExchangeParts, test?: string): ExchangeSummary {
  const text = p.text ?? '';
  const s: ExchangeSummary = {
    seq: p.seq ?? 0, test, ...(p.source ? { source: p.source } : {}), method: p.method, url: p.url, status: p.status,
    transportError: p.transportError, keyEchoes: p.keyEchoes ?? echoedSecrets(p.headers, text), curl: p.curl,
    ...(p.reuseRetry ? { reuseRetry: p.reuseRetry } : {}),
  };
  if (p.status !== undefined && p.status >= 400) {
    s.errorBodyProblems = errorBodyProblems(p.headers['content-type'], text, errorSchemaProblems);
    const f = errorObjectOf(parseJson(text));
    s.hasErrorObject = !!f;
    if (f) Object.assign(s, { errorType: f.type, errorCode: f.code, errorMessage: f.message, errorHasParam: f.hasParam });
    s.bodyExcerpt = redact(text.slice(0, 300));
  }
  return s;
}

export function summarise(ex: Exchange, test?: string): ExchangeSummary {
  return summariseParts({
    seq: ex.seq, method: ex.request.method, url: ex.request.url, status: ex.status, headers: ex.headers,
    text: ex.text, transportError: ex.error?.message, keyEchoes: ex.keyEchoes, curl: ex.curl,
    ...(ex.reuseRetry ? { reuseRetry: ex.reuseRetry } : {}),
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

/** Logs one exchange of our raw client. */
export function logExchange(ex: Exchange, test = exchangeContext.getStore()): void {
  if (!process.env.CHATGATE_RUN_DIR) return;
  append(summarise(ex, test));
}

/** Logs one exchange a client library made (harness/clients/fetch.ts), in the same format. */
export function logClientExchange(parts: Omit<ExchangeParts, 'source'>, test = exchangeContext.getStore()): void {
  if (!process.env.CHATGATE_RUN_DIR) return;
  append(summariseParts({ ...parts, source: 'client' }, test));
}
