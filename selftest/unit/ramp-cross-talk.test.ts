// SVC-9 on the rate-limit probe's ramp (limits/cross-talk) judges every 2xx reply it got,
// with SVC-9's one threshold: fewer than MIN_REPLIES_JUDGED replies is inconclusive, naming
// the counts (the others met the limit), never a pass; two or more of their own pass, and a
// reply of another request fails. Answers made up in memory, judged through clause(): no
// request leaves the process.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../lib/http/http-client.ts';

// harness/target.ts reads the run's configuration at import: any base URL will do, none is reached.
const before = { TARGET_URL: process.env.TARGET_URL, API_KEY: process.env.API_KEY };
process.env.TARGET_URL = 'http://127.0.0.1:9/v1';
process.env.API_KEY = 'sk-ramp-cross-talk-unit-0000';
const { clause } = await import('../../harness/clause-test.ts');
const probes = await import('../../harness/concurrency-probes.ts');
for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
type CrossResult = import('../../harness/concurrency-probes.ts').CrossResult;
type Alone = import('../../harness/concurrency-probes.ts').Alone;

const canary = (i: number) => `CG${String(i).padStart(10, '0')}`;

/** A 200 completion whose text begins with request `of`'s canary and whose id is `of`'s. */
function answer(i: number, of: number): Exchange {
  const body = { id: `chatcmpl-${of}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `${canary(of)} Rivers.` }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 } };
  const text = JSON.stringify(body);
  return {
    seq: i, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' },
    status: 200, headers: { 'content-type': 'application/json' }, mediaType: 'application/json', text, json: body,
    durationMs: 5, wireBytes: text.length, retries: [], keyEchoes: [], curl: `curl http://127.0.0.1:9/v1/chat/completions #${i}`,
  };
}

/** Six lone requests on the main key, one at a time, each answered with its own canary and id. */
const alone: Alone = {
  lone: Array.from({ length: 6 }, (_, k) => {
    const i = 100 + k;
    const ex = answer(i, i);
    return { ex, stream: k % 2 === 1, sample: { request: { key: 'main', canary: canary(i), promptSize: 10 + 200 * k, curl: ex.curl, startMs: k * 100, endMs: k * 100 + 10 }, reply: probes.replyOf(ex) } };
  }),
  refused: [],
};

/** The ramp's 2xx answers: request i of `served` (all in flight together), answered as `swap[i]`'s when given. */
function ramp(served: number[], swap: Record<number, number> = {}): CrossResult[] {
  return served.map((i) => probes.probeResult(answer(i, swap[i] ?? i), { keyLabel: 'rate-limit', canary: canary(i), startMs: 1000, endMs: 1100 + i, label: `probe request ${i + 1}` }));
}

const cases: Array<[string, string, CrossResult[], Record<string, number>]> = [
  ['one-reply', 'one 2xx of 20 sent, 19 met the limit', ramp([0]), { 200: 1, 429: 19 }],
  ['no-reply', 'no 2xx of 20 sent', ramp([]), { 429: 20 }],
  ['two-own', 'two 2xx of 20 sent, each its own', ramp([0, 1]), { 200: 2, 429: 18 }],
];

describe('limits/cross-talk on the ramp\'s replies, through clause()', () => {
  for (const [id, title, cross, statuses] of cases) {
    clause(`selftest/ramp-cross-talk/${id}`, 'SVC-9', `self-test: ${title}`, async (t) => { probes.rampCrossTalkVerdict(t, cross, alone, 20, statuses); });
  }
});

describe('their verdicts', () => {
  type Rec = { verdict: string; message?: string; notes: string[] };
  const records = (task: { file: { tasks: Array<{ tasks?: Array<{ meta: { chatgate?: { id: string } } }> }> } }) =>
    new Map(task.file.tasks.flatMap((s) => s.tasks ?? []).map((x) => [x.meta.chatgate?.id, x.meta.chatgate as unknown as Rec]));
  const get = (task: unknown, id: string) => records(task as never).get(`selftest/ramp-cross-talk/${id}`)!;

  it('a single reply is too little evidence: inconclusive, naming the counts, never a pass', ({ task }) => {
    expect(get(task, 'one-reply')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^only 1 of 20 requests of the probe got a reply to judge \(statuses \{"200":1,"429":19\}\) \(1 served requests of the probe/) });
    expect(get(task, 'no-reply')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^only 0 of 20 requests of the probe got a reply to judge \(statuses \{"429":20\}\)/) });
  });

  it('the threshold is SVC-9\'s one: MIN_REPLIES_JUDGED', () => {
    expect(probes.MIN_REPLIES_JUDGED).toBe(2);
    expect(probes.tooFewReplies(1, 20, 'requests of the probe')).toBe('only 1 of 20 requests of the probe got a reply to judge');
    expect(probes.tooFewReplies(2, 20, 'requests of the probe')).toBeUndefined();
  });

  it('two replies of their own pass, judged by canary and id', ({ task }) => {
    const r = get(task, 'two-own');
    expect(r.verdict).toBe('pass');
    expect(r.notes.join('\n')).toMatch(/^2 replies judged \(2 in flight with another\) by canary 2, usage 0, id 2 \(evidence from 6 lone replies\)/);
  });

});

// A fail through clause() fails the vitest test too: the finding is read off a recording context.
it('two replies traded fail SVC-9, naming both requests', () => {
  const out: { verdict?: string; seen?: string; ex?: Exchange } = {};
  const t = {
    fail(_expected: string, seen: string, ex?: Exchange): never { Object.assign(out, { verdict: 'fail', seen, ex }); throw new Error('failed'); },
    inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', seen: why }); throw new Error('inconclusive'); },
    check(ok: boolean, _expected: string, seen: string, ex?: Exchange) { if (!ok) t.fail('', seen, ex); out.verdict ??= 'pass'; },
    responded() {},
    note() {},
  };
  expect(() => probes.rampCrossTalkVerdict(t as never, ramp([0, 1], { 0: 1, 1: 0 }), alone, 20, { 200: 2, 429: 18 })).toThrow('failed');
  expect(out.verdict).toBe('fail');
  expect(out.seen).toMatch(/^2 replies of another request; probe request 1 \(both sent with the rate-limit key\): the reply carries probe request 2's canary CG0000000001, not its own CG0000000000/);
  expect(out.ex?.curl).toMatch(/#0$/);
});
