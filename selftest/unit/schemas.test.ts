// The schemas accept what the spec allows (including OpenAI's extra fields) and map
// each broken constraint to its clause with a JSON pointer.
import { describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, loadSchemas, validate } from '../../lib/spec/schema-validator.ts';

const completion = () => ({
  id: 'chatcmpl-abc', object: 'chat.completion', created: 1, model: 'svc', system_fingerprint: 'fp',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } },
});

function clausesOf(name: Parameters<typeof validate>[0], doc: unknown) {
  return validate(name, doc).errors.map((e) => `${e.clause} ${e.pointer}`);
}

describe('schemas', () => {
  it('are JSON Schema 2020-12 with one file per resource', () => {
    const docs = loadSchemas();
    expect(Object.keys(docs).sort()).toEqual([...SCHEMA_NAMES].sort());
    for (const d of Object.values(docs)) expect(d.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });
  it('accept a full OpenAI-style completion with extra fields', () => {
    expect(validate('chat-completion', completion())).toEqual({ valid: true, errors: [] });
  });
  it('map each broken field of a completion to its clause', () => {
    const cases: Array<[(d: any) => void, string]> = [
      [(d) => { d.id = 'cmpl-1'; }, 'RES-CC-1 /id'],
      [(d) => { d.id = 'chatcmpl-'; }, 'RES-CC-1 /id'],
      [(d) => { d.object = 'text_completion'; }, 'RES-CC-2 /object'],
      [(d) => { delete d.model; }, 'RES-CC-3 /model'],
      [(d) => { d.model = ''; }, 'RES-CC-3 /model'],
      [(d) => { d.choices = []; }, 'RES-CC-4 /choices'],
      [(d) => { delete d.usage; }, 'RES-CC-5 /usage'],
      [(d) => { d.choices[0].index = '0'; }, 'RES-CH-1 /choices/0/index'],
      [(d) => { d.choices[0].message.role = 'user'; }, 'RES-CH-2 /choices/0/message/role'],
      [(d) => { delete d.choices[0].message; }, 'RES-CH-2 /choices/0/message'],
      [(d) => { d.choices[0].finish_reason = null; }, 'RES-CH-3 /choices/0/finish_reason'],
      [(d) => { d.choices[0].message.content = [{ type: 'text', text: 'x' }]; }, 'RES-MSG-1 /choices/0/message/content'],
      [(d) => { d.usage.prompt_tokens = '3'; }, 'RES-US-1 /usage/prompt_tokens'],
      [(d) => { d.usage.completion_tokens = -1; }, 'RES-US-1 /usage/completion_tokens'],
      [(d) => { d.usage.total_tokens = 4.5; }, 'RES-US-1 /usage/total_tokens'],
    ];
    for (const [breakIt, expected] of cases) {
      const d = completion();
      breakIt(d);
      expect(clausesOf('chat-completion', d)).toContain(expected);
    }
  });
  it('judge chunks (EV-3), including the usage chunk and null content', () => {
    const chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'svc', choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] };
    expect(validate('chat-completion-chunk', chunk).valid).toBe(true);
    expect(validate('chat-completion-chunk', { ...chunk, choices: [], usage: { prompt_tokens: 1 } }).valid).toBe(true);
    expect(clausesOf('chat-completion-chunk', { ...chunk, object: 'chat.completion' })).toEqual(['EV-3 /object']);
    expect(clausesOf('chat-completion-chunk', { ...chunk, choices: [{ index: 0, delta: 'hi' }] })).toEqual(['EV-3 /choices/0/delta']);
  });
  it('judge error bodies (ERR-1) and model lists (MOD-1)', () => {
    expect(validate('error', { error: { message: 'm', type: 't', code: 'c', param: null } }).valid).toBe(true);
    expect(clausesOf('error', { error: { message: 'm', type: 't', code: null } })).toEqual(['ERR-1 /error/code']);
    expect(clausesOf('error', { message: 'flat' })).toEqual(['ERR-1 /error']);
    expect(validate('model-list', { object: 'list', data: [{ id: 'svc', object: 'model' }], has_more: false }).valid).toBe(true);
    expect(clausesOf('model-list', [{ id: 'svc' }])).toEqual(['MOD-1 ']);
    expect(clausesOf('model-list', { object: 'list', data: [{ name: 'svc' }] })).toEqual(['MOD-1 /data/0/id']);
  });
  it('validate requests the way the reference server refuses them', () => {
    expect(validate('chat-request', { model: 'svc', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }], temperature: 1, extra: true }).valid).toBe(true);
    expect(clausesOf('chat-request', { messages: [{ role: 'user', content: 'x' }] })).toEqual(['CHAT-2 /model']);
    expect(clausesOf('chat-request', { model: 'svc', messages: 'x' })).toEqual(['CHAT-3 /messages']);
    expect(clausesOf('chat-request', { model: 'svc', messages: [{ content: 5 }] })).toEqual(['CHAT-4 /messages/0/role', 'CHAT-4 /messages/0/content']);
    expect(clausesOf('chat-request', { model: 'svc', messages: [{ role: 'user', content: 'x' }], stream: 'yes' })).toEqual(['CHAT-5 /stream']);
  });
});
