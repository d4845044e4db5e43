// The target as the tests see it: configuration, keys, and request helpers that
// read like the spec ("send a chat request with the main key"). The runner has
// already validated the configuration and, for the embedded default, started the
// reference server and exported its URL and keys, so loadConfig() here cannot fail.
import { AsyncLocalStorage } from 'node:async_hooks';
import { loadConfig } from '../lib/run/config.ts';
import { HttpClient, type AuthSpec, type Exchange, type RequestSpec } from '../lib/http/http-client.ts';
import { addSecret } from '../lib/run/redact.ts';
import { registerSecrets } from '../lib/http/extra-headers.ts';
import { runGovernor } from '../lib/run/governor.ts';
import { logExchange } from './exchange-log.ts';

export const config = loadConfig();
if (!config.targetUrl || !config.apiKey) {
  throw new Error('suites/ run through the chatgate runner (npm test), which sets TARGET_URL and API_KEY');
}
addSecret(config.apiKey, 'API_KEY');
addSecret(config.limitedApiKey, 'LIMITED_API_KEY');
addSecret(config.rateLimitApiKey, 'RATE_LIMIT_API_KEY');
registerSecrets(config.extraHeaders);

/** Which test an exchange belongs to, for the run-wide checks' messages. */
export const currentTest = new AsyncLocalStorage<{ title: string; exchanges: Exchange[] }>();

/** Marks the fuzz phase's requests in the exchange log (its own tests judge ERR-1/ERR-2 on them, shrunk). */
export const fuzzTraffic = new AsyncLocalStorage<true>();

// Every exchange of the raw client goes to the exchange log here, once: each 429 it
// waited out and the answer it returned (the per-response rules judge them all).
export const http = new HttpClient({
  baseUrl: config.targetUrl,
  timeoutMs: config.timeoutMs,
  onExchange: (ex) => logExchange(ex, currentTest.getStore()?.title, fuzzTraffic.getStore() ? 'fuzz' : undefined),
  // One pace for the whole run, all workers (runner/governor-server.ts).
  gate: runGovernor(),
});

export const keys = {
  main: { key: config.apiKey } as AuthSpec,
  limited: config.limitedApiKey ? ({ key: config.limitedApiKey } as AuthSpec) : undefined,
  rateLimit: { key: config.rateLimitApiKey ?? config.apiKey } as AuthSpec,
  /** Well-formed, never issued: same shape as a real key so only its validity differs. */
  unknown: { key: `sk-chatgate-unknown-${'0'.repeat(32)}` } as AuthSpec,
};
addSecret(config.rateLimitApiKey ?? config.apiKey, 'RATE_LIMIT_API_KEY');

export const brainId = config.brainId;
export const models = config.models;
/** A well-formed uuid that no service will have issued as a brain. */
export const UNKNOWN_BRAIN = '00000000-0000-4000-8000-00000000c4a7';
export const MALFORMED_BRAIN = 'not-a-uuid';

/** Sends one request (logged by `http`) and records it for the test's report. */
export async function send(spec: RequestSpec): Promise<Exchange> {
  const ex = await http.send(spec);
  currentTest.getStore()?.exchanges.push(ex);
  return ex;
}

export const HELLO = [{ role: 'user', content: 'Say hello in one short sentence.' }];

export function chatBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: models[0], messages: HELLO, ...overrides };
}

export function chat(body: Record<string, unknown> = chatBody(), auth: AuthSpec = keys.main, extra: Partial<RequestSpec> = {}): Promise<Exchange> {
  return send({ method: 'POST', path: '/chat/completions', auth, json: body, stream: body.stream === true, ...extra });
}

export function brainChat(id: string, body: Record<string, unknown> = { messages: HELLO }, auth: AuthSpec = keys.main, extra: Partial<RequestSpec> = {}): Promise<Exchange> {
  return send({ method: 'POST', path: `/brains/${encodeURIComponent(id)}/chat`, auth, json: body, stream: body.stream === true, ...extra });
}

export function listModels(auth: AuthSpec = keys.main): Promise<Exchange> {
  return send({ method: 'GET', path: '/models', auth });
}

/**
 * A streaming probe that expects a stream and got something else judges its own clause
 * only when streams work at all: when a plain stream with the main key fails too (a front
 * that breaks every stream), the failure is SVC-5's and EV-1's, not the probe's.
 * `own` are the statuses the probe's clause judges itself (a 403 of a scope probe).
 */
export async function unlessStreamsFail(t: { inconclusive(reason: string): never }, ex: Exchange, own: number[] = []): Promise<void> {
  if (ex.status === 200 || (ex.status !== undefined && own.includes(ex.status))) return;
  const base = await plainStream();
  if (base.status !== 200) t.inconclusive(`stream: true fails for the main key with a plain request too (HTTP ${base.status ?? 'no answer'}): SVC-5 judges that, not this probe`);
}
const plainStream = shared(() => chat(chatBody({ stream: true })));

/** Memoises one exchange per file, so several clause tests can judge the same answer. */
export function shared<T>(make: () => Promise<T>): () => Promise<T> {
  // Mutation runs (mutation/setup.ts) judge a mutant by the tests that reach it: each
  // test then makes its own exchange, so the code it judges is counted as its own.
  if (process.env.CHATGATE_MUTATION) return make;
  let p: Promise<T> | undefined;
  return () => (p ??= make());
}
