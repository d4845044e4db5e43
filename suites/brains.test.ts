// BRAIN: invoking a saved configuration (spec: Endpoints > POST /brains/{id}/chat, Authentication 6).
import { describe } from 'vitest';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { brainChat, brainId, chat, chatBody, MALFORMED_BRAIN, UNKNOWN_BRAIN } from '../harness/target.ts';
import { readStream } from '../lib/spec/rules/stream-reading.ts';
import { success } from '../harness/success.ts';

function needBrain(t: ClauseContext): string {
  if (!brainId) t.skip('BRAIN_ID is not set: give the uuid of a brain API_KEY may invoke');
  return brainId!;
}

/** A brain's answer is a chat completion like any other (same shape as RES-*). */
function isCompletion(t: ClauseContext, ex: Exchange): Record<string, unknown> {
  const doc = t.json(ex);
  const errors = validate('chat-completion', doc).errors;
  t.check(errors.length === 0, 'a chat completion (RES-* shape)', errors.map((e) => `${e.clause} ${e.message}`).join('; '), ex);
  return doc as Record<string, unknown>;
}

describe('BRAIN: invoking an existing brain', () => {
  clause('brains/route', 'BRAIN-1', 'POST /brains/{id}/chat with {"messages"} answers 2xx with a chat completion', async (t) => {
    const ex = await brainChat(needBrain(t));
    t.note('no streaming form: the spec does not say the brain route streams (BRAIN-6 reports whether it does)');
    success(t, ex);
    isCompletion(t, ex);
  });

  clause('brains/model-form', 'BRAIN-2', 'model "brain:<uuid>" on /chat/completions answers 200 with a chat completion', async (t) => {
    const ex = await chat(chatBody({ model: `brain:${needBrain(t)}` }));
    t.status(ex, 200);
    isCompletion(t, ex);
  });

  clause('brains/stream', 'BRAIN-5', 'stream: true with model "brain:<uuid>" streams chunks to [DONE]', async (t) => {
    const ex = await chat(chatBody({ model: `brain:${needBrain(t)}`, stream: true }));
    t.status(ex, 200);
    t.mediaType(ex, 'text/event-stream');
    const r = readStream(ex);
    t.check(!!r.content.get(0), 'content in the chunks', 'no content', ex);
    t.check(r.doneIndex !== undefined, 'a [DONE] terminator', 'none', ex);
  });

  clause('brains/reply-model', 'BRAIN-6', 'which model brain replies name; whether the brain route streams', async (t) => {
    const id = needBrain(t);
    const [form, route, streamed] = await Promise.all([
      chat(chatBody({ model: `brain:${id}` })),
      brainChat(id),
      brainChat(id, { messages: chatBody().messages, stream: true }),
    ]);
    t.observe(`model form replies with model ${JSON.stringify((form.json as any)?.model)}`);
    t.observe(`brain route replies with model ${JSON.stringify((route.json as any)?.model)}`);
    t.observe(`brain route with stream: true answered HTTP ${streamed.status ?? '-'} ${streamed.headers['content-type'] ?? ''}`.trim());
  }, { requests: 3 });
});

describe('BRAIN: refusing brains that do not exist', () => {
  for (const [id, what, value, kind] of [['BRAIN-3', 'an unknown brain uuid', UNKNOWN_BRAIN, 'unknown-brain'], ['BRAIN-4', 'a brain id that is not a uuid', MALFORMED_BRAIN, 'malformed-brain-id']] as const) {
    clause(`brains/${kind}/route`, id, `${what} on POST /brains/{id}/chat gets 400 or 404 with an error body`, async (t) => {
      t.errorBody(await brainChat(value), 400, 404);
    });
    clause(`brains/${kind}/model-form`, id, `${what} as model "brain:<id>" gets 400 or 404 with an error body`, async (t) => {
      t.errorBody(await chat(chatBody({ model: `brain:${value}` })), 400, 404);
    });
  }
});

// The streaming path: the refusals above again with stream: true, on both routes (a
// refusal comes before any reply, so it does not matter whether the brain route streams).
// No streaming form of BRAIN-1 (the spec does not say the brain route streams: BRAIN-6
// reports it); BRAIN-2's is BRAIN-5.
describe('BRAIN: refusing brains that do not exist on the streaming path (stream: true)', () => {
  for (const [id, what, value, kind] of [['BRAIN-3', 'an unknown brain uuid', UNKNOWN_BRAIN, 'unknown-brain'], ['BRAIN-4', 'a brain id that is not a uuid', MALFORMED_BRAIN, 'malformed-brain-id']] as const) {
    clause(`brains/${kind}/route-stream`, id, `${what} on POST /brains/{id}/chat (stream: true) gets 400 or 404 with an error body`, async (t) => {
      t.errorBody(await brainChat(value, { messages: chatBody().messages, stream: true }), 400, 404);
    });
    clause(`brains/${kind}/model-form-stream`, id, `${what} as model "brain:<id>" (stream: true) gets 400 or 404 with an error body`, async (t) => {
      t.errorBody(await chat(chatBody({ model: `brain:${value}`, stream: true })), 400, 404);
    });
  }
});
