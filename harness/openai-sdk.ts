// The official openai client as the SVC-4 tests drive it: baseURL = target, apiKey =
// a service key, no retries (statuses are asserted). One deviation from a user's
// setup: redirects make fetch fail instead of being followed, so the key can never
// reach another origin through the SDK either.
import OpenAI from 'openai';
import type { ClauseContext } from './clause-test.ts';
import { config, http } from './target.ts';
import { toCurl } from '../lib/curl.ts';
import { DEFAULT_MAX_BODY_BYTES, formatBytes } from '../lib/http-client.ts';

/**
 * fetch for the SDK with the same guarantees as our raw client: no redirects followed,
 * one deadline (TIMEOUT_MS) over headers and body, and a size cap on the body. The SDK
 * itself would read a never-ending or huge body forever.
 */
export const guardedFetch: typeof fetch = async (url, init) => {
  const deadline = AbortSignal.timeout(config.timeoutMs);
  const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  const res = await fetch(url, { ...init, redirect: 'error', signal });
  if (!res.body) return res;
  let seen = 0;
  const capped = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > DEFAULT_MAX_BODY_BYTES) controller.error(new Error(`body exceeded ${formatBytes(DEFAULT_MAX_BODY_BYTES)}`));
      else controller.enqueue(chunk);
    },
  }));
  return new Response(capped, { status: res.status, statusText: res.statusText, headers: res.headers });
};

export function client(apiKey = config.apiKey!): OpenAI {
  return new OpenAI({ baseURL: config.targetUrl, apiKey, maxRetries: 0, timeout: config.timeoutMs, fetch: guardedFetch });
}

/** A curl line for the raw request behind an SDK call, for the report. */
export function curlFor(t: ClauseContext, method: string, path: string, body?: unknown, apiKey = config.apiKey!) {
  t.reproduce(toCurl({ method, url: http.urlFor(path), headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }));
}

