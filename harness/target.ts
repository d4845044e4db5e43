// The target as the tests see it: configuration, keys, and request helpers that
// read like the spec ("send a chat request with the main key"). Everything comes from
// the run context the runner wrote (lib/run/run-context.ts): the knobs, the brain and the
// models when this module loads (suite files enumerate them while vitest collects), the
// target and its keys only when first used, so importing this never throws and
// collecting the tests needs no target. Without a target (collecting, or outside npm
// test) a test that sends anything ends as a harness `error` saying so.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Config } from '../lib/run/config.ts';
import { keyFrom, runContext, type RunContext } from '../lib/run/run-context.ts';
import { HttpClient, type AuthSpec, type Exchange, type RequestSpec } from '../lib/http/http-client.ts';
import { extraHeaderList, registerRunSecrets } from '../lib/http/extra-headers.ts';
import { runGovernor } from '../lib/run/governor.ts';
import { exchangeContext, logExchange } from './exchange-log.ts';

interface Keys {
  apiKey: string; limitedApiKey?: string; rateLimitApiKey?: string;
  auth: { main: AuthSpec; limited?: AuthSpec; rateLimit: AuthSpec };
}
let keySet: { for: RunContext; keys: Keys } | undefined;

/**
 * Without a target (collecting the tests) the main key is this stand-in: suite files build
 * their probes from the key while vitest collects them (nothing is sent: the raw client and
 * the client libraries need the target's URL, which throws).
 */
const NO_KEY = 'chatgate-no-target-collecting-only';

/** The keys, read from the environment under the names the run context gives, once; registered as secrets. */
function keysOf(): Keys {
  const context = runContext();
  if (keySet?.for === context) return keySet.keys;
  const ref = context.target;
  const apiKey = ref ? keyFrom(ref.keys.main)! : NO_KEY;
  const limitedApiKey = ref ? keyFrom(ref.keys.limited) : undefined;
  const rateLimitApiKey = ref ? keyFrom(ref.keys.rateLimit) : undefined;
  if (ref) {
    // Before the first request: the keys and the secret HEADERS values.
    registerRunSecrets({ API_KEY: apiKey, LIMITED_API_KEY: limitedApiKey, RATE_LIMIT_API_KEY: rateLimitApiKey });
  }
  const keys: Keys = {
    apiKey, limitedApiKey, rateLimitApiKey,
    auth: { main: { key: apiKey }, limited: limitedApiKey ? { key: limitedApiKey } : undefined, rateLimit: { key: rateLimitApiKey ?? apiKey } },
  };
  keySet = { for: context, keys };
  return keys;
}

/** The target's base URL; without one (collecting, or outside npm test) the test that needs it is a harness error. */
function targetUrl(): string {
  const ref = runContext().target;
  if (!ref) throw new Error('no target in the run context: suites/ run through the chatgate runner (npm test), which writes it (here the tests are only collected)');
  keysOf();
  return ref.url;
}

const ctx = (): RunContext => runContext();

/** The run's configuration, as the runner validated it: each field read from the run context when used. */
export const config: Readonly<Pick<Config, 'targetUrl' | 'apiKey' | 'limitedApiKey' | 'rateLimitApiKey' | 'brainId' | 'rateLimitProbeMax' | 'models' | 'timeoutMs' | 'strict' | 'extraHeaders' | 'fuzz'>> = {
  get targetUrl() { return targetUrl(); },
  get apiKey() { return keysOf().apiKey; },
  get limitedApiKey() { return keysOf().limitedApiKey; },
  get rateLimitApiKey() { return keysOf().rateLimitApiKey; },
  get brainId() { return ctx().brainId; },
  get rateLimitProbeMax() { return ctx().rateLimitProbeMax; },
  get models() { return ctx().models; },
  get timeoutMs() { return ctx().timeoutMs; },
  get strict() { return ctx().mode.strict; },
  get extraHeaders() { return extraHeaderList(); },
  get fuzz() { return ctx().fuzz; },
};

/** The exchanges of the test whose code is running, for its report (its title is exchangeContext's, harness/exchange-log.ts). */
export const currentTest = new AsyncLocalStorage<{ exchanges: Exchange[] }>();

/** Marks the fuzz phase's requests in the exchange log (its own tests judge ERR-1/ERR-2 on them, shrunk). */
export const fuzzTraffic = new AsyncLocalStorage<true>();

let client: HttpClient | undefined;
// Every exchange of the raw client goes to the exchange log here, once: each 429 it
// waited out and the answer it returned (the per-response rules judge them all).
function rawClient(): HttpClient {
  return client ??= new HttpClient({
    baseUrl: targetUrl(),
    timeoutMs: ctx().timeoutMs,
    onExchange: (ex) => logExchange(ex, exchangeContext.getStore(), fuzzTraffic.getStore() ? 'fuzz' : undefined),
    // One pace for the whole run, all workers (runner/governor-server.ts).
    gate: runGovernor(),
  });
}

/** The raw client, made on first use (a stand-in that forwards to it, so importing needs no target). */
export const http: HttpClient = new Proxy({} as HttpClient, {
  get(_, name) {
    const c = rawClient();
    const v = Reflect.get(c, name, c);
    return typeof v === 'function' ? v.bind(c) : v;
  },
});

export const keys = {
  get main(): AuthSpec { return keysOf().auth.main; },
  get limited(): AuthSpec | undefined { return keysOf().auth.limited; },
  get rateLimit(): AuthSpec { return keysOf().auth.rateLimit; },
  /** Well-formed, never issued: same shape as a real key so only its validity differs. */
  unknown: { key: `sk-chatgate-unknown-${'0'.repeat(32)}` } as AuthSpec,
};

// Read when this module loads: suite files enumerate them while vitest collects (never throws).
export const brainId = ctx().brainId;
export const models = ctx().models;
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
  let p: Promise<T> | undefined;
  return () => (runContext().mode.mutation ? make() : (p ??= make()));
}
