// One SSE reader for Node and k6: the k6 scripts bundle the framing core of
// lib/sse-reader.ts (lib/sse-framing.ts) through load/k6/lib/sse.ts. Here that module is
// bundled the way load/k6/build.ts bundles the scripts (esbuild, platform neutral,
// ES2017) and run in a bare JavaScript context with no Node or DOM APIs (no TextDecoder,
// TextEncoder or Buffer: k6 has none of them), then fed the same byte sequences as the
// Node reader: both must give the same events, problems and stats.
import { beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { createContext, runInContext } from 'node:vm';
import { join } from 'node:path';
import { SseReader } from '../../lib/sse-reader.ts';
import { K6_DIR, ROOT_DIR, TARGET } from '../../load/k6/build.ts';

interface K6Sse {
  parseSse(body: string): { events: unknown[]; problems: unknown[]; unterminated: boolean };
  SseTextReader: new (max?: number) => { push(t: string): unknown[]; end(): unknown[]; problems: unknown[]; stats: unknown };
}

let k6sse: K6Sse;
beforeAll(async () => {
  const r = await build({
    entryPoints: [join(K6_DIR, 'lib', 'sse.ts')],
    bundle: true, format: 'iife', globalName: 'chatgateSse', platform: 'neutral', target: TARGET, write: false, logLevel: 'silent', absWorkingDir: ROOT_DIR,
  });
  const code = r.outputFiles[0]!.text;
  expect(code).not.toMatch(/TextDecoder|TextEncoder|Buffer|require\(/);
  // A context with only the ECMAScript built-ins: what k6's runtime offers, give or take.
  const ctx = createContext({});
  expect(runInContext('typeof TextDecoder + typeof Buffer + typeof process', ctx)).toBe('undefinedundefinedundefined');
  runInContext(code, ctx);
  k6sse = runInContext('chatgateSse', ctx) as K6Sse;
});

const enc = (s: string) => new TextEncoder().encode(s);
const bytes = (...parts: Array<string | number[]>) => parts.map((p) => (typeof p === 'string' ? enc(p) : Uint8Array.from(p)));
const concat = (pieces: Uint8Array[]) => {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) { out.set(p, at); at += p.length; }
  return out;
};

/** The Node reader on byte pieces. */
function node(pieces: Uint8Array[]) {
  const r = new SseReader({ maxProblemsPerKind: 5 });
  const events = pieces.flatMap((p) => r.push(p));
  r.end();
  return { events, problems: r.problems, stats: r.stats };
}

/** The k6 reader on what k6 holds: text (the whole body decoded, or text pieces). */
function k6(text: string | string[]) {
  const r = new k6sse.SseTextReader(5);
  const events = (typeof text === 'string' ? [text] : text).flatMap((t) => r.push(t));
  r.end();
  // Plain objects out of the other context, so toEqual compares values, not prototypes.
  return JSON.parse(JSON.stringify({ events, problems: r.problems, stats: r.stats })) as ReturnType<typeof node>;
}

const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

const CASES: Array<{ name: string; pieces: Uint8Array[] }> = [
  { name: 'LF line ends', pieces: bytes('data: {"a":1}\n\ndata: [DONE]\n\n') },
  { name: 'a leading BOM (stripped once; a BOM on a later line is kept)', pieces: bytes([0xef, 0xbb, 0xbf], 'data: one\n\n', [0xef, 0xbb, 0xbf], 'data: two\n\ndata: three\n\n') },
  { name: 'CRLF line ends', pieces: bytes('data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n') },
  { name: 'lone CR line ends', pieces: bytes('data: {"a":1}\r\rdata: [DONE]\r\r') },
  { name: 'CR at the end of a piece, LF at the start of the next', pieces: bytes('data: x\r', '\n\r', '\ndata: y\r', '\r') },
  { name: 'comments, keep-alive blocks and a comment-only stream part', pieces: bytes(': ping\n\n:\ndata: a\n: inside\n\n: tail\n') },
  { name: 'a character split across pieces (UTF-8)', pieces: bytes('data: h', [0xc3], [0xa9, 0xe2, 0x82], [0xac], ' 😀 ', [0xf0, 0x9f], [0x98, 0x80], '\n\n') },
  { name: 'multi-line data, empty data lines, no space after the colon', pieces: bytes('data: line 1\ndata:line 2\ndata\ndata: \n\n') },
  { name: 'event, id (persisting), retry, unknown fields', pieces: bytes('event: delta\nid: 7\nretry: 1500\nfoo: bar\ndata: x\n\ndata: y\n\nid\nretry: soon\ndata: z\n\n') },
  { name: 'an event with no data line is not dispatched', pieces: bytes('event: ping\n\nid: 3\n\ndata: real\n\n') },
  { name: 'an unterminated last event', pieces: bytes('data: {"a":1}\n\ndata: {"b":2}\n') },
  { name: 'an incomplete last line', pieces: bytes('data: {"a":1}\n\ndata: {"b"') },
  { name: 'JSON without data: (malformed field), repeated past the problem cap', pieces: bytes('{"a":1}\n\n'.repeat(8), 'data: ok\n\n') },
  { name: 'a field name with a NUL-bearing id and a colon-only value', pieces: bytes('id: a\u0000b\ndata: :\n\n') },
];

describe('one SSE framing core: the k6 bundle and the Node reader agree byte for byte', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const want = plain(node(c.pieces));
      // ignoreBOM: k6 hands the body over as sent, BOM included (Go strings strip nothing).
      const whole = new TextDecoder('utf-8', { ignoreBOM: true }).decode(concat(c.pieces));
      // k6/http: the whole body as one string.
      expect(k6(whole)).toEqual(want);
      // xk6-sse and other pieces of text: split at every position (CR/LF across pieces included).
      for (let cut = 1; cut < whole.length; cut++) expect(k6([whole.slice(0, cut), whole.slice(cut)]), `cut at ${cut}`).toEqual(want);
    });
  }

  it('the cases exercise what they name (the comparison is not vacuous)', () => {
    const byName = Object.fromEntries(CASES.map((c) => [c.name, node(c.pieces)]));
    expect(byName['a leading BOM (stripped once; a BOM on a later line is kept)']!.events.map((e) => e.data)).toEqual(['one', 'three']);
    expect(byName['CRLF line ends']!.stats.lineEnds.crlf).toBe(4);
    expect(byName['lone CR line ends']!.stats.lineEnds.cr).toBe(4);
    expect(byName['a character split across pieces (UTF-8)']!.events[0]!.data).toBe('hé€ 😀 😀');
    expect(byName['multi-line data, empty data lines, no space after the colon']!.events[0]!.data).toBe('line 1\nline 2\n\n');
    expect(byName['an unterminated last event']!.problems.map((p) => p.kind)).toEqual(['unterminated-event']);
    expect(byName['JSON without data: (malformed field), repeated past the problem cap']!.problems).toHaveLength(6);
  });

  it('parseSse (what chat-stream uses) flags an unterminated stream and keeps the events before it', () => {
    const r = k6sse.parseSse('data: {"a":1}\n\ndata: [DONE]');
    expect(plain(r.events)).toHaveLength(1);
    expect(r.unterminated).toBe(true);
    expect(k6sse.parseSse('\ufeffdata: [DONE]\r\n\r\n').unterminated).toBe(false);
  });
});
