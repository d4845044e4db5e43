// The official openai client (newest installed major) bound to this run's target:
// baseURL = target, apiKey = a service key, no retries (statuses are asserted). One
// deviation from a user's setup: redirects make fetch fail instead of being followed,
// so the key can never reach another origin through the SDK either. The SVC-4/SVC-4b
// client matrix itself lives in harness/clients/ (every client, every major).
import OpenAI from 'openai';
import type { ClauseContext } from './clause-test.ts';
import { config, http } from './target.ts';
import { toCurl } from '../lib/curl.ts';
import { extraHeaders } from '../lib/extra-headers.ts';
import { Wire } from './clients/fetch.ts';

/**
 * fetch for the SDK with the same guarantees as our raw client: no redirects followed,
 * one deadline (TIMEOUT_MS) over headers and body, and a size cap on the body. It goes
 * through a Wire, as the client matrix does, so every exchange lands in the run's
 * exchange log and the run-wide checks judge it.
 */
export const guardedFetch: typeof fetch = (input, init) => new Wire({ timeoutMs: config.timeoutMs, retry429: false }).fetch(input, init);

export function client(apiKey = config.apiKey!): OpenAI {
  return new OpenAI({ baseURL: config.targetUrl, apiKey, maxRetries: 0, timeout: config.timeoutMs, fetch: guardedFetch, defaultHeaders: extraHeaders() });
}

/** A curl line for the raw request behind an SDK call, for the report. */
export function curlFor(t: ClauseContext, method: string, path: string, body?: unknown, apiKey = config.apiKey!) {
  t.reproduce(toCurl({ method, url: http.urlFor(path), headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }));
}

