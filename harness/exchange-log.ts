// Every exchange a test worker sees is appended (redacted, summarised) to a JSON
// Lines file in the run directory, so the runner can judge run-wide clauses
// (ERR-1, ERR-2, ERR-4, AUTH-9, ERR-3, ERR-5) over all of them after the tests end.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Exchange, ReuseRetry } from '../lib/http-client.ts';
import { errorBodyProblems, errorFields } from '../lib/error-body.ts';
import { redact, redactDeep } from '../lib/redact.ts';

export interface ExchangeSummary {
  seq: number;
  test?: string;
  method: string;
  url: string;
  status?: number;
  transportError?: string;
  /** For status >= 400: what is wrong with the error body (empty = fine). */
  errorBodyProblems?: string[];
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

export function summarise(ex: Exchange, test?: string): ExchangeSummary {
  const s: ExchangeSummary = {
    seq: ex.seq, test, method: ex.request.method, url: ex.request.url, status: ex.status,
    transportError: ex.error?.message, keyEchoes: ex.keyEchoes, curl: ex.curl,
    ...(ex.reuseRetry ? { reuseRetry: ex.reuseRetry } : {}),
  };
  if (ex.status !== undefined && ex.status >= 400) {
    s.errorBodyProblems = errorBodyProblems(ex);
    const f = errorFields(ex);
    if (f) Object.assign(s, { errorType: f.type, errorCode: f.code, errorMessage: f.message, errorHasParam: f.hasParam });
    s.bodyExcerpt = redact((ex.text ?? '').slice(0, 300));
  }
  return s;
}

export function logExchange(ex: Exchange, test?: string): void {
  const dir = process.env.CHATGATE_RUN_DIR;
  if (!dir) return;
  appendFileSync(join(dir, `exchanges-${process.pid}-${threadId}.jsonl`), JSON.stringify(redactDeep(summarise(ex, test))) + '\n');
}
