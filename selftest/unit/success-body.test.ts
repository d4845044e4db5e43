// lib/spec/rules/success-body.ts: every 2xx to a chat, brain or models request carries a
// complete body of the right shape, or a complete stream; cuts of our own are not judged.
import { describe, expect, it } from 'vitest';
import { asksForStream, judgeSuccessBody, type SuccessAnswer } from '../../lib/spec/rules/success-body.ts';

const chat = (extra: Partial<SuccessAnswer>): SuccessAnswer => ({ method: 'POST', path: '/v1/chat/completions', status: 200, contentType: 'application/json', text: '{"choices": []}', ...extra });
const stream = (data: string[], extra: Partial<SuccessAnswer> = {}) => chat({ contentType: 'text/event-stream', text: 'x', streamData: data, ...extra });

describe('success bodies', () => {
  it('an empty, cut or shapeless 200 to a chat request breaks SVC-1', () => {
    expect(judgeSuccessBody(chat({}))).toEqual([{ clause: 'SVC-1' }]);
    expect(judgeSuccessBody(chat({ text: '' }))![0]!.seen).toMatch(/empty body/);
    expect(judgeSuccessBody(chat({ text: '{"choices": [{"ind' }))![0]!.seen).toMatch(/not complete JSON/);
    expect(judgeSuccessBody(chat({ text: '{"reply": "hi"}' }))![0]!.seen).toMatch(/no choices array/);
    expect(judgeSuccessBody(chat({ text: '{"cho', transportError: 'connection reset during the body' }))![0]!.seen).toMatch(/cut \(connection reset/);
  });
  it('the model list and the brain route are judged on their own clauses', () => {
    expect(judgeSuccessBody({ method: 'GET', path: '/v1/models', status: 200, text: '{"object": "list"}' })![0]).toMatchObject({ clause: 'SVC-2', seen: expect.stringMatching(/no data array/) });
    expect(judgeSuccessBody({ method: 'GET', path: '/v1/models/', status: 200, text: '[]' })).toEqual([{ clause: 'SVC-2' }]);
    expect(judgeSuccessBody(chat({ path: '/v1/brains/b/chat', status: 201, text: '' }))![0]).toMatchObject({ clause: 'SVC-3', seen: expect.stringMatching(/HTTP 201 with an empty body/) });
    // The brain route's body is not shown: any complete body that does not claim to be JSON is one.
    expect(judgeSuccessBody(chat({ path: '/v1/brains/b/chat', contentType: 'text/plain', text: 'hello' }))).toEqual([{ clause: 'SVC-3' }]);
  });
  it('a stream ends with [DONE], nothing after it, and closes (EV-6)', () => {
    expect(judgeSuccessBody(stream(['{}', '[DONE]']))).toEqual([{ clause: 'EV-6' }]);
    expect(judgeSuccessBody(stream(['{}', '[DONE]', '{"late": 1}']))![0]!.seen).toMatch(/1 more events, first: \{"late": 1\}/);
    expect(judgeSuccessBody(stream(['{}']))![0]!.seen).toMatch(/no \[DONE\] in 1 payloads/);
    expect(judgeSuccessBody(stream(['{}'], { transportError: 'connection reset during the body' }))![0]!.seen).toMatch(/reset/);
    expect(judgeSuccessBody(stream(['{}', '[DONE]'], { transportError: 'response not closed within 5000 ms after [DONE]' }))![0]!.seen).toMatch(/stayed open/);
  });
  it('judges nothing but 2xx answers to the three routes, and no cut of our own', () => {
    expect(judgeSuccessBody(chat({ status: 400, text: '' }))).toBeUndefined();
    expect(judgeSuccessBody(chat({ status: undefined }))).toBeUndefined();
    expect(judgeSuccessBody(chat({ path: '/v1/images/generations', text: '' }))).toBeUndefined();
    expect(judgeSuccessBody(chat({ method: 'OPTIONS', text: '' }))).toBeUndefined();
    expect(judgeSuccessBody(chat({ text: '{"cho', transportError: 'body not complete within 4000 ms (10 B received)' }))).toBeUndefined();
    expect(judgeSuccessBody(chat({ text: '{"cho', transportError: 'body exceeded 8 MiB (cut off after 8.1 MiB)' }))).toBeUndefined();
    expect(judgeSuccessBody(stream(['{}'], { transportError: 'body stalled for 4000 ms' }))).toBeUndefined();
    expect(judgeSuccessBody(stream(['{}'], { transportError: 'This operation was aborted' }))).toBeUndefined();
  });

  it('a request that asked for a stream is judged as a stream whatever the Content-Type (EV-1 judges the type, not SVC-1)', () => {
    const asText = (data: string[] | undefined, text: string) => chat({ contentType: 'text/plain', text, requestedStream: true, ...(data ? { streamData: data } : {}) });
    expect(judgeSuccessBody(asText(['{"choices": []}', '[DONE]'], 'data: {"choices": []}\n\ndata: [DONE]\n\n'))).toEqual([{ clause: 'EV-6' }]);
    expect(judgeSuccessBody(asText(['{"choices": []}'], 'data: {"choices": []}\n\n'))![0]).toMatchObject({ clause: 'EV-6', seen: expect.stringMatching(/no \[DONE\]/) });
    // No stream at all (a JSON completion, an empty body): the type and the form are EV-1's and SVC-5's, nothing for this rule.
    expect(judgeSuccessBody(asText([], '{"choices": []}'))).toBeUndefined();
    expect(judgeSuccessBody(asText(undefined, ''))).toBeUndefined();
    expect(judgeSuccessBody(chat({ requestedStream: false }))).toEqual([{ clause: 'SVC-1' }]);
    expect(asksForStream('{"model": "m", "stream": true}')).toBe(true);
    expect(asksForStream('{"model": "m", "stream": "true"}')).toBe(false);
    expect(asksForStream('{"messages": [{"content": "\\"stream\\": true"}]}')).toBe(false);
    expect(asksForStream('{"stream": true,')).toBe(false);
    expect(asksForStream(undefined)).toBe(false);
  });
});
