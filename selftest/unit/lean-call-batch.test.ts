// The load driver reads a long stream's pieces in batches (load/engine/lean-client.ts `hold`):
// every piece must still be read, in order, each event at the time its piece came, and a
// judgement or a cancel must see the pieces held before it. Streams are fed whole, byte by
// byte and in seeded random pieces; the outcome must not depend on how they were cut.
// In memory, no sockets; well under a second.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../lib/run/seeded-random.ts';
import { LeanCall, type Outcome } from '../../load/engine/lean-client.ts';

const c = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-b', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}`;
const words = Array.from({ length: 40 }, (_, i) => `w${i} é✓ `);
const STREAMS: Record<string, string> = {
  'LF, 40 content chunks': `${c({ role: 'assistant' })}\n\n${words.map((w) => `${c({ content: w })}\n\n`).join('')}data: [DONE]\n\n`,
  'CRLF and comments': `: hi\r\n\r\n${words.map((w) => `${c({ content: w })}\r\n\r\n`).join('')}: keep-alive\r\n\r\ndata: [DONE]\r\n\r\n`,
  // Handed to the strict reader mid-stream: it keeps partial lines across the batch's pieces.
  'CR only after 5 events': `${words.slice(0, 5).map((w) => `${c({ content: w })}\n\n`).join('')}${words.slice(5).map((w) => `${c({ content: w })}\r\r`).join('')}data: [DONE]\r\r`,
  'event field (strict from the start)': `${words.map((w) => `event: chunk\n${c({ content: w })}\n\n`).join('')}data: [DONE]\n\n`,
  'an error event after 20 chunks': `${words.slice(0, 20).map((w) => `${c({ content: w })}\n\n`).join('')}data: {"error":{"message":"overloaded"}}\n\n${c({ content: 'late' })}\n\ndata: [DONE]\n\n`,
  'no [DONE]': `${words.map((w) => `${c({ content: w })}\n\n`).join('')}`,
};

interface Fed { out: Outcome; aborted: number }

/** The pieces a stream's first batch-free stretch takes (comments: no event), so the next ones are held. */
function pastFirstPieces(lc: LeanCall): void {
  for (let i = 0; i < 16; i++) lc.onResponseData(undefined as never, Buffer.from(': keep-alive\n\n'));
}

function call(): { call: LeanCall; done: () => Fed } {
  let out: Outcome | undefined;
  let aborted = 0;
  const ctl = { abort() { aborted++; ctl.aborted = true; }, aborted: false };
  const lc = new LeanCall({ seq: 0, route: 'chat', key: 'main', stream: true, path: '/v1/chat/completions', body: '{}', headers: {}, intendedAt: 0, sample: false, keepReply: true }, (o) => { out = o; });
  lc.onRequestStart(ctl as never);
  lc.onResponseStart(ctl as never, 200, { 'content-type': 'text/event-stream' });
  return { call: lc, done: () => ({ out: out!, aborted }) };
}

/** Feeds each piece a few ms after the last; returns when each call began and ended (its piece's time lies within). */
async function timedFeed(lc: LeanCall, pieces: Buffer[]): Promise<Array<[number, number]>> {
  const span: Array<[number, number]> = [];
  for (const p of pieces) {
    await new Promise((r) => setTimeout(r, 3));
    const before = performance.now();
    lc.onResponseData(undefined as never, p);
    span.push([before, performance.now()]);
  }
  return span;
}

function feed(pieces: Uint8Array[]): Fed {
  const { call: lc, done } = call();
  for (const p of pieces) lc.onResponseData(undefined as never, Buffer.from(p));
  lc.onResponseEnd();
  return done();
}

const judged = ({ out, aborted }: Fed) => ({
  ok: out.ok, failure: out.failure, failureDetail: out.failureDetail, events: out.events, tokenEvents: out.tokenEvents,
  contentChunks: out.contentChunks, outputChars: out.outputChars, reply: out.reply, completionId: out.completionId, gaps: out.gaps.count, aborted: aborted > 0,
});

function splits(bytes: Uint8Array, rand: () => number, most: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const n = 1 + Math.floor(rand() * most);
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe('a stream read in batches is read as it came', () => {
  for (const [name, text] of Object.entries(STREAMS)) {
    it(`${name}: the same outcome whole, byte by byte and in random pieces`, () => {
      const bytes = Buffer.from(text);
      const whole = judged(feed([bytes]));
      const rand = seededRandom(name.length * 104729 + 3);
      const cuts = [Array.from(bytes, (b) => Uint8Array.of(b)), ...Array.from({ length: 20 }, () => splits(bytes, rand, 300))];
      for (const pieces of cuts) expect(judged(feed(pieces)), `${pieces.length} pieces`).toEqual(whole);
    });
  }

  it('the figures of the plain stream are what it holds (the batch reads every piece)', () => {
    const f = judged(feed(splits(Buffer.from(STREAMS['LF, 40 content chunks']!), seededRandom(5), 50)));
    expect(f).toMatchObject({ ok: true, events: 42, tokenEvents: 40, contentChunks: 40, gaps: 39, reply: words.join(''), aborted: false });
    const bad = judged(feed(splits(Buffer.from(STREAMS['an error event after 20 chunks']!), seededRandom(5), 50)));
    expect(bad).toMatchObject({ ok: false, failure: 'bad_body', contentChunks: 20, aborted: true });
    expect(bad.failureDetail).toMatch(/^error event in the stream/);
  });

  it('each event carries the time its piece came, not the time its batch was read', async () => {
    const { call: lc, done } = call();
    pastFirstPieces(lc);
    const pieces = [c({ role: 'assistant' }), c({ content: 'a' }), c({ content: 'b' }), c({ content: 'c' })].map((p) => Buffer.from(`${p}\n\n`));
    const span = await timedFeed(lc, pieces);
    await new Promise((r) => setTimeout(r, 3));
    lc.onResponseData(undefined as never, Buffer.from('data: [DONE]\n\n'));
    await new Promise((r) => setTimeout(r, 3));
    const ended: [number, number] = [performance.now(), 0];
    lc.onResponseEnd();
    ended[1] = performance.now();
    const { out } = done();
    expect(out.ok).toBe(true);
    const within = (t: number | undefined, [a, b]: [number, number]) => t !== undefined && t >= a && t <= b;
    expect(within(out.firstEventAt, span[0]!)).toBe(true);
    expect(within(out.firstContentAt, span[1]!)).toBe(true);
    expect(within(out.secondContentAt, span[2]!)).toBe(true);
    expect(within(out.lastContentAt, span[3]!)).toBe(true);
    expect(out.contentReads).toBe(3);
    expect(within(out.endAt, ended)).toBe(true);
  });

  it('a held piece judged ends the request at the time it came, not when its batch was read', async () => {
    const { call: lc, done } = call();
    pastFirstPieces(lc);
    const pieces = [c({ content: 'a' }), 'data: {"error":{"message":"overloaded"}}', c({ content: 'b' })].map((p) => Buffer.from(`${p}\n\n`));
    const span = await timedFeed(lc, pieces);
    await new Promise((r) => setTimeout(r, 3));
    lc.onResponseEnd();
    const { out } = done();
    expect(out).toMatchObject({ ok: false, failure: 'bad_body', contentChunks: 1 });
    expect(out.endAt >= span[1]![0] && out.endAt <= span[1]![1]).toBe(true);
  });

  it('a cancel reads the held pieces first: their figures stand beside the failure', () => {
    const { call: lc, done } = call();
    pastFirstPieces(lc);
    for (const w of words.slice(0, 5)) lc.onResponseData(undefined as never, Buffer.from(`${c({ content: w })}\n\n`));
    lc.cancel('timeout');
    const { out } = done();
    expect(out).toMatchObject({ ok: false, failure: 'timeout', events: 5, contentChunks: 5, tokenEvents: 5 });
    expect(out.firstContentAt).toBeDefined();
  });

  it('a client that goes away at its first token sees it as it comes, however long the stream ran before it', () => {
    let out: Outcome | undefined;
    const ctl = { abort() { ctl.aborted = true; }, aborted: false };
    const lc = new LeanCall({ seq: 0, route: 'chat', key: 'main', stream: true, path: '/', body: '{}', headers: {}, intendedAt: 0, sample: false, cancelAfter: 'first-token' }, (o) => { out = o; });
    lc.onRequestStart(ctl as never);
    lc.onResponseStart(ctl as never, 200, { 'content-type': 'text/event-stream' });
    pastFirstPieces(lc);
    pastFirstPieces(lc);
    lc.onResponseData(undefined as never, Buffer.from(`${c({ role: 'assistant' })}\n\n`));
    expect(out).toBeUndefined();
    lc.onResponseData(undefined as never, Buffer.from(`${c({ content: 'a' })}\n\n`));
    expect(out).toMatchObject({ failure: 'cancelled' });
    expect(out!.firstContentAt).toBeDefined();
    expect(ctl.aborted).toBe(true);
  });
});
