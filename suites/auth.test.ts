// AUTH: keys and scopes (spec: Authentication).
import { describe } from 'vitest';
import { clause, idPart, type ClauseContext } from '../harness/clause-test.ts';
import type { AuthSpec, Exchange, RequestSpec } from '../lib/http/http-client.ts';
import { nearMissKeys } from '../lib/run/redact.ts';
import { errorBodyProblems, errorObjectOf } from '../lib/spec/error-body.ts';
import { brainChat, brainId, chat, chatBody, config, keys, listModels, models, send, shared, unlessStreamsFail, UNKNOWN_BRAIN, HELLO } from '../harness/target.ts';

/** The three endpoints of the spec; the brain route works with any uuid because auth comes first. */
const endpoints = (auth: AuthSpec): Array<[string, RequestSpec]> => [
  ['GET /models', { method: 'GET', path: '/models', auth }],
  ['POST /chat/completions', { method: 'POST', path: '/chat/completions', auth, json: chatBody() }],
  ['POST /brains/{id}/chat', { method: 'POST', path: `/brains/${brainId ?? UNKNOWN_BRAIN}/chat`, auth, json: { messages: HELLO } }],
];
/** The endpoint's part of a test id. */
const EP: Record<string, string> = { 'GET /models': 'models', 'POST /chat/completions': 'chat', 'POST /brains/{id}/chat': 'brain-route' };

// The streaming path. Servers route stream: true through other code (another handler,
// auth middleware, validator), so every request-level probe that can carry stream: true
// declares a streaming twin (clause()'s `stream: 'twin'`), sent on both routes that take
// a chat body: the spec does not say whether the brain route streams (BRAIN-6 reports
// it), but a refusal comes before any reply, streamed or not.
const NO_BODY = { none: 'GET /models has no body to carry stream: true' };

/** The same request with stream: true (in the body, and read as a stream). */
function streamed(spec: RequestSpec): RequestSpec {
  return { ...spec, json: { ...(spec.json as Record<string, unknown>), stream: true }, stream: true };
}

/** One exchange per streaming probe, judged by its clause and again, for its form, by AUTH-5 below. */
const refusedStreams = new Map<string, Map<string, () => Promise<Exchange>>>();
function streamProbe(route: string, what: string, spec: RequestSpec): () => Promise<Exchange> {
  const byRoute = refusedStreams.get(route) ?? new Map<string, () => Promise<Exchange>>();
  refusedStreams.set(route, byRoute);
  const probe = shared(() => send(spec));
  byRoute.set(what, probe);
  return probe;
}

/** 401 with an error body; a 401 served as an event stream is AUTH-5's breach, judged there. */
function refused401(t: ClauseContext, ex: Exchange): void {
  t.status(ex, 401);
  if (ex.mediaType === 'text/event-stream') { t.note('the 401 came as an event stream: AUTH-5 judges its form'); return; }
  t.errorBody(ex, 401);
}

/** A refused key on one endpoint, with its streaming twin on the routes that take a chat body. */
function refusal(testId: string, clauseId: 'AUTH-1' | 'AUTH-2' | 'AUTH-3', title: string, what: string, name: string, spec: RequestSpec): void {
  const probe = name === 'GET /models' ? undefined : streamProbe(name, what, streamed(spec));
  clause(testId, clauseId, title, async (t) => {
    if (t.stream) refused401(t, await probe!());
    else t.errorBody(await send(spec), 401);
  }, { stream: probe ? 'twin' : NO_BODY });
}

describe('AUTH: missing, unknown and malformed keys', () => {
  for (const [name, spec] of endpoints('none')) {
    refusal(`auth/missing-key/${EP[name]}`, 'AUTH-1', `no Authorization header on ${name} gets 401 with an error body`, 'no Authorization header', name, spec);
  }
  const key = config.apiKey!;
  // The spec takes the key from one place only, "Authorization: Bearer <key>". A valid key
  // offered anywhere else (other headers, the query string) is no key at all: AUTH-1.
  const elsewhere: Array<[string, Partial<RequestSpec>, string]> = [
    ['in an x-api-key header', { headers: { 'x-api-key': key } }, 'x-api-key'],
    ['in an api-key header', { headers: { 'api-key': key } }, 'api-key'],
    ['as query parameter api_key', { query: { api_key: key } }, 'query-api_key'],
    ['as query parameter key', { query: { key } }, 'query-key'],
  ];
  for (const [what, extra, where] of elsewhere) {
    for (const [name, spec] of endpoints('none')) {
      refusal(`auth/key-elsewhere/${where}/${EP[name]}`, 'AUTH-1', `the valid key only ${what} (no Authorization) on ${name} gets 401 with an error body`, `the valid key only ${what} (no Authorization)`, name, { ...spec, ...extra });
    }
  }
  for (const [name, spec] of endpoints(keys.unknown)) {
    refusal(`auth/unknown-key/${EP[name]}`, 'AUTH-2', `an unknown key on ${name} gets 401 with an error body`, 'an unknown key', name, spec);
  }
  // Near misses find prefix and case-insensitive comparisons (lib/run/redact.ts masks them like the key).
  for (const { what, value, id: near } of nearMissKeys(key)) {
    for (const [name, spec] of endpoints({ key: value })) {
      refusal(`auth/near-miss-key/${near}/${EP[name]}`, 'AUTH-2', `${what} on ${name} gets 401 with an error body`, what, name, spec);
    }
  }
  // Another scheme carrying the valid key is a malformed header (AUTH-3). The scheme's case
  // is free (RFC 9110 §11.1): "bearer <key>" is a legal thing to accept, so it is not here.
  const malformed: Array<[string, string, string]> = [
    ['the valid key under scheme Basic', `Basic ${Buffer.from(`${key}:`).toString('base64')}`, 'basic'],
    ['the valid key under scheme Token', `Token ${key}`, 'token'],
    ['the valid key under scheme Key', `Key ${key}`, 'key'],
    ['the valid key under scheme Api-Key', `Api-Key ${key}`, 'api-key'],
    ['the valid key under scheme XBearer (a scheme that ends in "Bearer")', `XBearer ${key}`, 'xbearer'],
    ['Bearer with an empty key', 'Bearer ', 'empty-bearer'],
    ['the valid key with no scheme', key, 'no-scheme'],
  ];
  for (const [what, header, form] of malformed) {
    for (const [name, spec] of endpoints({ header })) {
      refusal(`auth/malformed/${form}/${EP[name]}`, 'AUTH-3', `${what} on ${name} gets 401 with an error body`, what, name, spec);
    }
  }
});

describe('AUTH: authentication comes first', () => {
  const cases: Array<[string, RequestSpec, string]> = [
    ['no key and a body that is not JSON', { method: 'POST', path: '/chat/completions', auth: 'none', body: '{"model": ' }, 'no-key-not-json'],
    ['an unknown key and an unknown model', { method: 'POST', path: '/chat/completions', auth: keys.unknown, json: chatBody({ model: 'chatgate-no-such-model-7f3a' }) }, 'unknown-key-unknown-model'],
    ['no key and an unknown brain as model', { method: 'POST', path: '/chat/completions', auth: 'none', json: chatBody({ model: `brain:${UNKNOWN_BRAIN}` }) }, 'no-key-unknown-brain'],
    ['an unknown key on an unknown brain route', { method: 'POST', path: `/brains/${UNKNOWN_BRAIN}/chat`, auth: keys.unknown, json: { messages: HELLO } }, 'unknown-key-unknown-brain-route'],
  ];
  for (const [what, spec, kind] of cases) {
    // AUTH-4 is about order: the status. The body's shape is ERR-1's (and AUTH-1/2's) to judge.
    clause(`auth/401-first/${kind}`, 'AUTH-4', `${what} gets 401`, async (t) => {
      t.status(await send(t.stream ? streamed(spec) : spec), 401);
    }, { stream: spec.body !== undefined ? { none: 'the stream flag would be in a body the server cannot parse' } : 'twin' });
  }
  for (const [what, auth] of [['no key', 'none'], ['an unknown key', keys.unknown]] as const) {
    clause(`auth/stream-401/${auth === 'none' ? 'no-key' : 'unknown-key'}`, 'AUTH-5', `a streaming request with ${what} gets a JSON 401, not an event stream`, async (t) => {
      const ex = await send({ method: 'POST', path: '/chat/completions', auth, json: chatBody({ stream: true }), stream: true });
      t.status(ex, 401);
      t.check(ex.mediaType !== 'text/event-stream', 'a JSON error, not text/event-stream', `Content-Type ${ex.headers['content-type']}`, ex);
      t.errorBody(ex, 401);
    }, { stream: { none: 'AUTH-5 is about streaming requests: it streams already' } });
  }
});

function limited(t: ClauseContext): AuthSpec {
  if (!keys.limited) t.skip('LIMITED_API_KEY is not set: give a valid key that lacks brains:invoke');
  return keys.limited!;
}
function brain(t: ClauseContext): string {
  if (!brainId) t.skip('BRAIN_ID is not set: give the uuid of a brain API_KEY may invoke');
  return brainId!;
}

describe('AUTH: the brains:invoke scope', () => {
  // The plain form sends stream: false; the twins keep the ids they had.
  // A route spelling (harness/route-spellings.ts) the server does not route may answer 404
  // (or any refusal); only a 2xx with the limited key breaks the scope there.
  const scopeHeld = (t: ClauseContext, ex: Exchange) => {
    if (!t.spelling) return t.errorBody(ex, 403);
    t.responded(ex);
    t.check(ex.status! < 200 || ex.status! >= 300, `no 2xx for a key without brains:invoke on ${new URL(ex.request.url).pathname} (403; 404 where the spelling is not routed)`, `HTTP ${ex.status}`, ex);
  };
  clause('auth/limited-key-brain-model-form/non-streaming', 'AUTH-6', 'a key without brains:invoke gets 403 on model "brain:<uuid>"', async (t) => {
    const auth = limited(t);
    const ex = await chat(chatBody({ model: `brain:${brain(t)}`, stream: t.stream }), auth, { path: t.spell('/chat/completions') });
    scopeHeld(t, ex);
  }, { stream: { twinId: 'auth/limited-key-brain-model-form/streaming' }, spellings: true });
  clause('auth/limited-key-brain-route/non-streaming', 'AUTH-6', 'a key without brains:invoke gets 403 on POST /brains/{id}/chat', async (t) => {
    const auth = limited(t);
    const id = brain(t);
    const ex = await brainChat(id, { messages: HELLO, ...(t.stream ? { stream: true } : {}) }, auth, { path: t.spell(`/brains/${encodeURIComponent(id)}/chat`) });
    scopeHeld(t, ex);
  }, { stream: { twinId: 'auth/limited-key-brain-route/streaming' }, spellings: true });

  clause('auth/limited-key-plain-model', 'AUTH-7', 'a key without brains:invoke still gets 200 for a plain service model', async (t) => {
    const ex = await chat(chatBody(t.stream ? { stream: true } : {}), limited(t), { path: t.spell('/chat/completions') });
    if (t.stream) await unlessStreamsFail(t, ex, [403]);
    // On another spelling the route may not exist (404): only a 403 says the scope gated a plain model there.
    if (t.spelling) { t.responded(ex); t.check(ex.status !== 403, `no 403 on ${new URL(ex.request.url).pathname} for a plain model`, `HTTP 403`, ex); return; }
    t.status(ex, 200);
  }, { stream: 'twin', spellings: true });

  clause('auth/brain-key-model-form', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on model "brain:<uuid>"', async (t) => {
    const ex = await chat(chatBody({ model: `brain:${brain(t)}`, ...(t.stream ? { stream: true } : {}) }));
    t.responded(ex);
    if (t.stream) await unlessStreamsFail(t, ex, [403]);
    t.check(ex.status !== 403, 'not 403', `HTTP 403`, ex);
  }, { stream: 'twin' });

  clause('auth/brain-key-route', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on POST /brains/{id}/chat', async (t) => {
    const ex = await brainChat(brain(t), t.stream ? { messages: HELLO, stream: true } : undefined);
    t.responded(ex);
    if (t.stream) await unlessStreamsFail(t, ex, [403]);
    t.check(ex.status !== 403, 'not 403', `HTTP 403`, ex);
  }, { stream: 'twin' });

  // Every endpoint the limited key may use, tried with it: the scope gates brains only.
  clause('auth/limited-key-models', 'AUTH-7', 'a key without brains:invoke still gets 200 on GET /models', async (t) => {
    const ex = await send({ method: 'GET', path: '/models', auth: limited(t) });
    t.responded(ex);
    // A model list that fails for the main key too is SVC-2's failure, not the scope's.
    if (ex.status !== 200) {
      const main = await listModels();
      if (main.status !== 200) t.inconclusive(`GET /models fails for the main key too (HTTP ${main.status ?? 'no answer'}): SVC-2 judges that, not AUTH-7`);
    }
    t.status(ex, 200);
  }, { stream: NO_BODY });
  // Every service model the limited key may use (the first is the probe above).
  for (const model of models.slice(1)) {
    clause(`auth/limited-key-plain-model/${idPart(model)}`, 'AUTH-7', `a key without brains:invoke still gets 200 for service model ${model}`, async (t) => {
      const ex = await chat(chatBody({ model, ...(t.stream ? { stream: true } : {}) }), limited(t));
      if (t.stream) await unlessStreamsFail(t, ex, [403]);
      t.status(ex, 200);
    }, { stream: 'twin' });
  }
});

describe('AUTH: missing, unknown and malformed keys on the streaming path (stream: true)', () => {
  // AUTH-5 judges the form of every streaming refusal above, on the same exchanges: the
  // ones answered 401 (a status other than 401 is the probe's own clause to judge).
  for (const name of refusedStreams.keys()) {
    clause(`auth/stream-401/all/${EP[name]}`, 'AUTH-5', `every streaming request with a missing, unknown or malformed key on ${name} that gets 401 gets it as JSON, not an event stream`, async (t) => {
      const all = await Promise.all([...refusedStreams.get(name)!].map(async ([what, probe]) => [what, await probe()] as const));
      const refused = all.filter(([, ex]) => ex.status === 401);
      if (refused.length === 0) t.inconclusive(`none of the ${all.length} streaming probes on ${name} was answered 401`);
      for (const [what, ex] of refused) {
        t.check(ex.mediaType !== 'text/event-stream', `${what}: a JSON 401, not text/event-stream`, `Content-Type ${ex.headers['content-type']}`, ex);
        // AUTH-5 asks for a JSON error body; the types of its members are ERR-1's to judge.
        const problems = errorBodyProblems(ex.headers['content-type'], ex.text ?? '', (json) => (errorObjectOf(json) ? [] : ['no "error" object']));
        t.check(problems.length === 0, `${what}: a 401 JSON error body ({"error": {...}} as application/json)`, problems.join('; '), ex);
      }
      t.note(`${refused.length} of ${all.length} streaming probes answered 401, each a JSON error body`);
    }, { requests: 3, stream: { none: 'it judges the streaming twins above' } });
  }
});
