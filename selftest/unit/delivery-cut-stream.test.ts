// EV-13 (SHOULD) judges the pacing of the stream that came: a stream with no answer, or
// one cut before [DONE] (the run's deadline, a reset), is inconclusive naming why (its
// answering and finishing are EV-10's), unless the part that came was already one burst
// at its end, which still warns. Streams made up in memory, judged through clause():
// no request leaves the process.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../lib/http/http-client.ts';

// harness/target.ts reads the run's configuration at import: any base URL will do, none is reached.
const before = { TARGET_URL: process.env.TARGET_URL, API_KEY: process.env.API_KEY };
process.env.TARGET_URL = 'http://127.0.0.1:9/v1';
process.env.API_KEY = 'sk-delivery-cut-stream-unit-0000';
const { clause } = await import('../../harness/clause-test.ts');
const { deliveryVerdict } = await import('../../harness/concurrency-probes.ts');
for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }

const STALL_HEADERS = { kind: 'timeout-headers' as const, message: 'no response headers within 4000 ms' };
const STALL_BODY = { kind: 'timeout-body' as const, message: 'body not complete within 4000 ms (2 KiB received, 41 events)' };
const RESET = { kind: 'reset' as const, message: 'connection reset mid-body' };
const NEVER_CLOSED = { kind: 'never-closed' as const, message: 'the response stayed open 5000 ms after [DONE]' };

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'svc', choices: [{ index: 0, delta, finish_reason: finish }] });

/** A 200 event stream of `n` content chunks arriving at `at(i)` ms in read `read(i)`; `done`: it ends with [DONE]. */
function stream(n: number, at: (i: number) => number, read: (i: number) => number, o: { done: boolean; error?: Exchange['error'] }): Exchange {
  const last = n ? at(n - 1) : 50;
  const data = [chunk({ role: 'assistant', content: '' }), ...Array.from({ length: n }, (_, i) => chunk({ content: ` word${i}` })), ...(o.done ? [chunk({}, 'stop'), '[DONE]'] : [])];
  const atOf = (k: number) => (k === 0 ? 50 : k <= n ? at(k - 1) : last);
  const readOf = (k: number) => (k === 0 ? -1 : k <= n ? read(k - 1) : read(n - 1));
  const events = data.map((d, k) => ({ data: d, dataLines: 1, offset: k * 100, atMs: atOf(k), read: readOf(k) }));
  const text = data.map((d) => `data: ${d}\n\n`).join('');
  return {
    seq: 1, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' },
    status: 200, headers: { 'content-type': 'text/event-stream' }, mediaType: 'text/event-stream', text,
    stream: { events, problems: [], stats: { bytes: text.length, lineEnds: { lf: events.length * 2, crlf: 0, cr: 0 }, comments: 0, fields: { data: events.length }, events: events.length }, ...(o.done ? { doneIndex: events.length - 1 } : {}), closed: !o.error },
    ...(o.error ? { error: o.error } : {}), durationMs: o.error ? 4000 : last + 5, wireBytes: text.length, retries: [], keyEchoes: [], curl: 'curl http://127.0.0.1:9/v1/chat/completions',
  };
}

const noAnswer: Exchange = {
  seq: 1, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' },
  headers: {}, error: STALL_HEADERS, durationMs: 4000, wireBytes: 0, retries: [], keyEchoes: [], curl: 'curl http://127.0.0.1:9/v1/chat/completions',
};
const paced = (i: number) => 100 + 40 * i; // 40 chunks over 1.6 s, one a read
const eachRead = (i: number) => i;
const atEnd = () => 1500; // 40 chunks in one read after 1.5 s: held back
const oneRead = () => 7;

const cases: Array<[string, string, Exchange]> = [
  ['no-answer', 'no response headers within the run\'s deadline', noAnswer],
  ['cut-paced', '40 paced chunks, then cut by the deadline', stream(40, paced, eachRead, { done: false, error: STALL_BODY })],
  ['cut-few', '5 chunks, then cut by the deadline', stream(5, paced, eachRead, { done: false, error: STALL_BODY })],
  ['reset-paced', '40 paced chunks, then a reset', stream(40, paced, eachRead, { done: false, error: RESET })],
  ['cut-burst', '40 chunks in one read at 1.5 s, then cut by the deadline', stream(40, atEnd, oneRead, { done: false, error: STALL_BODY })],
  ['whole-paced', 'a whole stream of 40 paced chunks', stream(40, paced, eachRead, { done: true })],
  ['whole-burst', 'a whole stream of 40 chunks in one read at its end', stream(40, atEnd, oneRead, { done: true })],
  ['done-never-closed', '40 paced chunks and [DONE], then never closed', stream(40, paced, eachRead, { done: true, error: NEVER_CLOSED })],
];

describe('EV-13 on streams that did or did not come whole, through clause()', () => {
  for (const [id, title, ex] of cases) {
    clause(`selftest/delivery/${id}`, 'EV-13', `self-test: ${title}`, async (t) => { deliveryVerdict(t, ex); });
  }
});

describe('their verdicts', () => {
  type Rec = { verdict: string; message?: string; notes: string[] };
  const records = (task: { file: { tasks: Array<{ tasks?: Array<{ meta: { chatgate?: { id: string } } }> }> } }) =>
    new Map(task.file.tasks.flatMap((s) => s.tasks ?? []).map((x) => [x.meta.chatgate?.id, x.meta.chatgate as unknown as Rec]));
  const get = (task: unknown, id: string) => records(task as never).get(`selftest/delivery/${id}`)!;

  it('a stream with no answer is inconclusive, naming it: no warning on EV-13', ({ task }) => {
    expect(get(task, 'no-answer')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^no answer \(no response headers within 4000 ms\): no stream to judge; .*EV-10's/) });
  });

  it('a stream cut before [DONE] is inconclusive, naming the cut and why what came is no pass', ({ task }) => {
    expect(get(task, 'cut-paced')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^the stream did not come whole, cut by the run's deadline \(body not complete within 4000 ms \(2 KiB received, 41 events\)\): the part that came was paced, but part of a stream is no pass; its finishing is EV-10's \(40 content chunks over 1560 ms, 1660 ms end to end, in 40 reads, then cut/) });
    expect(get(task, 'cut-few')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^the stream did not come whole, cut by the run's deadline .*: too few content chunks came to judge \(5, fewer than 32\)/) });
    expect(get(task, 'reset-paced')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^the stream did not come whole, cut \(connection reset mid-body\): the part that came was paced/) });
  });

  it('the part that came already held back to one burst still warns, the cut named beside it', ({ task }) => {
    const r = get(task, 'cut-burst');
    expect(r.verdict).toBe('warn');
    expect(r.message).toMatch(/all 40 content chunks arrived in the last 0 ms of 1500 ms \(1 read\): held back until the end, as a buffering proxy does; then cut by the run's deadline \(body not complete within 4000 ms/);
  });

  it('a whole stream is judged as before: paced passes, one burst at its end warns', ({ task }) => {
    const ok = get(task, 'whole-paced');
    expect(ok.verdict).toBe('pass');
    expect(ok.notes).toContain('40 content chunks over 1560 ms, 1660 ms end to end, in 40 reads');
    expect(get(task, 'whole-burst')).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/all 40 content chunks arrived in the last 0 ms of 1500 ms/) });
  });

  it('a stream whose [DONE] came is whole: its pacing is judged, its never closing is EV-10\'s', ({ task }) => {
    expect(get(task, 'done-never-closed').verdict).toBe('pass');
  });
});
