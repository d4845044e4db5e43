// The load driver's fast SSE path (load/engine/sse-scan.ts) must read every stream exactly as
// the strict reader (lib/http/sse-reader.ts) does: the same payloads, and a problem where
// the strict reader finds one. Each stream below is fed whole and in seeded random
// pieces (every split point matters: CR/LF pairs, multi-byte characters, the BOM),
// and the plain ones must stay on the fast path. Cost: well under a second.
import { describe, expect, it } from 'vitest';
import { parseSse } from '../../lib/http/sse-reader.ts';
import { seededRandom } from '../../lib/run/seeded-random.ts';
import { SseScan } from '../../load/engine/sse-scan.ts';

const chunk = (s: string) => `data: {"choices":[{"index":0,"delta":{"content":"${s}"}}]}`;
const PLAIN: Record<string, string> = {
  'LF': `${chunk('a')}\n\n${chunk('b')}\n\ndata: [DONE]\n\n`,
  'CRLF': `${chunk('a')}\r\n\r\n${chunk('b')}\r\n\r\ndata: [DONE]\r\n\r\n`,
  'mixed LF and CRLF': `${chunk('a')}\r\n\n${chunk('b')}\n\r\ndata: [DONE]\n\n`,
  'comments and extra blank lines': `: keep-alive\n\n: x\n${chunk('a')}\n\n\n\n:\ndata:[DONE]\n\n`,
  'multi-byte text': `${chunk('héllo ✓ 𝄞')}\n\ndata: [DONE]\n\n`,
  'empty data': 'data:\n\ndata: \n\ndata: [DONE]\n\n',
  'U+FFFD sent as text (valid UTF-8)': `${chunk('a \uFFFD b')}\n\ndata: [DONE]\n\n`,
};
const STRICT: Record<string, string | Uint8Array> = {
  'CR only': `${chunk('a')}\r\r${chunk('b')}\r\rdata: [DONE]\r\r`,
  'bare CR mid-stream': `${chunk('a')}\n\n${chunk('b')}\rdata: x\r\rdata: [DONE]\n\n`,
  'BOM': `\uFEFF${chunk('a')}\n\ndata: [DONE]\n\n`,
  'BOM later is not stripped': `${chunk('a')}\n\n\uFEFFdata: x\n\ndata: [DONE]\n\n`,
  'event field': `event: chunk\n${chunk('a')}\n\ndata: [DONE]\n\n`,
  'id and retry': `${chunk('a')}\n\nid: 7\nretry: 10\n${chunk('b')}\n\ndata: [DONE]\n\n`,
  'no data prefix': `{"choices":[]}\n\ndata: [DONE]\n\n`,
  'two data lines': `data: {"a":\ndata: 1}\n\ndata: [DONE]\n\n`,
  'single newlines': `${chunk('a')}\n${chunk('b')}\ndata: [DONE]\n`,
  'last event unterminated': `${chunk('a')}\n\ndata: [DONE]`,
  'last event without blank line': `${chunk('a')}\n\ndata: [DONE]\n`,
  'field "data" without colon': `data\n\ndata: [DONE]\n\n`,
  'invalid UTF-8': Buffer.concat([Buffer.from('data: {"x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n\ndata: [DONE]\n\n')]),
  'UTF-8-encoded surrogate': Buffer.concat([Buffer.from('data: {"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}\n\ndata: [DONE]\n\n')]),
  'overlong UTF-8': Buffer.concat([Buffer.from(`${chunk('a')}\n\ndata: {"x":"`), Buffer.from([0xc0, 0xaf]), Buffer.from('"}\n\ndata: [DONE]\n\n')]),
  'CR before a CRLF': `${chunk('a')}\r\n\r\ndata: x\r\r\n\r\ndata: [DONE]\r\n\r\n`,
  'bare CR inside a payload': `${chunk('a')}\n\ndata: x\ry\n\ndata: [DONE]\n\n`,
  'invalid UTF-8 in a comment': Buffer.concat([Buffer.from(`${chunk('a')}\n\n: `), Buffer.from([0xff]), Buffer.from('\ndata: [DONE]\n\n')]),
  'truncated UTF-8 at the end': Buffer.concat([Buffer.from(`${chunk('a')}\n\ndata: x`), Buffer.from([0xe2, 0x9c])]),
  'trailing comment (any tail is judged at the end)': `${chunk('a')}\n\ndata: [DONE]\n\n: bye\n`,
  'an event longer than 64 KiB': `${chunk('a')}\n\ndata: {"x":"${'y'.repeat(70_000)}"}\n\ndata: [DONE]\n\n`,
  'malformed field after events': `${chunk('a')}\n\n${chunk('b')}\n\nbad line\ndata: [DONE]\n\n`,
};

function scan(pieces: Uint8Array[]): { payloads: string[]; problems: string[]; strict: boolean; events: number } {
  const payloads: string[] = [];
  const s = new SseScan((d) => payloads.push(d), 100);
  for (const p of pieces) s.push(Buffer.from(p));
  s.end();
  return { payloads, problems: s.problems.map((p) => p.kind), strict: s.strict, events: s.events };
}

function splits(bytes: Uint8Array, rand: () => number, most = 12): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = 1 + Math.floor(rand() * most);
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

function check(name: string, input: string | Uint8Array, plain: boolean): void {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const expected = parseSse(bytes);
  const want = { payloads: expected.events.map((e) => e.data), problems: expected.problems.map((p) => p.kind), events: expected.events.length };
  const rand = seededRandom(name.length * 7919 + 1);
  // Long streams: a few splits into network-sized pieces (byte by byte would cost seconds).
  const runs = bytes.length > 4096
    ? [[bytes], ...Array.from({ length: 3 }, () => splits(bytes, rand, 4096))]
    : [[bytes], Array.from(bytes, (b) => Uint8Array.of(b)), ...Array.from({ length: 40 }, () => splits(bytes, rand))];
  for (const pieces of runs) {
    const got = scan(pieces);
    expect({ payloads: got.payloads, problems: got.problems, events: got.events }, `${name}, ${pieces.length} pieces`).toEqual(want);
    if (plain) expect(got.strict, `${name} stays on the fast path`).toBe(false);
  }
}

describe('load/engine/sse-scan.ts reads like lib/http/sse-reader.ts', () => {
  for (const [name, s] of Object.entries(PLAIN)) it(`plain stream, fast path: ${name}`, () => check(name, s, true));
  for (const [name, s] of Object.entries(STRICT)) it(`handed to the strict reader: ${name}`, () => check(name, s, false));
  it('plain streams with the defects the load self-tests inject are judged alike', () => {
    // stream-no-done, stream-chunk-not-json, stream-data-after-done: framing is plain, the payloads tell.
    check('no done', `${chunk('a')}\n\n`, true);
    check('not json', `${chunk('a')}\n\ndata: hello\n\ndata: [DONE]\n\n`, true);
    check('after done', `${chunk('a')}\n\ndata: [DONE]\n\n${chunk('b')}\n\n`, true);
  });
});

describe('GapTally (load/engine/histogram.ts): bounded per stream, same histogram as recording every gap', () => {
  it('100,000 gaps: few entries kept, identical percentiles, count, min and max', async () => {
    const { GapTally, LatencyHistogram } = await import('../../load/engine/histogram.ts');
    const rand = seededRandom(42);
    const tally = new GapTally();
    const direct = new LatencyHistogram();
    for (let i = 0; i < 100_000; i++) {
      const ms = i % 1000 === 0 ? 1000 + rand() * 500 : 45 + rand() * 10;
      tally.add(ms);
      direct.record(ms);
    }
    const viaTally = new LatencyHistogram();
    tally.recordInto(viaTally);
    expect(viaTally.summary()).toEqual(direct.summary());
    expect((tally as unknown as { counts: Map<number, number> }).counts.size).toBeLessThan(2000);
    // A stream's own p95 gap (sweep's per-request SLO): exact up to 64 gaps, then within the histogram's 0.1 %.
    const small = new GapTally();
    for (let i = 1; i <= 60; i++) small.add(i + 0.5);
    expect(small.percentileMs(95)).toBe(57.5);
    const long = new GapTally();
    for (let i = 1; i <= 200; i++) long.add(i);
    expect(Math.abs(long.percentileMs(95) - 190) / 190).toBeLessThan(0.001);
  });

  it('percentilesMs (one sort for requests.jsonl\'s three) gives each percentile by nearest rank, as percentileMs', async () => {
    const { GapTally } = await import('../../load/engine/histogram.ts');
    const rand = seededRandom(7);
    for (const n of [1, 2, 39, 64, 65, 300]) {
      const tally = new GapTally();
      const gaps: number[] = [];
      for (let i = 0; i < n; i++) {
        const ms = i % 7 === 0 ? 0 : 40 + rand() * 20;
        tally.add(ms);
        gaps.push(ms);
      }
      const sorted = [...gaps].sort((a, b) => a - b);
      const ps = [50, 95, 100];
      const got = tally.percentilesMs(ps);
      expect(got).toEqual(ps.map((p) => tally.percentileMs(p)));
      if (n <= 64) expect(got).toEqual(ps.map((p) => sorted[Math.max(1, Math.ceil((p / 100) * n)) - 1]));
      else for (const [i, p] of ps.entries()) expect(Math.abs(got[i]! - sorted[Math.max(1, Math.ceil((p / 100) * n)) - 1]!)).toBeLessThanOrEqual(0.001 * 60 + 0.001);
    }
    expect(new GapTally().percentilesMs([50, 95, 100])).toEqual([0, 0, 0]);
  });
});
