// SVC-9 on the rate-limit probe's ramp (limits/cross-talk) judges every 2xx reply it got,
// with SVC-9's one threshold: fewer than MIN_REPLIES_JUDGED replies is inconclusive, naming
// the counts (the others met the limit), never a pass; two or more of their own pass, and a
// reply of another request fails, that request's answer a 429 or none at all as well (it
// still owns its canary). Answers made up in memory, judged through clause(): no request
// leaves the process.
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
  quiet: true,
};

/** How the ramp's other requests ended: the limit's 429, or no answer within the run's deadline. */
function unanswered(i: number, how: '429' | 'none'): Exchange {
  const body = { error: { message: 'Rate limit exceeded', type: 'rate_limit_error', code: 'rate_limited' } };
  const text = JSON.stringify(body);
  return {
    seq: i, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' },
    ...(how === '429' ? { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' }, mediaType: 'application/json', text, json: body } : { headers: {}, error: { kind: 'timeout-headers' as const, message: 'no response headers within 4000 ms' } }),
    durationMs: how === '429' ? 3 : 4000, wireBytes: how === '429' ? text.length : 0, retries: [], keyEchoes: [], curl: `curl http://127.0.0.1:9/v1/chat/completions #${i}`,
  };
}

/**
 * Every answer of the ramp, as the suite records them (all in flight together): request i of
 * `served` answered 200 (as `swap[i]`'s when given), the others up to `sent` a 429 (or, listed
 * in `none`, no answer at all).
 */
function ramp(served: number[], swap: Record<number, number> = {}, sent = served.length, none: number[] = []): CrossResult[] {
  return Array.from({ length: Math.max(sent, ...served.map((i) => i + 1)) }, (_, i) => {
    const ex = served.includes(i) ? answer(i, swap[i] ?? i) : unanswered(i, none.includes(i) ? 'none' : '429');
    return probes.probeResult(ex, { keyLabel: 'rate-limit', canary: canary(i), startMs: 1000, endMs: 1100 + i, label: `probe request ${i + 1}` });
  });
}

const cases: Array<[string, string, CrossResult[], Record<string, number>]> = [
  ['one-reply', 'one 2xx of 20 sent, 19 met the limit', ramp([0], {}, 20), { 200: 1, 429: 19 }],
  ['no-reply', 'no 2xx of 20 sent', ramp([], {}, 20), { 429: 20 }],
  ['two-own', 'two 2xx of 20 sent, each its own', ramp([0, 1]), { 200: 2, 429: 18 }],
  ['two-own-18-limited', 'two 2xx of 20 sent, each its own, 18 answered 429', ramp([0, 1], {}, 20), { 200: 2, 429: 18 }],
];

describe('limits/cross-talk on the ramp\'s replies, through clause()', () => {
  for (const [id, title, cross, statuses] of cases) {
    clause(`selftest/ramp-cross-talk/${id}`, 'SVC-9', `self-test: ${title}`, async (t) => { probes.rampCrossTalkVerdict(t, cross, alone, 20, statuses); });
  }
  // The lone phase's quiet section opened with some of the run's requests still out (its drain time ran out).
  clause('selftest/ramp-cross-talk/two-own-unquiet', 'SVC-9', 'self-test: two 2xx of their own, lone requests sent beside others', async (t) => {
    probes.rampCrossTalkVerdict(t, ramp([0, 1]), { ...alone, quiet: false }, 20, { 200: 2, 429: 18 });
  });
});

describe('their verdicts', () => {
  type Rec = { verdict: string; message?: string; notes: string[] };
  const records = (task: { file: { tasks: Array<{ tasks?: Array<{ meta: { chatgate?: { id: string } } }> }> } }) =>
    new Map(task.file.tasks.flatMap((s) => s.tasks ?? []).map((x) => [x.meta.chatgate?.id, x.meta.chatgate as unknown as Rec]));
  const get = (task: unknown, id: string) => records(task as never).get(`selftest/ramp-cross-talk/${id}`)!;

  it('a single reply is too little evidence: inconclusive, naming the counts, never a pass', ({ task }) => {
    expect(get(task, 'one-reply')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^only 1 of 20 requests of the probe got a reply to judge \(statuses \{"200":1,"429":19\}\) \(1 served requests of the probe/) });
    expect(get(task, 'no-reply')).toMatchObject({ verdict: 'inconclusive', message: expect.stringMatching(/^only 0 of 20 requests of the probe got a reply to judge \(statuses \{"429":20\}\)/) });
    // The 429s are answers the ramp kept (owners of their canaries), never counted as replies judged.
    expect(get(task, 'one-reply').message).toContain('; 19 got no reply to judge, each still the owner of its canary (19 HTTP 429)');
  });

  it('the threshold is SVC-9\'s one: MIN_REPLIES_JUDGED', () => {
    expect(probes.MIN_REPLIES_JUDGED).toBe(2);
    expect(probes.tooFewReplies(1, 20, 'requests of the probe')).toBe('only 1 of 20 requests of the probe got a reply to judge');
    expect(probes.tooFewReplies(2, 20, 'requests of the probe')).toBeUndefined();
  });

  it('two replies of their own pass, judged by canary and id', ({ task }) => {
    const r = get(task, 'two-own');
    expect(r.verdict).toBe('pass');
    expect(r.notes.join('\n')).toMatch(/^2 replies judged \(2 of the probe's 2 requests in flight with another\) by canary 2, usage 0, id 2 \(evidence from 6 lone requests\)/);
    const limited = get(task, 'two-own-18-limited');
    expect(limited.verdict).toBe('pass');
    expect(limited.notes.join('\n')).toMatch(/^2 replies judged \(20 of the probe's 20 requests in flight with another\) by canary 2, usage 0, id 2 \(evidence from 6 lone requests\); 18 got no reply to judge, each still the owner of its canary \(18 HTTP 429\)/);
    // Not quiet: the note says so (the quiet one above says nothing of it).
    expect(r.notes.join('\n')).not.toContain('still in flight');
    expect(get(task, 'two-own-unquiet').notes.join('\n')).toMatch(/; some of the run's other requests were still in flight beside the requests sent alone \(they did not end within the run's deadline\)$/);
  });

});

// A fail through clause() fails the vitest test too: the finding is read off a recording context.
function recording() {
  const out: { verdict?: string; seen?: string; ex?: Exchange } = {};
  const t = {
    fail(_expected: string, seen: string, ex?: Exchange): never { Object.assign(out, { verdict: 'fail', seen, ex }); throw new Error('failed'); },
    inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', seen: why }); throw new Error('inconclusive'); },
    check(ok: boolean, _expected: string, seen: string, ex?: Exchange) { if (!ok) t.fail('', seen, ex); out.verdict ??= 'pass'; },
    responded() {},
    note() {},
  };
  return { t: t as never, out };
}

it('two replies traded fail SVC-9, naming both requests', () => {
  const { t, out } = recording();
  expect(() => probes.rampCrossTalkVerdict(t, ramp([0, 1], { 0: 1, 1: 0 }), alone, 20, { 200: 2, 429: 18 })).toThrow('failed');
  expect(out.verdict).toBe('fail');
  expect(out.seen).toMatch(/^2 replies of another request; probe request 1 \(both sent with the rate-limit key\): the reply carries probe request 2's canary CG0000000001, not its own CG0000000000/);
  expect(out.ex?.curl).toMatch(/#0$/);
});

// The suite keeps every answer of the ramp: before, only its 2xx, so a reply carrying the canary
// of a request the limit refused (or never answered) had no owner to be found by, and passed.
describe('a reply carrying the canary of a request with no reply to judge', () => {
  it('a request answered 429 still owns its canary: the reply carrying it fails SVC-9, naming both', () => {
    const { t, out } = recording();
    // Request 2 got request 3's reply; request 3 itself met the limit.
    expect(() => probes.rampCrossTalkVerdict(t, ramp([0, 1, 2], { 2: 3 }, 20), alone, 20, { 200: 3, 429: 17 })).toThrow('failed');
    expect(out.verdict).toBe('fail');
    expect(out.seen).toMatch(/^1 reply of another request; probe request 3 \(both sent with the rate-limit key\): the reply carries probe request 4's canary CG0000000003, not its own CG0000000002/);
    expect(out.seen).toContain('the other:    curl http://127.0.0.1:9/v1/chat/completions #3');
    expect(out.seen).toContain('(3 served requests of the probe (RATE_LIMIT_API_KEY; 20 of its 20 requests in flight with another) judged with what 6 lone requests showed; 17 got no reply to judge, each still the owner of its canary (17 HTTP 429); judged by canary 3, usage 0, id 3)');
    expect(out.ex?.curl).toMatch(/#2$/);
  });

  it('so does a request with no answer at all (the run\'s deadline)', () => {
    const { t, out } = recording();
    expect(() => probes.rampCrossTalkVerdict(t, ramp([0, 1, 2], { 1: 5 }, 8, [5]), alone, 8, { 200: 3, 429: 4, 'no response (timeout-headers)': 1 })).toThrow('failed');
    expect(out.seen).toMatch(/^1 reply of another request; probe request 2 \(both sent with the rate-limit key\): the reply carries probe request 6's canary CG0000000005, not its own CG0000000001/);
    expect(out.seen).toContain('5 got no reply to judge, each still the owner of its canary (4 HTTP 429; 1 no answer: no response headers within 4000 ms)');
  });

  it('one reply among 429s carrying a limited request\'s canary fails: a finding stands however few replies came', () => {
    const { t, out } = recording();
    expect(() => probes.rampCrossTalkVerdict(t, ramp([0], { 0: 4 }, 20), alone, 20, { 200: 1, 429: 19 })).toThrow('failed');
    expect(out.verdict).toBe('fail');
    expect(out.seen).toMatch(/^1 reply of another request; probe request 1 .*probe request 5's canary CG0000000004/);
  });
});
