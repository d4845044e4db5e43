// Byte sequences that exercise the SSE framing rules, shared by the self-tests that feed
// the Node reader (lib/http/sse-reader.ts) and the k6 side of it (load/k6/lib/sse.ts) the same
// bytes: selftest/unit/k6-sse-framing.test.ts (k6's code in a bare JavaScript context)
// and selftest/e2e/k6-run.test.ts (in a real k6, over HTTP).
import { SseReader } from '../../lib/http/sse-reader.ts';

export const enc = (s: string) => new TextEncoder().encode(s);
export const bytes = (...parts: Array<string | number[]>) => parts.map((p) => (typeof p === 'string' ? enc(p) : Uint8Array.from(p)));
export const concat = (pieces: Uint8Array[]) => {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) { out.set(p, at); at += p.length; }
  return out;
};

/** The Node reader on byte pieces. */
export function nodeFraming(pieces: Uint8Array[]) {
  const r = new SseReader({ maxProblemsPerKind: 5 });
  const events = pieces.flatMap((p) => r.push(p));
  r.end();
  return { events, problems: r.problems, stats: r.stats };
}

export const SSE_CASES: Array<{ name: string; pieces: Uint8Array[] }> = [
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

