// lib/spec/rules/reply-content.ts: the reply's text on every 2xx chat answer, whatever
// the request: RES-MSG-1 on completions, EV-4 on streams; a cap leaves "" at least.
import { describe, expect, it } from 'vitest';
import { judgeReplyContent, mayOmitText } from '../../lib/spec/rules/reply-content.ts';

const chat = { method: 'POST', path: '/v1/chat/completions', status: 200 };
const completion = (message: unknown, finish = 'length') => ({ ...chat, contentType: 'application/json', text: JSON.stringify({ choices: [{ index: 0, message, finish_reason: finish }] }) });
const chunk = (delta: unknown, finish: string | null = null) => JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
const stream = (data: string[], request?: unknown) => ({ ...chat, contentType: 'text/event-stream', text: '', streamData: [...data, '[DONE]'], request });

describe('content on every reply', () => {
  it('RES-MSG-1: a string content (also "" under a cap) keeps it; null or absent breaks it', () => {
    expect(judgeReplyContent(completion({ role: 'assistant', content: 'Hi' }, 'stop'))).toEqual({ clause: 'RES-MSG-1' });
    expect(judgeReplyContent(completion({ role: 'assistant', content: '' }))).toEqual({ clause: 'RES-MSG-1' });
    expect(judgeReplyContent(completion({ role: 'assistant', content: null }))).toEqual({ clause: 'RES-MSG-1', seen: 'choice 0: message.content null (finish_reason "length")' });
    expect(judgeReplyContent(completion({ role: 'assistant' }))!.seen).toMatch(/message\.content absent/);
  });
  it('tool calls, a function call or a refusal stand in for the text', () => {
    expect(judgeReplyContent(completion({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function' }] }, 'tool_calls'))).toEqual({ clause: 'RES-MSG-1' });
    expect(judgeReplyContent(completion({ role: 'assistant', content: null, function_call: { name: 'f' } }))).toEqual({ clause: 'RES-MSG-1' });
    expect(judgeReplyContent(completion({ role: 'assistant', content: null, refusal: 'no' }))).toEqual({ clause: 'RES-MSG-1' });
    expect(judgeReplyContent(completion({ role: 'assistant', content: null, tool_calls: [] }))!.seen).toMatch(/null/);
  });
  it('EV-4: a stream carries text; a cap that ends it ("length") leaves a string content at least', () => {
    expect(judgeReplyContent(stream([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({}, 'stop')]))).toEqual({ clause: 'EV-4' });
    expect(judgeReplyContent(stream([chunk({ role: 'assistant', content: '' }), chunk({}, 'length')], { max_tokens: 1 }))).toEqual({ clause: 'EV-4' });
    expect(judgeReplyContent(stream([chunk({ role: 'assistant' }), chunk({}, 'length')], { max_tokens: 1 }))!.seen).toBe('"" from 2 chunks, finish_reason "length" and no delta.content string at all');
    expect(judgeReplyContent(stream([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')], { max_tokens: 1 }))!.seen).toBe('"" from 2 chunks');
    // What a request asked for that may leave no text; tool-call deltas.
    expect(judgeReplyContent(stream([chunk({ role: 'assistant' }), chunk({}, 'stop')], { stop: ['Hi'] }))).toEqual({ clause: 'EV-4' });
    expect(judgeReplyContent(stream([chunk({ role: 'assistant', tool_calls: [{ index: 0 }] }), chunk({}, 'tool_calls')]))).toEqual({ clause: 'EV-4' });
  });
  it('judges only 2xx answers to POST /chat/completions with something to read', () => {
    expect(judgeReplyContent({ ...completion({ content: null }), status: 400 })).toBeUndefined();
    expect(judgeReplyContent({ ...completion({ content: null }), path: '/v1/brains/b/chat' })).toBeUndefined();
    expect(judgeReplyContent({ ...chat, text: 'not json' })).toBeUndefined();
    expect(judgeReplyContent({ ...chat, text: '{"reply": "x"}' })).toBeUndefined();
    expect(judgeReplyContent(stream([]))).toBeUndefined();
    expect(judgeReplyContent(stream(['{"error": {"message": "limit"}}']))).toBeUndefined();
    expect(mayOmitText({ max_tokens: 1 })).toBe(false);
    expect(mayOmitText({ tools: [] })).toBe(true);
    expect(mayOmitText(undefined)).toBe(false);
  });
});
