// What a load run sends to: the configured TARGET_URL with its keys (lib/run/config.ts,
// the same variables as npm test), or, without TARGET_URL, the embedded reference
// server in a child process, with latency injection so the figures mean something.
// Which key does what: API_KEY carries the load; the rate-limit scenario throttles
// RATE_LIMIT_API_KEY (default API_KEY) and watches a second key (API_KEY when the
// throttled key is another one, else LIMITED_API_KEY).
import type { Config } from '../../lib/run/config.ts';
import { addSecret } from '../../lib/run/redact.ts';
import { createDispatcher, proxyFor, type ProxyChoice } from '../../lib/http/proxy.ts';
import { sendThroughProxy } from '../engine/lean-client.ts';
import type { ReferenceOptions } from '../../reference/server.ts';
import type { LoadOptions } from './options.ts';
import { startReferenceProcess, type EmbeddedReference } from './reference-process.ts';
import { targetKind } from './safety.ts';

export interface LoadTarget {
  /** Base URL ending in /v1. */
  baseUrl: string;
  origin: string;
  /** Path of the base URL ('/v1', or '/api/v1' behind a prefix). */
  basePath: string;
  kind: 'embedded-reference' | 'loopback' | 'remote';
  keys: {
    main: string;
    throttled: string;
    throttledVariable: string;
    bystander?: string;
    bystanderVariable?: string;
  };
  brainId?: string;
  models: string[];
  reference?: EmbeddedReference;
  /** The forward proxy the requests go through (HTTPS_PROXY/HTTP_PROXY, lib/http/proxy.ts), if any. */
  proxy?: ProxyChoice;
  close(): Promise<void>;
}

/** The embedded reference's options from the --ref-* options. */
export function referenceOptionsFor(o: LoadOptions): ReferenceOptions {
  const opts: ReferenceOptions = {
    latency: {
      ttftMs: o.refTtftMs,
      itlMs: o.refItlMs,
      jsonMs: o.refJsonMs,
      stallEvery: o.refStallEvery,
      stallMs: o.refStallMs,
    },
    replyWords: o.refReplyWords,
    rateLimit: {
      main: { limit: o.refMainLimit, windowMs: 1000 },
      rateLimit: { limit: o.refRateLimit, windowMs: 1000 },
    },
  };
  if (o.refOverloadInFlight !== undefined) opts.overloadInFlight = o.refOverloadInFlight;
  if (o.refDefect) opts.defect = o.refDefect;
  if (o.refVariants.length) opts.variants = o.refVariants;
  if (o.refEngine) {
    opts.engine = { maxBatch: o.refMaxBatch, prefillTokensPerS: o.refPrefillTps, decodeStepMs: o.refDecodeStepMs, decodeStepPerSeqMs: o.refDecodeStepPerSeqMs };
  }
  return opts;
}

export function remoteTarget(config: Config): LoadTarget {
  const baseUrl = config.targetUrl!;
  const url = new URL(baseUrl);
  for (const [v, k] of [['API_KEY', config.apiKey], ['RATE_LIMIT_API_KEY', config.rateLimitApiKey], ['LIMITED_API_KEY', config.limitedApiKey]] as const) addSecret(k, v);
  const main = config.apiKey!;
  const throttled = config.rateLimitApiKey ?? main;
  const bystander = throttled !== main ? main : config.limitedApiKey;
  // Behind a forward proxy the lean client sends on undici's ProxyAgent (autocannon cannot: load/run.ts refuses it).
  const proxy = proxyFor(url);
  const proxied = proxy && createDispatcher(url, {
    headersTimeout: config.timeoutMs + 2_000, bodyTimeout: config.timeoutMs + 2_000,
    keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000,
  });
  sendThroughProxy(proxied ? { dispatcher: proxied, origin: url.origin } : undefined);
  return {
    baseUrl,
    origin: url.origin,
    basePath: url.pathname,
    kind: targetKind(url),
    keys: {
      main,
      throttled,
      throttledVariable: config.rateLimitApiKey ? 'RATE_LIMIT_API_KEY' : 'API_KEY',
      bystander,
      bystanderVariable: bystander === undefined ? undefined : throttled !== main ? 'API_KEY' : 'LIMITED_API_KEY',
    },
    brainId: config.brainId,
    models: config.models,
    ...(proxy ? { proxy } : {}),
    close: async () => {
      sendThroughProxy(undefined);
      await proxied?.destroy().catch(() => {});
    },
  };
}

export async function embeddedTarget(options: ReferenceOptions): Promise<LoadTarget> {
  const ref = await startReferenceProcess(options);
  return { ...referenceTarget(ref), reference: ref };
}

/** A reference server started elsewhere (in this process, or a child) as a target; close() closes it. */
export function referenceTarget(ref: { url: string; keys: { main: string; limited: string; rateLimit: string }; brainId: string; models: string[]; close(): Promise<void> }): LoadTarget {
  for (const [label, value] of Object.entries(ref.keys)) addSecret(value, `reference ${label} key`);
  const url = new URL(ref.url);
  return {
    baseUrl: ref.url,
    origin: url.origin,
    basePath: url.pathname,
    kind: 'embedded-reference',
    keys: {
      main: ref.keys.main,
      throttled: ref.keys.rateLimit,
      throttledVariable: 'RATE_LIMIT_API_KEY',
      bystander: ref.keys.main,
      bystanderVariable: 'API_KEY',
    },
    brainId: ref.brainId,
    models: ref.models,
    close: () => ref.close(),
  };
}
