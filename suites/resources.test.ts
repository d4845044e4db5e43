// RES: the resources a chat completion is made of (spec: "Resources and their fields").
// Each test judges one clause of the same completion; schema constraints name their
// clause (schemas/*.schema.json, x-clause), so only that clause's violations fail here.
import { describe } from 'vitest';
import { clause, idPart } from '../harness/clause-test.ts';
import { chat, chatBody, listModels, models, shared } from '../harness/target.ts';

const completion = shared(() => chat());

async function body(t: Parameters<Parameters<typeof clause>[2]>[0]) {
  const ex = await completion();
  t.responded(ex);
  // No completion, nothing to judge: SVC-1 fails on the status, RES-* do not fail with it.
  if (ex.status !== 200) t.inconclusive(`no completion to judge: HTTP ${ex.status} (see SVC-1)`);
  const doc = t.json(ex) as Record<string, any>;
  t.check(doc !== null && typeof doc === 'object' && !Array.isArray(doc), 'a JSON object', JSON.stringify(doc)?.slice(0, 80) ?? 'nothing', ex);
  return { ex, doc };
}

/** The usage clauses need a usage object to judge; none is RES-CC-5's failure. */
async function withUsage(t: Parameters<Parameters<typeof clause>[2]>[0]) {
  const r = await body(t);
  const u = r.doc.usage;
  if (u === null || typeof u !== 'object' || Array.isArray(u)) t.inconclusive(`the completion has no usage object to judge (usage ${JSON.stringify(u) ?? 'absent'}; see RES-CC-5)`);
  return r;
}

/** The choice-level clauses need a choice to judge; an empty list is RES-CC-4's failure. */
async function withChoice(t: Parameters<Parameters<typeof clause>[2]>[0]) {
  const r = await body(t);
  if (!Array.isArray(r.doc.choices) || r.doc.choices.length === 0) t.inconclusive('the completion has no choice to judge (see RES-CC-4)');
  return r;
}

describe('RES: chat completion', () => {
  clause('resources/completion-id', 'RES-CC-1', 'id is "chatcmpl-" followed by a suffix', async (t) => {
    const { ex, doc } = await body(t);
    t.schema('chat-completion', doc, ex);
  });
  clause('resources/completion-object', 'RES-CC-2', 'object is "chat.completion"', async (t) => {
    const { ex, doc } = await body(t);
    t.schema('chat-completion', doc, ex);
  });
  clause('resources/completion-model', 'RES-CC-3', 'model is a non-empty string', async (t) => {
    const { ex, doc } = await body(t);
    t.schema('chat-completion', doc, ex);
    if (doc.model !== chatBody().model) t.note(`model "${doc.model}" answered a request for "${chatBody().model}" (an alias may resolve)`);
  });
  clause('resources/choices', 'RES-CC-4', 'choices is an array with at least one choice', async (t) => {
    const { ex, doc } = await body(t);
    t.schema('chat-completion', doc, ex);
  });
  clause('resources/usage-object', 'RES-CC-5', 'usage is an object', async (t) => {
    const { ex, doc } = await body(t);
    t.schema('chat-completion', doc, ex);
  });
});

describe('RES: choice and message', () => {
  clause('resources/choice-index', 'RES-CH-1', 'choice indices are integers from 0 in array order', async (t) => {
    const { ex, doc } = await withChoice(t);
    t.schema('chat-completion', doc, ex);
    (Array.isArray(doc.choices) ? doc.choices : []).forEach((c: any, i: number) =>
      t.check(c?.index === i, `/choices/${i}/index to be ${i}`, JSON.stringify(c?.index), ex));
  });
  clause('resources/choice-index/n-2', 'RES-CH-1', 'with n: 2, choice indices are 0, 1 in array order', async (t) => {
    // n is not in the spec: a server may honour it, ignore it (one choice) or refuse it with 400 (CHAT-8).
    const ex = await chat(chatBody({ n: 2 }));
    t.responded(ex);
    if (ex.status === 400) t.inconclusive('n: 2 was refused with 400 (legal, CHAT-8): no second choice to judge');
    if (ex.status !== 200) t.inconclusive(`no completion to judge: HTTP ${ex.status} (see SVC-1, CHAT-8)`);
    const doc = t.json(ex) as any;
    if (!Array.isArray(doc?.choices) || doc.choices.length === 0) t.inconclusive('the completion has no choice to judge (see RES-CC-4)');
    t.observe(`n: 2 gave ${doc.choices.length} choice${doc.choices.length === 1 ? '' : 's'}`);
    doc.choices.forEach((c: any, i: number) =>
      t.check(c?.index === i, `/choices/${i}/index to be ${i}`, JSON.stringify(c?.index), ex));
  });
  clause('resources/choice-role', 'RES-CH-2', 'each choice holds a message with role "assistant"', async (t) => {
    const { ex, doc } = await withChoice(t);
    t.schema('chat-completion', doc, ex);
  });
  clause('resources/finish-stop', 'RES-CH-3', 'finish_reason is "stop" for a short reply that ended normally', async (t) => {
    const { ex, doc } = await withChoice(t);
    t.schema('chat-completion', doc, ex);
    const reason = doc.choices?.[0]?.finish_reason;
    t.check(reason === 'stop', '/choices/0/finish_reason "stop"', JSON.stringify(reason), ex);
  });
  clause('resources/finish-reason-values', 'RES-CH-4', 'a finish_reason other than "stop" is one of OpenAI\'s values (asked for 1 token)', async (t) => {
    const ex = await chat(chatBody({ max_tokens: 1 }));
    t.responded(ex);
    if (ex.status === 400) t.inconclusive('max_tokens was refused with 400, so no non-"stop" finish_reason could be provoked');
    t.status(ex, 200);
    const doc = t.json(ex) as any;
    const reason = doc?.choices?.[0]?.finish_reason;
    t.observe(`max_tokens 1 gave finish_reason ${JSON.stringify(reason)}`);
    t.check(['stop', 'length', 'content_filter', 'tool_calls', 'function_call'].includes(reason),
      'finish_reason one of stop, length, content_filter, tool_calls, function_call', JSON.stringify(reason), ex);
  });
  clause('resources/message-content', 'RES-MSG-1', 'the reply message content is a string', async (t) => {
    const { ex, doc } = await withChoice(t);
    t.schema('chat-completion', doc, ex);
  });
});

describe('RES: usage', () => {
  clause('resources/usage-integers', 'RES-US-1', 'prompt, completion and total tokens are non-negative integers', async (t) => {
    const { ex, doc } = await withUsage(t);
    t.schema('chat-completion', doc, ex);
  });
  clause('resources/usage-total', 'RES-US-2', 'total = prompt + completion, and a non-empty reply counts completion tokens', async (t) => {
    const { ex, doc } = await withUsage(t);
    const u = doc.usage;
    t.check(u.total_tokens === u.prompt_tokens + u.completion_tokens, 'total_tokens = prompt_tokens + completion_tokens',
      `${u.total_tokens} vs ${u.prompt_tokens} + ${u.completion_tokens}`, ex);
    const content = doc.choices?.[0]?.message?.content;
    if (typeof content === 'string' && content.length > 0) {
      t.check(u.completion_tokens > 0, 'completion_tokens > 0 for a non-empty reply', `completion_tokens ${u.completion_tokens}`, ex);
    }
  });
});

describe('RES: configured models', () => {
  const list = shared(() => listModels());
  for (const model of models) {
    clause(`resources/configured-model/${idPart(model)}`, 'RES-MOD-1', `model "${model}" is listed and answers a chat request`, async (t) => {
      const ex = await list();
      t.responded(ex);
      if (ex.status !== 200) t.inconclusive(`no model list to look in: HTTP ${ex.status} (see SVC-2)`);
      const doc = t.json(ex) as any;
      // The list's shape is MOD-1's: a bare array is read as the list, no list at all is SVC-2's failure.
      const data = Array.isArray(doc) ? doc : doc?.data;
      if (!Array.isArray(data)) t.inconclusive('no list of models to look in (see SVC-2, MOD-1)');
      const ids = data.map((m: any) => m?.id);
      t.check(ids.includes(model), `"${model}" in GET /models`, `ids ${JSON.stringify(ids).slice(0, 200)}`, ex);
      const reply = await chat(chatBody({ model }));
      t.status(reply, 200);
    }, { requests: 2 });
  }
});
