// A concurrency probe's request that got no answer (the run's deadline, a reset) is no
// evidence on the probe's clause: SVC-9 judges the replies that came (inconclusive when
// fewer than two came, naming how many got none and why) and still fails on a reply that is
// another request's, the unanswered request's included; the SVC-1 burst, whose clause is
// answering, still fails a request the deadline cut and a reset. Answers made up in memory: no request leaves the process.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../lib/http/http-client.ts';

// harness/target.ts reads the run's configuration at import: any base URL will do, none is reached.
const before = { TARGET_URL: process.env.TARGET_URL, API_KEY: process.env.API_KEY };
process.env.TARGET_URL = 'http://127.0.0.1:9/v1';
process.env.API_KEY = 'sk-concurrency-no-answer-unit-0000';
const { clause } = await import('../../harness/clause-test.ts');
const probes = await import('../../harness/concurrency-probes.ts');
for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
type CrossResult = import('../../harness/concurrency-probes.ts').CrossResult;
type Alone = import('../../harness/concurrency-probes.ts').Alone;
type Ctx = Parameters<typeof probes.crossTalkVerdict>[0];

const canary = (i: number) => `CG${String(i).padStart(10, '0')}`;
const STALL = { kind: 'timeout-headers' as const, message: 'no response headers within 4000 ms' };
const RESET = { kind: 'reset' as const, message: 'connection reset before any response' };

function exchange(i: number, o: { reply?: { content: string; promptTokens: number; id: string }; error?: Exchange['error'] }): Exchange {
  const body = o.reply && { id: o.reply.id, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: o.reply.content }, finish_reason: 'stop' }], usage: { prompt_tokens: o.reply.promptTokens, completion_tokens: 3, total_tokens: o.reply.promptTokens + 3 } };
  const text = body ? JSON.stringify(body) : undefined;
  return {
    seq: i, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' },
    ...(body ? { status: 200, headers: { 'content-type': 'application/json' }, mediaType: 'application/json', text, json: body } : { headers: {} }),
    ...(o.error ? { error: o.error } : {}), durationMs: o.error ? 4000 : 5, wireBytes: text?.length ?? 0, retries: [], keyEchoes: [], curl: `curl http://127.0.0.1:9/v1/chat/completions #${i}`,
  };
}

/** Request `i` (prompt size `size`), answered with `replyOf`'s canary and prompt count, or cut by `error`. */
function result(i: number, size: number, o: { replyOf?: { i: number; size: number }; error?: Exchange['error']; startMs: number; endMs: number; label?: string }): CrossResult {
  const r = o.replyOf ?? { i, size };
  const reply = o.error ? undefined : { content: `${canary(r.i)} Rivers and stones.`, promptTokens: r.size + 7, id: `chatcmpl-${r.i}` };
  const ex = exchange(i, { ...(reply ? { reply } : {}), ...(o.error ? { error: o.error } : {}) });
  return { ex, sample: { request: { key: 'main', canary: canary(i), promptSize: size, curl: ex.curl, startMs: o.startMs, endMs: o.endMs, ...(o.label ? { label: o.label } : {}) }, reply: probes.replyOf(ex) } };
}

/** Six lone requests one at a time (far-apart prompts, each its own reply), and `unanswered` more that got none. */
function alone(unanswered = 1): Alone {
  const lone = Array.from({ length: 6 }, (_, i) => ({ ...result(100 + i, 10 + 200 * i, { startMs: i * 100, endMs: i * 100 + 10 }), stream: i % 2 === 1 }));
  const refused = Array.from({ length: unanswered }, (_, i) => {
    const r = result(110 + i, 30 + 200 * i, { error: STALL, startMs: 700 + i * 4000, endMs: 4700 + i * 4000 });
    return { stream: false, status: undefined, ex: r.ex };
  });
  return { lone, refused, quiet: true };
}

/** A burst of 16 at once (prompt sizes 20 + 60 i); `stalled` got no answer; `swap`: [a, b] request a got request b's reply. */
function burst(o: { stalled: number[]; swap?: [number, number] }): CrossResult[] {
  return Array.from({ length: 16 }, (_, i) => {
    const stalled = o.stalled.includes(i);
    const other = o.swap?.[0] === i ? o.swap[1] : undefined;
    return result(i, 20 + 60 * i, { startMs: 5000, endMs: stalled ? 9000 : 5100 + i, ...(stalled ? { error: STALL } : {}), ...(other !== undefined ? { replyOf: { i: other, size: 20 + 60 * other } } : {}) });
  });
}

/** What the verdict functions ask of a test, recorded; responded() as clause()'s: no response fails the clause. */
function recording() {
  const out: { verdict?: string; expected?: string; seen?: string; ex?: Exchange; checks: number; notes: string[] } = { checks: 0, notes: [] };
  const t = {
    fail(expected: string, seen: string, ex?: Exchange): never { Object.assign(out, { verdict: 'fail', expected, seen, ex }); throw new Error('failed'); },
    inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', seen: why }); throw new Error('inconclusive'); },
    check(ok: boolean, expected: string, seen: string | (() => string), ex?: Exchange) { if (!ok) t.fail(expected, typeof seen === 'function' ? seen() : seen, ex); out.checks++; out.verdict ??= 'pass'; },
    responded(ex: Exchange) {
      if (ex.throttledOut) t.inconclusive('throttled');
      if (ex.status === undefined) t.fail('a response', `no response: ${ex.error?.message}`, ex);
    },
    status(ex: Exchange, ...expected: number[]) { t.responded(ex); t.check(expected.includes(ex.status!), `HTTP ${expected.join(' or ')}`, `HTTP ${ex.status}`, ex); },
    note(text: string) { out.notes.push(text); },
  };
  return { t: t as unknown as Ctx, out };
}

const svc9Burst = (t: Ctx, a: Alone, answers: CrossResult[]) => probes.crossTalkBurstVerdict(t, probes.aloneForms(t, a), answers, 'main key');
function svc1Burst(answers: CrossResult[]) {
  const b = probes.newBurst();
  answers.forEach((r, i) => probes.recordBurstAnswer(b, r, `burst request ${i + 1}`));
  return b;
}

// Through clause() itself: its harness-wide t.responded would fail these on the unanswered requests.
describe('stalled requests, through clause()', () => {
  clause('selftest/no-answer/svc9-some-stalled', 'SVC-9', 'self-test: 4 of 16 stalled, one lone request too', async (t) => {
    svc9Burst(t, alone(1), burst({ stalled: [2, 5, 9, 13] }));
  });
  clause('selftest/no-answer/svc9-one-came', 'SVC-9', 'self-test: 15 of 16 stalled', async (t) => {
    svc9Burst(t, alone(0), burst({ stalled: Array.from({ length: 15 }, (_, i) => i + 1) }));
  });
  clause('selftest/no-answer/svc9-none-came', 'SVC-9', 'self-test: every request of the burst stalled', async (t) => {
    svc9Burst(t, alone(0), burst({ stalled: Array.from({ length: 16 }, (_, i) => i) }));
  });
  clause('selftest/no-answer/svc9-on-svc1-burst', 'SVC-9', 'self-test: SVC-1\'s burst with 4 of 16 stalled', async (t) => {
    probes.burstCrossTalkVerdict(t, svc1Burst(burst({ stalled: [0, 3, 7, 11] })), alone(1));
  });
});

describe('their verdicts', () => {
  const records = (task: { file: { tasks: Array<{ tasks?: Array<{ meta: { chatgate?: { id: string } } }> }> } }) =>
    new Map(task.file.tasks.flatMap((s) => s.tasks ?? []).map((x) => [x.meta.chatgate?.id, x.meta.chatgate as unknown as { verdict: string; message?: string; notes: string[] }]));

  it('SVC-9 judges the replies that came: a pass on 12 of 16, naming the 4 with none and the lone request with none', ({ task }) => {
    const r = records(task as never).get('selftest/no-answer/svc9-some-stalled')!;
    expect(r.verdict).toBe('pass');
    expect(r.notes.join('\n')).toMatch(/^12 of 16 concurrent replies \(main key\); 4 got no reply to judge \(4 no answer: no response headers within 4000 ms\) judged by canary 12, usage 12, id 12;/m);
    expect(r.notes.join('\n')).toContain('1 of 7 lone requests not served (1 no answer: no response headers within 4000 ms)');
  });

  it('too few replies to judge is inconclusive, naming how many got none and why, never a fail', ({ task }) => {
    const r = records(task as never);
    const one = r.get('selftest/no-answer/svc9-one-came')!;
    expect(one.verdict).toBe('inconclusive');
    expect(one.message).toMatch(/^only 1 of 16 concurrent requests got a reply to judge \(1 of 16 concurrent replies \(main key\); 15 got no reply to judge \(15 no answer: no response headers within 4000 ms\)/);
    const none = r.get('selftest/no-answer/svc9-none-came')!;
    expect(none.verdict).toBe('inconclusive');
    expect(none.message).toMatch(/^only 0 of 16 concurrent requests got a reply to judge .*16 no answer: no response headers within 4000 ms/);
  });

  it('SVC-9 on SVC-1\'s burst: the 12 replies that came are judged', ({ task }) => {
    const r = records(task as never).get('selftest/no-answer/svc9-on-svc1-burst')!;
    expect(r.verdict).toBe('pass');
    expect(r.notes.join('\n')).toMatch(/^12 concurrent replies judged by canary 12, usage 12, id 12 \(evidence from 6 lone replies\); 4 got no reply to judge \(4 no answer: no response headers within 4000 ms\)/m);
  });

  it('the SVC-1 burst still fails a valid request with no answer within the run\'s deadline: answering is SVC-1\'s clause', () => {
    const b = recording();
    expect(() => probes.burstVerdict(b.t, svc1Burst(burst({ stalled: [0, 3, 7, 11] })))).toThrow('failed');
    expect(b.out).toMatchObject({ expected: 'a response', seen: 'no response: no response headers within 4000 ms' });
  });
});

describe('a reply of another request still fails SVC-9 beside stalled requests', () => {
  it('request 6 got request 3\'s reply while request 3 got no answer: the unanswered request still owns its canary', () => {
    const { t, out } = recording();
    expect(() => svc9Burst(t, alone(1), burst({ stalled: [2, 9], swap: [5, 2] }))).toThrow('failed');
    expect(out.verdict).toBe('fail');
    expect(out.seen).toMatch(/^1 reply of another request; request 6 \(both sent with the main key\): the reply carries request 3's canary CG0000000002, not its own CG0000000005/);
    expect(out.seen).toContain('the other:    curl http://127.0.0.1:9/v1/chat/completions #2');
    expect(out.ex?.curl).toMatch(/#5$/);
  });

  it('two replies that came traded while two other requests stalled and one met 429s past its back-off budget', () => {
    const { t, out } = recording();
    const answers = burst({ stalled: [0, 1] });
    // clause() makes a test that met such a 429 inconclusive at its end, unless a real answer failed it first.
    answers[12] = { ...answers[12]!, ex: { ...exchange(12, {}), status: 429, headers: { 'content-type': 'application/json' }, text: '{"error":{}}', throttledOut: true } };
    answers[4] = burst({ stalled: [], swap: [4, 7] })[4]!;
    answers[7] = burst({ stalled: [], swap: [7, 4] })[7]!;
    expect(() => svc9Burst(t, alone(0), answers)).toThrow('failed');
    expect(out.seen).toMatch(/^2 replies of another request; request 5 \(both sent with the main key\): the reply carries request 8's canary/);
  });

  it('on SVC-1\'s burst too, and the SVC-1 burst itself still fails a reset', () => {
    const a = recording();
    expect(() => probes.burstCrossTalkVerdict(a.t, svc1Burst(burst({ stalled: [2], swap: [5, 2] })), alone(0))).toThrow('failed');
    expect(a.out.seen).toMatch(/^1 reply of another request; burst request 6 \(both sent with the main key\): the reply carries burst request 3's canary CG0000000002/);
    const answers = burst({ stalled: [] });
    answers[3] = result(3, 200, { error: RESET, startMs: 5000, endMs: 5010 });
    const b = recording();
    expect(() => probes.burstVerdict(b.t, svc1Burst(answers))).toThrow('failed');
    expect(b.out).toMatchObject({ expected: 'a response', seen: 'no response: connection reset before any response' });
  });
});
