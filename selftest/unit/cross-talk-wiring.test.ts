// SVC-9 on the traffic other probes send at once (the rate-limit ramp, the SVC-1 burst):
// their answers become samples (harness/concurrency-probes.ts probeResult), the requests
// that ran alone teach the evidence and the rest are judged (lib/spec/rules/cross-talk.ts
// judgeTraffic), and the ramp's verdict goes through clause() as limits/cross-talk's does
// (rampCrossTalkVerdict, called, not restated). Answers made up in memory: no request leaves the process.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../lib/http/http-client.ts';
import { judgeTraffic, type CrossTalkSample } from '../../lib/spec/rules/cross-talk.ts';

// harness/target.ts reads the run's configuration at import: any base URL will do, none is reached.
const before = { TARGET_URL: process.env.TARGET_URL, API_KEY: process.env.API_KEY };
process.env.TARGET_URL = 'http://127.0.0.1:9/v1';
process.env.API_KEY = 'sk-cross-talk-wiring-unit-000000000';
const { clause } = await import('../../harness/clause-test.ts');
const { aloneForms, probeResult, rampCrossTalkVerdict, slim } = await import('../../harness/concurrency-probes.ts');
type Alone = import('../../harness/concurrency-probes.ts').Alone;
for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }

const canary = (i: number) => `CG${String(i).padStart(10, '0')}`;
/** A plain 200 whose reply repeats `echo` and carries `id` (a max_tokens 1 reply: the canary alone). */
function answer(i: number, echo: number, id = `chatcmpl-${echo}`): Exchange {
  const body = { id, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `${canary(echo)} and more words ${'x'.repeat(5000)}` }, finish_reason: 'length' }], usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } };
  const text = JSON.stringify(body);
  return {
    seq: i, request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {}, body: '{}' }, status: 200,
    headers: { 'content-type': 'application/json' }, mediaType: 'application/json', text, json: body, durationMs: 5, wireBytes: text.length,
    retries: [], keyEchoes: [], curl: `curl -H "Authorization: Bearer $RATE_LIMIT_API_KEY" http://127.0.0.1:9/v1/chat/completions #${i}`,
  };
}
/** The ramp's answers: six alone (100 ms apart, 10 ms each), then eight at once; `swap` trades two replies of the eight. */
function ramp(swap: boolean, alone = 6) {
  return Array.from({ length: alone + 8 }, (_, i) => {
    const busy = i >= alone;
    const echo = swap && i === alone + 2 ? alone + 5 : swap && i === alone + 5 ? alone + 2 : i;
    const startMs = busy ? 10_000 + i : i * 100;
    return probeResult(answer(i, echo), { keyLabel: 'rate-limit', canary: canary(i), startMs, endMs: busy ? 10_200 : startMs + 10, label: `probe request ${i + 1}` });
  });
}

/** SVC-9's lone requests on the main key (none, or `lone` made up as answered alone), as the suite learns them. */
function aloneOf(lone: CrossTalkSample[] = []): Alone {
  return { lone: lone.map((sample, k) => ({ ex: answer(90 + k, 90 + k), sample, stream: false })), refused: [], quiet: true };
}
/** limits/cross-talk's verdict on the ramp's answers (every one of them 200 here): `sent` is how many went out. */
const verdictOn = (t: Parameters<typeof rampCrossTalkVerdict>[0], results: ReturnType<typeof ramp>, lone: CrossTalkSample[] = []) =>
  rampCrossTalkVerdict(t, results, aloneOf(lone), results.length, { 200: results.length });

describe('SVC-9 on a probe\'s own concurrent traffic, through clause()', () => {
  // A failing clause() test fails its vitest test too, so the swap is judged below with a recording context.
  clause('selftest/cross-talk/ramp-clean', 'SVC-9', 'self-test: every reply of the ramp its own', async (t) => {
    verdictOn(t, ramp(false));
  });
  clause('selftest/cross-talk/ramp-none-alone', 'SVC-9', 'self-test: no request of the ramp ran alone', async (t) => {
    verdictOn(t, ramp(true, 0));
  });
});

/** What rampCrossTalkVerdict asks of a test: its fail, inconclusive and check, recorded. */
function recording() {
  const out: { verdict?: string; expected?: string; seen?: string; ex?: Exchange; checks: number } = { checks: 0 };
  const t = {
    fail(expected: string, seen: string, ex?: Exchange): never { Object.assign(out, { verdict: 'fail', expected, seen, ex }); throw new Error('failed'); },
    inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', seen: why }); throw new Error('inconclusive'); },
    check(ok: boolean, expected: string, seen: string, ex?: Exchange) { if (!ok) t.fail(expected, seen, ex); out.checks++; out.verdict ??= 'pass'; },
    responded() {},
    note() {},
  };
  return { t: t as unknown as Parameters<typeof rampCrossTalkVerdict>[0], out };
}

describe('their verdicts', () => {
  const records = (task: { file: { tasks: Array<{ tasks?: Array<{ meta: { chatgate?: { id: string } } }> }> } }) =>
    new Map(task.file.tasks.flatMap((s) => s.tasks ?? []).map((x) => [x.meta.chatgate?.id, x.meta.chatgate as unknown as Record<string, unknown>]));

  it('a swap fails SVC-9 with both requests\' curl lines and keys, on the exchange of the request that got the other\'s reply', () => {
    const { t, out } = recording();
    expect(() => verdictOn(t, ramp(true))).toThrow('failed');
    expect(out.verdict).toBe('fail');
    expect(out.seen).toContain('2 replies of another request');
    expect(out.seen).toMatch(/probe request 9 \(both sent with the rate-limit key\): the reply carries probe request 12's canary CG0000000011, not its own CG0000000008/);
    expect(out.seen).toContain('this request: curl -H "Authorization: Bearer $RATE_LIMIT_API_KEY" http://127.0.0.1:9/v1/chat/completions #8');
    expect(out.seen).toContain('the other:    curl -H "Authorization: Bearer $RATE_LIMIT_API_KEY" http://127.0.0.1:9/v1/chat/completions #11');
    // The ramp runs beside the rest of the run: its six lone replies are judged as well (judgeAll), 14 in all.
    expect(out.seen).toMatch(/14 served requests of the probe \(RATE_LIMIT_API_KEY; 8 of its 14 requests in flight with another\) judged with what 6 lone requests showed; judged by canary 14, usage 0, id 14/);
    expect(out.ex?.curl).toMatch(/#8$/);
  });

  it('a lone reply that carries an earlier lone request\'s canary fails SVC-9 at the lone phase (a reply cache one request behind), on its own exchange; own replies do not', () => {
    const loneOf = (echo: (i: number) => number) => [0, 1, 2].map((i): CrossTalkSample => ({ request: { key: 'main', canary: canary(90 + i), promptSize: 10 + 40 * i }, reply: { content: canary(90 + echo(i)), id: `chatcmpl-l${echo(i)}` } }));
    const { t, out } = recording();
    expect(() => aloneForms(t as never, aloneOf(loneOf((i) => Math.max(0, i - 1))))).toThrow('failed');
    expect(out.seen).toMatch(/^2 of 3 lone replies \(sent one at a time\) of another request; lone request 2 \(both sent with the main key\): the reply carries lone request 1's canary CG0000000090, not its own CG0000000091/);
    expect(out.ex?.seq).toBe(91);
    const own = recording();
    expect(aloneForms(own.t as never, aloneOf(loneOf((i) => i))).ev.echo).toBe(true);
    expect(own.out.verdict).toBeUndefined();
  });

  it('a ramp with no request alone is judged with lone requests sent elsewhere (the swap defect holds every reply a while)', () => {
    const lone: CrossTalkSample[] = [0, 1, 2].map((i) => ({ request: { key: 'main', canary: canary(90 + i), promptSize: 10 + 40 * i, startMs: i * 100, endMs: i * 100 + 10 }, reply: { content: canary(90 + i), id: `chatcmpl-l${i}` } }));
    const { t, out } = recording();
    expect(() => verdictOn(t, ramp(true, 0), lone)).toThrow('failed');
    expect(out.seen).toMatch(/^2 replies of another request; probe request 3 \(both sent with the rate-limit key\): the reply carries probe request 6's canary/);
  });

  it('replies that are their own pass; with no request alone there is nothing to learn from: inconclusive, never a pass', ({ task }) => {
    const r = records(task as never);
    expect(r.get('selftest/cross-talk/ramp-clean')!.verdict).toBe('pass');
    const none = r.get('selftest/cross-talk/ramp-none-alone')!;
    expect(none.verdict).toBe('inconclusive');
    expect(String(none.message)).toMatch(/^no request ran alone to learn from/);
  });
});

describe('what a probe keeps of its answers', () => {
  it('the canaries of a reply and the first 2,000 characters of the exchange, no parsed stream', () => {
    const ex = answer(1, 3);
    const r = probeResult(ex, { keyLabel: 'rate-limit', canary: canary(1), startMs: 0, endMs: 1 });
    // The probe's prompts are alike in length: usage is left out, never judged.
    expect(r.sample.reply).toEqual({ content: canary(3), id: 'chatcmpl-3' });
    expect(r.sample.request).toMatchObject({ key: 'rate-limit', canary: canary(1), curl: ex.curl, startMs: 0, endMs: 1 });
    expect(r.ex.text!.length).toBe(2000);
    expect(r.ex.stream).toBeUndefined();
    expect(r.ex.json).toBeUndefined();
    const streamed = { ...ex, stream: { events: [] } } as unknown as Exchange;
    expect(slim(streamed).stream).toBeUndefined();
    expect(slim(streamed).curl).toBe(ex.curl);
  });

  it('judgeAll: a probe whose requests never overlapped each other is still judged whole (it ran beside the rest of the run)', () => {
    const sequential = ramp(false, 6).slice(0, 6);
    expect(judgeTraffic(sequential.map((r) => r.sample)).inconclusive).toMatch(/no two requests were in flight together/);
    const all = judgeTraffic(sequential.map((r) => r.sample), [], { judgeAll: true });
    expect(all).toMatchObject({ findings: [], concurrent: 0, lone: 6, judged: { canary: 6, usage: 0, id: 6 } });
    expect(all.inconclusive).toBeUndefined();
    // A reply alone that carries an earlier request's canary (a cache handing out another's reply) is a finding too.
    const replayed = sequential.map((r, i) => (i === 4 ? probeResult(answer(4, 1), { keyLabel: 'rate-limit', canary: canary(4), startMs: 400, endMs: 410, label: 'probe request 5' }) : r));
    expect(judgeTraffic(replayed.map((r) => r.sample), [], { judgeAll: true }).findings.map((f) => [f.kind, f.request, f.other])).toEqual([['canary', 4, 1]]);
  });

  it('a burst with no lone request of its own is judged with lone requests sent before it', () => {
    const lone: CrossTalkSample[] = [0, 1, 2, 3].map((i) => ({ request: { key: 'main', canary: canary(90 + i), promptSize: 10 + 40 * i, startMs: i * 100, endMs: i * 100 + 10 }, reply: { content: canary(90 + i), promptTokens: 13 + 40 * i, id: `chatcmpl-l${i}` } }));
    const burst: CrossTalkSample[] = [0, 1, 2].map((i) => ({ request: { key: 'main', canary: canary(i), promptSize: 20 + 60 * i, startMs: 5000, endMs: 5100 }, reply: { content: canary(i === 0 ? 2 : i === 2 ? 0 : 1), promptTokens: 23 + 60 * (i === 0 ? 2 : i === 2 ? 0 : 1), id: `chatcmpl-b${i}` } }));
    expect(judgeTraffic(burst).inconclusive).toMatch(/no request ran alone/);
    const j = judgeTraffic(burst, lone);
    expect(j.lone).toBe(4);
    expect(j.samples).toHaveLength(3);
    expect(j.concurrent).toBe(3);
    expect(j.findings.map((f) => [f.kind, f.request, f.other])).toEqual([['canary', 0, 2], ['canary', 2, 0]]);
    expect(j.judged).toEqual({ canary: 3, usage: 3, id: 3 });
  });
});
