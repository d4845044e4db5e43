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

describe('AUTH: missing, unknown and malformed keys', () => {
  for (const [name, spec] of endpoints('none')) {
    clause(`auth/missing-key/${EP[name]}`, 'AUTH-1', `no Authorization header on ${name} gets 401 with an error body`, async (t) => {
      t.errorBody(await send(spec), 401);
    });
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
      clause(`auth/key-elsewhere/${where}/${EP[name]}`, 'AUTH-1', `the valid key only ${what} (no Authorization) on ${name} gets 401 with an error body`, async (t) => {
        t.errorBody(await send({ ...spec, ...extra }), 401);
      });
    }
  }
  for (const [name, spec] of endpoints(keys.unknown)) {
    clause(`auth/unknown-key/${EP[name]}`, 'AUTH-2', `an unknown key on ${name} gets 401 with an error body`, async (t) => {
      t.errorBody(await send(spec), 401);
    });
  }
  // Near misses find prefix and case-insensitive comparisons (lib/run/redact.ts masks them like the key).
  for (const { what, value, id: near } of nearMissKeys(key)) {
    for (const [name, spec] of endpoints({ key: value })) {
      clause(`auth/near-miss-key/${near}/${EP[name]}`, 'AUTH-2', `${what} on ${name} gets 401 with an error body`, async (t) => {
        t.errorBody(await send(spec), 401);
      });
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
      clause(`auth/malformed/${form}/${EP[name]}`, 'AUTH-3', `${what} on ${name} gets 401 with an error body`, async (t) => {
        t.errorBody(await send(spec), 401);
      });
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
      t.status(await send(spec), 401);
      if (spec.body !== undefined) t.note('no streaming form: the stream flag would be in a body the server cannot parse');
    });
  }
  for (const [what, auth] of [['no key', 'none'], ['an unknown key', keys.unknown]] as const) {
    clause(`auth/stream-401/${auth === 'none' ? 'no-key' : 'unknown-key'}`, 'AUTH-5', `a streaming request with ${what} gets a JSON 401, not an event stream`, async (t) => {
      const ex = await send({ method: 'POST', path: '/chat/completions', auth, json: chatBody({ stream: true }), stream: true });
      t.status(ex, 401);
      t.check(ex.mediaType !== 'text/event-stream', 'a JSON error, not text/event-stream', `Content-Type ${ex.headers['content-type']}`, ex);
      t.errorBody(ex, 401);
    });
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
  for (const stream of [false, true]) {
    const how = stream ? 'streaming' : 'non-streaming';
    clause(`auth/limited-key-brain-model-form/${how}`, 'AUTH-6', `a key without brains:invoke gets 403 on model "brain:<uuid>" (${how})`, async (t) => {
      const auth = limited(t);
      const ex = await chat(chatBody({ model: `brain:${brain(t)}`, stream }), auth);
      t.errorBody(ex, 403);
    });
    clause(`auth/limited-key-brain-route/${how}`, 'AUTH-6', `a key without brains:invoke gets 403 on POST /brains/{id}/chat (${how})`, async (t) => {
      const auth = limited(t);
      const ex = await brainChat(brain(t), { messages: HELLO, ...(stream ? { stream } : {}) }, auth);
      t.errorBody(ex, 403);
    });
  }

  clause('auth/limited-key-plain-model', 'AUTH-7', 'a key without brains:invoke still gets 200 for a plain service model', async (t) => {
    const ex = await chat(chatBody(), limited(t));
    t.status(ex, 200);
  });

  clause('auth/brain-key-model-form', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on model "brain:<uuid>"', async (t) => {
    const ex = await chat(chatBody({ model: `brain:${brain(t)}` }));
    t.responded(ex);
    t.check(ex.status !== 403, 'not 403', `HTTP 403`, ex);
  });

  clause('auth/brain-key-route', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on POST /brains/{id}/chat', async (t) => {
    const ex = await brainChat(brain(t));
    t.responded(ex);
    t.check(ex.status !== 403, 'not 403', `HTTP 403`, ex);
  });

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
  });
  for (const model of models.slice(1)) {
    clause(`auth/limited-key-plain-model/${idPart(model)}`, 'AUTH-7', `a key without brains:invoke still gets 200 for service model ${model}`, async (t) => {
      t.status(await chat(chatBody({ model }), limited(t)), 200);
    });
  }
});

// The streaming path. Servers route stream: true through other code (another handler,
// auth middleware, validator), so every request-level probe above that can carry
// stream: true is sent that way too, on both routes that take a chat body: the spec
// does not say whether the brain route streams (BRAIN-6 reports it), but a refusal comes
// before any reply, streamed or not. Titles say "(stream: true)"; the probes above are
// the plain form. No streaming form: GET /models (no body), and AUTH-4's body that is
// not JSON (the stream flag is in the body a server cannot read).
const streamRoutes = (auth: AuthSpec): Array<[string, RequestSpec]> => [
  ['POST /chat/completions', { method: 'POST', path: '/chat/completions', auth, json: chatBody({ stream: true }), stream: true }],
  ['POST /brains/{id}/chat', { method: 'POST', path: `/brains/${brainId ?? UNKNOWN_BRAIN}/chat`, auth, json: { messages: HELLO, stream: true }, stream: true }],
];

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

describe('AUTH: missing, unknown and malformed keys on the streaming path (stream: true)', () => {
  const key = config.apiKey!;
  // [clause, what, auth, extra, the id's middle part (the plain probe's, see above)]
  const probes: Array<['AUTH-1' | 'AUTH-2' | 'AUTH-3', string, AuthSpec, Partial<RequestSpec>, string]> = [
    ['AUTH-1', 'no Authorization header', 'none', {}, 'missing-key'],
    ['AUTH-1', 'the valid key only in an x-api-key header (no Authorization)', 'none', { headers: { 'x-api-key': key } }, 'key-elsewhere/x-api-key'],
    ['AUTH-1', 'the valid key only in an api-key header (no Authorization)', 'none', { headers: { 'api-key': key } }, 'key-elsewhere/api-key'],
    ['AUTH-1', 'the valid key only as query parameter api_key (no Authorization)', 'none', { query: { api_key: key } }, 'key-elsewhere/query-api_key'],
    ['AUTH-1', 'the valid key only as query parameter key (no Authorization)', 'none', { query: { key } }, 'key-elsewhere/query-key'],
    ['AUTH-2', 'an unknown key', keys.unknown, {}, 'unknown-key'],
    ...nearMissKeys(key).map(({ what, value, id }) => ['AUTH-2', what, { key: value }, {}, `near-miss-key/${id}`] as ['AUTH-2', string, AuthSpec, Partial<RequestSpec>, string]),
    ['AUTH-3', 'the valid key under scheme Basic', { header: `Basic ${Buffer.from(`${key}:`).toString('base64')}` }, {}, 'malformed/basic'],
    ['AUTH-3', 'the valid key under scheme Token', { header: `Token ${key}` }, {}, 'malformed/token'],
    ['AUTH-3', 'the valid key under scheme Key', { header: `Key ${key}` }, {}, 'malformed/key'],
    ['AUTH-3', 'the valid key under scheme Api-Key', { header: `Api-Key ${key}` }, {}, 'malformed/api-key'],
    ['AUTH-3', 'the valid key under scheme XBearer (a scheme that ends in "Bearer")', { header: `XBearer ${key}` }, {}, 'malformed/xbearer'],
    ['AUTH-3', 'Bearer with an empty key', { header: 'Bearer ' }, {}, 'malformed/empty-bearer'],
    ['AUTH-3', 'the valid key with no scheme', { header: key }, {}, 'malformed/no-scheme'],
  ];
  for (const [clauseId, what, auth, extra, slug] of probes) {
    for (const [name, spec] of streamRoutes(auth)) {
      const probe = streamProbe(name, what, { ...spec, ...extra });
      clause(`auth/${slug}/${EP[name]}-stream`, clauseId, `${what} on ${name} (stream: true) gets 401 with an error body`, async (t) => {
        refused401(t, await probe());
      });
    }
  }
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
    }, { requests: 3 });
  }
});

describe('AUTH: authentication comes first on the streaming path (stream: true)', () => {
  const cases: Array<[string, RequestSpec, string]> = [
    ['an unknown key and an unknown model', { method: 'POST', path: '/chat/completions', auth: keys.unknown, json: chatBody({ model: 'chatgate-no-such-model-7f3a', stream: true }), stream: true }, 'unknown-key-unknown-model'],
    ['no key and an unknown brain as model', { method: 'POST', path: '/chat/completions', auth: 'none', json: chatBody({ model: `brain:${UNKNOWN_BRAIN}`, stream: true }), stream: true }, 'no-key-unknown-brain'],
    ['an unknown key on an unknown brain route', { method: 'POST', path: `/brains/${UNKNOWN_BRAIN}/chat`, auth: keys.unknown, json: { messages: HELLO, stream: true }, stream: true }, 'unknown-key-unknown-brain-route'],
  ];
  for (const [what, spec, kind] of cases) {
    clause(`auth/401-first/${kind}-stream`, 'AUTH-4', `${what} (stream: true) gets 401`, async (t) => {
      t.status(await send(spec), 401);
    });
  }
});

describe('AUTH: the brains:invoke scope on the streaming path (stream: true)', () => {
  // AUTH-6 is sent both ways above.
  clause('auth/limited-key-plain-model-stream', 'AUTH-7', 'a key without brains:invoke still gets 200 for a plain service model (stream: true)', async (t) => {
    const ex = await chat(chatBody({ stream: true }), limited(t));
    await unlessStreamsFail(t, ex, [403]);
    t.status(ex, 200);
  });

  clause('auth/brain-key-model-form-stream', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on model "brain:<uuid>" (stream: true)', async (t) => {
    const ex = await chat(chatBody({ model: `brain:${brain(t)}`, stream: true }));
    t.responded(ex);
    await unlessStreamsFail(t, ex, [403]);
    t.check(ex.status !== 403, 'not 403', 'HTTP 403', ex);
  });

  clause('auth/brain-key-route-stream', 'AUTH-8', 'a key with brains:invoke is not refused with 403 on POST /brains/{id}/chat (stream: true)', async (t) => {
    const ex = await brainChat(brain(t), { messages: HELLO, stream: true });
    t.responded(ex);
    await unlessStreamsFail(t, ex, [403]);
    t.check(ex.status !== 403, 'not 403', 'HTTP 403', ex);
  });

  // Every service model the limited key may use, streamed (the first is the probe above).
  for (const model of models.slice(1)) {
    clause(`auth/limited-key-plain-model/${idPart(model)}-stream`, 'AUTH-7', `a key without brains:invoke still gets 200 for service model ${model} (stream: true)`, async (t) => {
      const ex = await chat(chatBody({ model, stream: true }), limited(t));
      await unlessStreamsFail(t, ex, [403]);
      t.status(ex, 200);
    });
  }
});
