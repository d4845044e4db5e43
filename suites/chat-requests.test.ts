// CHAT: how POST /chat/completions treats requests (spec: Endpoints > POST /chat/completions).
import { describe } from 'vitest';
import { clause, idPart } from '../harness/clause-test.ts';
import { chat, chatBody, HELLO, keys, models, send, unlessStreamsFail } from '../harness/target.ts';

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
