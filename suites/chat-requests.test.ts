// CHAT: how POST /chat/completions treats requests (spec: Endpoints > POST /chat/completions).
import { describe } from 'vitest';
import { clause, idPart } from '../harness/clause-test.ts';
import { chat, chatBody, HELLO, http, keys, models, send, unlessStreamsFail } from '../harness/target.ts';
import { NEAR_LIMIT_KIB, nearLimitBody, NON_ASCII, OVERSIZE_MIB, oversizeBody } from '../harness/varied-requests.ts';

/** Bodies CHAT-2..CHAT-5 refuse: [clause, what, body, the id's last part]. */
const REFUSED: Array<['CHAT-2' | 'CHAT-3' | 'CHAT-4' | 'CHAT-5', string, Record<string, unknown>, string]> = [
  ['CHAT-2', 'a request without model', { messages: HELLO }, 'no-model'],
  ['CHAT-2', 'model given as a number', { model: 42, messages: HELLO }, 'model-number'],
  ['CHAT-3', 'a request without messages', { model: models[0] }, 'no-messages'],
  ['CHAT-3', 'messages given as an object', { model: models[0], messages: { role: 'user', content: 'hi' } }, 'messages-object'],
  ['CHAT-3', 'messages given as a string', { model: models[0], messages: 'hi' }, 'messages-string'],
  ['CHAT-4', 'a message without role', { model: models[0], messages: [{ content: 'hi' }] }, 'message-no-role'],
  ['CHAT-4', 'message content given as a number', { model: models[0], messages: [{ role: 'user', content: 42 }] }, 'content-number'],
  ['CHAT-4', 'message content given as an object without parts', { model: models[0], messages: [{ role: 'user', content: { text: 'hi' } }] }, 'content-object'],
  ['CHAT-5', 'stream given as a string', { model: models[0], messages: HELLO, stream: 'yes' }, 'stream-string'],
];

/** Almost-JSON forms: [id part, what, the ordinary body's JSON text made into it]. */
const ALMOST_JSON: Array<[string, string, (json: string) => string]> = [
  ['nan', 'a NaN literal', (j) => `${j.slice(0, -1)},"chatgate_probe":NaN}`],
  ['infinity', 'an Infinity literal', (j) => `${j.slice(0, -1)},"chatgate_probe":Infinity}`],
  ['single-quotes', 'single-quoted strings', (j) => j.replace(/"/g, "'")],
  ['trailing-comma-object', 'a trailing comma in an object', (j) => `${j.slice(0, -1)},}`],
  ['trailing-comma-array', 'a trailing comma in an array', (j) => j.replace(/}\]/, '},]')],
  ['line-comment', 'a // comment', (j) => `{// a comment\n${j.slice(1)}`],
  ['block-comment', 'a /* */ comment', (j) => `/* a comment */${j}`],
];

/** Required fields in another letter case, alone (a case-insensitive matcher takes every spelling: one each): [clause, what, body, the id's last part]. */
const CASE_VARIANTS: Array<['CHAT-2' | 'CHAT-3' | 'CHAT-4', string, Record<string, unknown>, string]> = [
  ['CHAT-2', 'model sent only as "Model"', { Model: models[0], messages: HELLO }, 'model-capitalised'],
  ['CHAT-3', 'messages sent only as "MESSAGES"', { model: models[0], MESSAGES: HELLO }, 'messages-upper'],
  ['CHAT-4', 'a message whose role is sent only as "Role"', { model: models[0], messages: [{ Role: 'user', content: 'hi' }] }, 'role-capitalised'],
];

// The streaming path: servers route stream: true through other code (another handler,
// another validator), so each request here that can carry stream: true declares a
// streaming twin (clause()'s `stream: 'twin'`); the others say why they have none.
const NO_STREAM_CHAT_1 = { none: "CHAT-1 is about stream absent or false (a stream is SVC-5's and EV-*'s)" };

describe('CHAT: valid requests', () => {
  clause('chat-requests/no-stream', 'CHAT-1', 'model and messages without stream get 200 and a JSON reply', async (t) => {
    const ex = await chat();
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
    t.json(ex);
  }, { stream: NO_STREAM_CHAT_1 });

  clause('chat-requests/stream-false', 'CHAT-1', 'stream: false gets 200 and a JSON reply, not an event stream', async (t) => {
    const ex = await chat(chatBody({ stream: false }));
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
    t.json(ex);
  }, { stream: NO_STREAM_CHAT_1 });

  clause('chat-requests/multi-turn', 'CHAT-9', 'a multi-turn conversation with system, user and assistant messages is accepted', async (t) => {
    const ex = await chat(chatBody({
      ...(t.stream ? { stream: true } : {}),
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Name a colour.' },
        { role: 'assistant', content: 'Blue.' },
        { role: 'user', content: 'Another one.' },
      ],
    }));
    if (t.stream) await unlessStreamsFail(t, ex);
    t.status(ex, 200);
  }, { stream: 'twin' });
});

describe('CHAT: invalid requests are refused with 400', () => {
  for (const [id, what, json, kind] of REFUSED) {
    clause(`chat-requests/invalid/${kind}`, id, `${what} gets 400 with an error body`, async (t) => {
      const ex = await send({ method: 'POST', path: '/chat/completions', auth: keys.main, ...(t.stream ? { json: { ...json, stream: true }, stream: true } : { json }) });
      t.errorBody(ex, 400);
    }, { stream: id === 'CHAT-5' ? { none: 'stream itself is the field under test' } : 'twin' });
  }

  clause('chat-requests/not-json', 'CHAT-6', 'a body that is not JSON gets 400 with an error body', async (t) => {
    const ex = await send({ method: 'POST', path: '/chat/completions', auth: keys.main, body: `{"model": "${models[0]}", "messages": [` });
    t.errorBody(ex, 400);
  }, { stream: { none: 'the stream flag would be in a body the server cannot parse' } });

  // Near misses of a valid body, refused as the plainly invalid form is. Almost-JSON: what
  // lenient parsers (Python's json.loads, JSON5, some Go and Java configurations) accept
  // and RFC 8259 forbids; the odd part sits where a server reads nothing (an unknown field),
  // so only the parser decides. Duplicate member names are legal JSON: no probe here.
  for (const [form, what, make] of ALMOST_JSON) {
    clause(`chat-requests/almost-json/${form}`, 'CHAT-6', `a body with ${what} (not JSON by RFC 8259) gets 400 with an error body`, async (t) => {
      const body = make(JSON.stringify({ model: models[0], messages: HELLO, ...(t.stream ? { stream: true } : {}) }));
      const ex = await send({ method: 'POST', path: '/chat/completions', auth: keys.main, body, ...(t.stream ? { stream: true } : {}) });
      t.errorBody(ex, 400);
    }, { stream: 'twin' });
  }

  // Keys in another letter case, alone (the real key absent): the field is missing, and its clause says so.
  for (const [id, what, json, slug] of CASE_VARIANTS) {
    clause(`chat-requests/key-case/${slug}`, id, `${what} gets 400 with an error body, as the missing field does`, async (t) => {
      const ex = await send({ method: 'POST', path: '/chat/completions', auth: keys.main, ...(t.stream ? { json: { ...json, stream: true }, stream: true } : { json }) });
      t.errorBody(ex, 400);
    }, { stream: 'twin' });
  }

  clause('chat-requests/unknown-model', 'CHAT-7', 'an unknown model gets 400 or 404 with an error body', async (t) => {
    const ex = await chat(chatBody({ model: 'chatgate-no-such-model-7f3a', ...(t.stream ? { stream: true } : {}) }));
    t.errorBody(ex, 400, 404);
  }, { stream: 'twin' });
});

describe('CHAT: usual OpenAI parameters and unknown fields never cause a 5xx', () => {
  const extras: Array<[string, Record<string, unknown>]> = [
    ['temperature', { temperature: 0.2 }],
    ['max_tokens', { max_tokens: 16 }],
    ['top_p', { top_p: 0.9 }],
    ['user', { user: 'chatgate-conformance' }],
    ['stream_options with stream', { stream: true, stream_options: { include_usage: true } }],
    ['an unknown extra field', { chatgate_unknown_field: { nested: [1, 2, 3] } }],
  ];
  for (const [what, extra] of extras) {
    clause(`chat-requests/extra-param/${idPart(Object.keys(extra).at(-1)!)}`, 'CHAT-8', `${what} is honoured, ignored or refused with 400`, async (t) => {
      const ex = await chat(chatBody({ ...extra, ...(t.stream ? { stream: true } : {}) }));
      t.responded(ex);
      // CHAT-8 judges the status; the 400's body is ERR-1's to judge.
      if (ex.status === 400) { t.status(ex, 200, 400); t.note(`${what} refused with 400`); return; }
      if (extra.stream || t.stream) await unlessStreamsFail(t, ex);
      t.status(ex, 200, 400);
      if (!ex.error) return;
      // In the twin a stream that stalls or breaks after a 200 is EV-*'s to judge.
      if (t.stream) t.note(`the stream after the 200 was cut short (${ex.error.message}): EV-10 judges streams`);
      else t.fail('a complete answer', ex.error.message, ex);
    }, { stream: extra.stream ? { none: 'stream_options needs stream: true: it streams already' } : 'twin' });
  }
});

// Requests as varied as real clients send, plain and streamed: text beyond ASCII, a
// conversation near the size real ones reach, one far past any sensible limit, and a
// body sent with chunked transfer coding (no Content-Length), which RFC 9112 §6.1
// requires a server to accept and clients that stream their bodies use. Every 2xx
// among them is also judged whole by the success-body rule (lib/spec/rules/success-body.ts).
describe('CHAT: requests as varied as real clients send', () => {
  clause('chat-requests/non-ascii', 'CHAT-1', 'a request in non-ASCII text (multi-byte UTF-8, emoji, CJK, right-to-left, combining marks) gets 200 and a whole JSON reply', async (t) => {
    const ex = await chat(chatBody({ messages: NON_ASCII }));
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
    // A Content-Length that counts characters instead of bytes cuts every non-ASCII reply short.
    const body = t.json(ex) as { choices?: unknown } | null;
    t.check(body !== null && typeof body === 'object' && Array.isArray(body.choices), 'a whole chat completion (a choices array)', () => JSON.stringify(body)?.slice(0, 160) ?? '', ex);
  }, { stream: { none: 'its streaming form is events/non-ascii (EV-4)' } });

  clause('chat-requests/chunked-body', 'CHAT-1', 'a request body sent with chunked transfer coding (no Content-Length) gets 200 and a JSON reply', async (t) => {
    const ex = await chat(chatBody(), keys.main, { chunked: true });
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
    t.json(ex);
  }, { stream: { none: 'its streaming form judges SVC-5: chat-requests/chunked-body-sse' } });

  // Not a twin: a chunked streaming request judges the stream being served (SVC-5).
  clause('chat-requests/chunked-body-sse', 'SVC-5', 'a stream: true request body sent with chunked transfer coding (no Content-Length) is answered with an event stream', async (t) => {
    const ex = await chat(chatBody({ stream: true }), keys.main, { chunked: true });
    await unlessStreamsFail(t, ex);
    t.status(ex, 200);
    t.mediaType(ex, 'text/event-stream');
    t.check((ex.stream?.events.length ?? 0) > 0, 'at least one server-sent event', 'no event', ex);
  }, { stream: { none: 'it streams already' } });

  // Either answer is legal for a body of any size: a served reply (the success-body rule
  // judges it whole) or a refusal with an error body (413 is RFC 9110's); never a dropped
  // connection, never an HTML page.
  const sized: Array<[string, string, () => Record<string, unknown>]> = [
    ['near-limit', `a conversation of ${NEAR_LIMIT_KIB} KiB (as long ones reach)`, nearLimitBody],
    ['oversize', `a request body of ${OVERSIZE_MIB} MiB (past the 1 MiB limits common in proxies and frameworks)`, oversizeBody],
  ];
  for (const [slug, what, make] of sized) {
    clause(`chat-requests/size/${slug}`, 'ERR-1', `${what} gets a served reply or an error body, not a dropped connection or an HTML page`, async (t) => {
      const stream = t.stream;
      // A connection of its own: the pool's next request must not meet the close a refusal may announce.
      const own = http.newDispatcher();
      let ex;
      try { ex = await chat({ ...make(), ...(stream ? { stream } : {}) }, keys.main, { connection: own }); } finally { await own.destroy().catch(() => {}); }
      // Our deadline ran out while the body was sent or read: slow, not dropped (no verdict either way).
      if (ex.error && /^timeout-/.test(ex.error.kind)) t.inconclusive(`no whole answer within TIMEOUT_MS to ${what}: ${ex.error.message}`);
      t.responded(ex);
      if (ex.status! >= 400) { t.errorBody(ex); t.note(`refused with HTTP ${ex.status}`); return; }
      t.check(ex.status! >= 200 && ex.status! < 300, 'a served reply (2xx) or an error body', `HTTP ${ex.status}`, ex);
      t.note(`served (HTTP ${ex.status}); the success-body rule judges the reply whole`);
    }, { stream: 'twin' });
  }
});
