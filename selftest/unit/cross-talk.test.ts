import { describe, expect, it } from 'vitest';
import { CANARY_COUNT_SPREAD, canaryFor, canaryInstruction, canariesIn, crossedLone, describeFinding, requestOfCanary, judgeCrossTalk, learnEvidence, makeCanary, type CrossTalkSample } from '../../lib/spec/rules/cross-talk.ts';
import { judgeDelivery } from '../../lib/spec/rules/stream-delivery.ts';
import { WORDS_STEP } from '../../harness/concurrency-probes.ts';

// A target that echoes, counts words + 3 and gives each reply its own id.
const sample = (i: number, o: { echo?: boolean; usage?: (size: number) => number | undefined; id?: (i: number) => string | undefined; key?: string; size?: number } = {}): CrossTalkSample => {
  const canary = `CG${String(i).padStart(10, '0')}`;
  const size = o.size ?? 10 + 8 * i;
  return {
    request: { key: o.key ?? 'main', canary, promptSize: size, curl: `curl #${i}` },
    reply: { content: `${o.echo === false ? '' : `${canary} `}alpha bravo`, promptTokens: (o.usage ?? ((s) => s + 3))(size), id: (o.id ?? ((n) => `chatcmpl-${n}`))(i) },
  };
};
// Lone requests spread over the burst's prompt sizes, as the probes send them.
const lone = (o?: Parameters<typeof sample>[1]) => [0, 1, 2, 3, 4, 5].map((i) => sample(100 + i, { ...o, size: 10 + 16 * i }));
const swap = (a: CrossTalkSample, b: CrossTalkSample): [CrossTalkSample, CrossTalkSample] => [{ request: a.request, reply: b.reply }, { request: b.request, reply: a.reply }];

describe('load canaries', () => {
  it('name their request: requestOfCanary reads back canaryFor\'s number (up to 36^7), and canariesIn finds them', () => {
    for (const n of [0, 35, 36 ** 6 + 5, 36 ** 7 - 1]) {
      const c = canaryFor(n, 1234);
      expect(requestOfCanary(c)).toBe(n);
      expect(canariesIn(`code ${c}.`)).toEqual([c]);
    }
  });
});

describe('SVC-9 cross-talk rule', () => {
  it('makes canaries the pattern finds in an instruction', () => {
    const c = makeCanary();
    expect(canariesIn(canaryInstruction(c))).toEqual([c]);
    expect(makeCanary()).not.toBe(c);
  });

  it('finds nothing on replies that are their own, with every kind of evidence judged', () => {
    const ev = learnEvidence(lone());
    expect(ev).toMatchObject({ echo: true, distinctIds: true });
    const j = judgeCrossTalk(ev, Array.from({ length: 8 }, (_, i) => sample(i)));
    expect(j.findings).toEqual([]);
    expect(j.judged).toEqual({ canary: 8, usage: 8, id: 8 });
    expect(j.inconclusive).toBeUndefined();
  });

  it('finds a reply cache one request behind by canary, though no lone reply repeats its own, and learns nothing from its lone replies', () => {
    // Each reply (content, usage and id) is the previous request's, the lone ones too.
    const behind = (all: CrossTalkSample[]) => all.map((s, i) => ({ request: s.request, reply: all[Math.max(0, i - 1)]!.reply }));
    const l = lone();
    const ev = learnEvidence(behind(l));
    expect(ev.echo).toBe(false);
    expect(ev.usage).toBeUndefined(); // counts one request behind would fit a line, but one shifted
    expect(ev.missing.join('; ')).toMatch(/^5 of 6 lone replies carry another lone request's canary, not their own/);
    expect(crossedLone(behind(l)).map((f) => [f.kind, f.request, f.other])).toEqual([1, 2, 3, 4, 5].map((i) => ['canary', i, i - 1]));
    expect(crossedLone(l)).toEqual([]);
    const j = judgeCrossTalk(ev, behind(Array.from({ length: 6 }, (_, i) => sample(i))));
    expect(j.findings.map((f) => [f.kind, f.request, f.other])).toEqual([1, 2, 3, 4, 5].map((i) => ['canary', i, i - 1]));
    expect(j.inconclusive).toBeUndefined();
    // A legal target that repeats the whole conversation (its own canary and an earlier one) is no finding.
    const both = Array.from({ length: 6 }, (_, i) => sample(i)).map((s, i) => ({ request: s.request, reply: { ...s.reply, content: `${s.request.canary} (after CG${String(Math.max(0, i - 1)).padStart(10, '0')})` } }));
    expect(judgeCrossTalk(learnEvidence(l), both).findings).toEqual([]);
  });

  it('takes a canary the request\'s own history holds for its own: a session\'s later turn repeating its first turn\'s is no finding', () => {
    const turns = Array.from({ length: 3 }, (_, i) => sample(i, { echo: false }));
    // Turns 1 and 2 carry turn 0's canary in their history, and their replies repeat it.
    const later = turns.map((s, i) => (i === 0 ? s : { request: { ...s.request, held: [turns[0]!.request.canary!] }, reply: { ...s.reply, content: `${turns[0]!.request.canary} alpha` } }));
    expect(judgeCrossTalk(learnEvidence(lone({ echo: false })), later).findings).toEqual([]);
    expect(learnEvidence(later).missing.join('; ')).not.toMatch(/another lone request's canary/);
    // The same replies with no history named: turn 0's canary is another request's.
    const unnamed = later.map((s) => ({ request: { ...s.request, held: undefined }, reply: s.reply }));
    expect(judgeCrossTalk(learnEvidence(lone({ echo: false })), unnamed).findings.map((f) => [f.kind, f.request, f.other])).toEqual([['canary', 1, 0], ['canary', 2, 0]]);
  });

  it('finds a swap by canary, by usage and by id, each alone', () => {
    const all = Array.from({ length: 6 }, (_, i) => sample(i));
    const [a, b] = swap(all[1]!, all[4]!);
    const swapped = [all[0]!, a, all[2]!, all[3]!, b, all[5]!];
    const j = judgeCrossTalk(learnEvidence(lone()), swapped);
    expect(j.findings.map((f) => [f.kind, f.request, f.other])).toEqual([['canary', 1, 4], ['canary', 4, 1]]);
    // usage only (no echo, one fixed id): a target counting its own way (2x + 5)
    const own = { echo: false, id: () => 'chatcmpl-fixed', usage: (s: number) => 2 * s + 5 };
    const plain = Array.from({ length: 6 }, (_, i) => sample(i, own));
    const [c, d] = swap(plain[0]!, plain[3]!);
    const ju = judgeCrossTalk(learnEvidence(lone(own)), [c, plain[1]!, plain[2]!, d]);
    expect(ju.findings.map((f) => f.kind)).toEqual(['usage', 'usage']);
    expect(ju.judged.id).toBe(0);
    // ids only: no echo, no usage
    const idOnly = { echo: false, usage: () => undefined };
    const dup = Array.from({ length: 3 }, (_, i) => sample(i, idOnly));
    dup[2] = { ...dup[2]!, reply: { ...dup[2]!.reply, id: dup[0]!.reply.id } };
    const ji = judgeCrossTalk(learnEvidence(lone(idOnly)), dup);
    expect(ji.findings).toMatchObject([{ kind: 'id', request: 2, other: 0 }]);
  });

  it('a target that counts its own way, never echoes, or answers a fixed id is no finding', () => {
    const legal = { echo: false, id: () => 'chatcmpl-fixed', usage: (s: number) => Math.round(1.3 * s) + 7 };
    const j = judgeCrossTalk(learnEvidence(lone(legal)), Array.from({ length: 8 }, (_, i) => sample(i, legal)));
    expect(j.findings).toEqual([]);
    expect(j.judged).toMatchObject({ canary: 0, id: 0 });
    expect(j.judged.usage).toBe(8);
  });

  it('a count a few tokens off its own prompt\'s line is no swap, even where a neighbour\'s prompt fits better', () => {
    // As seen against a legal target: lone replies on the line exactly, then a burst reply 5 tokens off its own
    // prompt's expected count and 2 off a prompt 3 tokens longer (another tokenizer's count of a random canary).
    const own = { echo: false };
    const ev = learnEvidence(lone(own));
    expect(ev.usage?.tolerance).toBe(2);
    const burst = [96, 99, 103, 106].map((size, i) => sample(i, { ...own, size }));
    burst[3] = { ...burst[3]!, reply: { ...burst[3]!.reply, promptTokens: 106 + 3 - 5 } };
    expect(judgeCrossTalk(ev, burst).findings).toEqual([]);
    // The same burst with two replies of prompts 40 tokens apart swapped is still found.
    const far = [60, 99, 103, 140].map((size, i) => sample(i, { ...own, size }));
    const [a, b] = swap(far[0]!, far[3]!);
    expect(judgeCrossTalk(ev, [a, far[1]!, far[2]!, b]).findings.map((f) => [f.kind, f.request, f.other])).toEqual([['usage', 0, 3], ['usage', 3, 0]]);
  });

  it('prompts that differ only by their canaries are never told apart by usage; prompts 16 words apart are', () => {
    // As in a CI run against usage-own-count: two prompts of the same words that o200k counted 27 and 31
    // (their random canaries), one count (35) for both from a target counting words.
    const own = { echo: false };
    const ev = learnEvidence(lone(own));
    expect(ev.usage?.tolerance).toBe(2);
    const pair = [27, 31].map((size, i) => sample(i, { ...own, size, usage: () => 35 }));
    expect(judgeCrossTalk(ev, pair).findings).toEqual([]);
    // The probes' neighbours (WORDS_STEP filler words apart) swapped are still found.
    const near = [27, 27 + WORDS_STEP].map((size, i) => sample(i, { ...own, size }));
    const [a, b] = swap(near[0]!, near[1]!);
    expect(judgeCrossTalk(ev, [a, b]).findings.map((f) => [f.kind, f.request, f.other])).toEqual([['usage', 0, 1], ['usage', 1, 0]]);
    expect(WORDS_STEP).toBeGreaterThanOrEqual(CANARY_COUNT_SPREAD);
  });

  it('learns the usage line even when two lone replies met other traffic', () => {
    const own = { echo: false };
    const l = lone(own);
    l[1] = { ...l[1]!, reply: { ...l[1]!.reply, promptTokens: 12 } };
    l[4] = { ...l[4]!, reply: { ...l[4]!.reply, promptTokens: 12 } };
    const fit = learnEvidence(l).usage!;
    expect(fit.slope).toBeCloseTo(1);
    expect(fit.offset).toBeCloseTo(3);
  });

  it('is inconclusive, naming why, with no echo, no usage and a fixed id', () => {
    const none = { echo: false, id: () => 'chatcmpl-fixed', usage: () => undefined };
    const j = judgeCrossTalk(learnEvidence(lone(none)), Array.from({ length: 4 }, (_, i) => sample(i, none)));
    expect(j.findings).toEqual([]);
    expect(j.inconclusive).toMatch(/do not repeat their canary.*no usage.prompt_tokens.*share a completion id/);
  });

  it('a finding names both keys and both curl lines', () => {
    const a = sample(1, { key: 'main' });
    const b = sample(2, { key: 'second' });
    const [x, y] = swap(a, b);
    const j = judgeCrossTalk(learnEvidence(lone()), [x, y]);
    expect(describeFinding(j.findings[0]!, [x, y])).toMatch(/main key, got the reply of a request sent with the second key[\s\S]*curl #1[\s\S]*curl #2/);
  });
});

describe('EV-13 delivery rule', () => {
  const chunks = (n: number, at: (i: number) => number, read?: (i: number) => number) => Array.from({ length: n }, (_, i) => ({ atMs: at(i), ...(read ? { read: read(i) } : {}) }));
  it('warns on a long stream delivered in one read at its end', () => {
    expect(judgeDelivery(chunks(40, () => 1500, () => 7))).toMatchObject({ verdict: 'burst', reads: 1, contentChunks: 40 });
    expect(judgeDelivery(chunks(40, (i) => 1500 + (i < 20 ? 0 : 3))).verdict).toBe('burst');
  });
  it('passes a stream spread over its time', () => {
    expect(judgeDelivery(chunks(40, (i) => 100 + 40 * i, (i) => i)).verdict).toBe('streamed');
  });
  it('is inconclusive on a short or a fast stream', () => {
    expect(judgeDelivery(chunks(12, () => 1500, () => 1))).toMatchObject({ verdict: 'inconclusive', why: expect.stringMatching(/short stream/) });
    expect(judgeDelivery(chunks(40, () => 5, () => 1))).toMatchObject({ verdict: 'inconclusive', why: expect.stringMatching(/fast stream/) });
  });
  it('three reads at the end is no burst (a slow writer near its end)', () => {
    expect(judgeDelivery(chunks(40, () => 1500, (i) => i % 3)).verdict).toBe('streamed');
  });
});
