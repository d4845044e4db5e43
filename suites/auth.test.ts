// AUTH: keys and scopes (spec: Authentication).
import { describe } from 'vitest';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import type { AuthSpec, RequestSpec } from '../lib/http-client.ts';
import { nearMissKeys } from '../lib/redact.ts';
import { brainChat, brainId, chat, chatBody, config, keys, send, UNKNOWN_BRAIN, HELLO } from '../harness/target.ts';

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
  // Near misses find prefix and case-insensitive comparisons (lib/redact.ts masks them like the key).
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
});
