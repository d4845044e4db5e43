// The load driver's chunk parser (load/engine/chunk-parser.ts) must give what JSON.parse
// gives for every payload of a stream, in order, and throw where JSON.parse throws: a
// payload it reads from the previous one's parse is no less judged. Streams are built
// from one chunk shape with changing text (where the reuse pays) and then disturbed:
// text with quotes, escapes and controls, changed fields, spacing, duplicate keys, a
// second choice, broken JSON. fast-check, seeded: the same cases every run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkParser } from '../../load/engine/chunk-parser.ts';

/** Parses each payload with both and compares at once (the parser reuses its object). */
function agree(payloads: string[]): number {
  const p = new ChunkParser();
  for (const d of payloads) {
    let want: unknown;
    let wantErr = false;
    try {
      want = JSON.parse(d);
    } catch {
      wantErr = true;
    }
    if (wantErr) expect(() => p.parse(d), d).toThrow(SyntaxError);
    else expect(structuredClone(p.parse(d)), d).toStrictEqual(want);
  }
  return p.reused;
}

const chunkOf = (field: string, text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { [field]: text }, finish_reason: null }], ...extra });

describe('ChunkParser', () => {
  it('reads a plain stream from its template after the first text chunks', () => {
    const payloads = [
      JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }),
      ...['Hel', 'lo', ' "wor"', 'ld\n', '\\', '\u0001', 'é ✓ 𝄞', '', '\u2028'].map((t) => chunkOf('content', t)),
      JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      chunkOf('content', 'after the finish chunk'),
    ];
    expect(agree(payloads)).toBeGreaterThanOrEqual(8);
  });

  it('reads reasoning fields too', () => {
    expect(agree(['a', 'b', 'c'].map((t) => chunkOf('reasoning_content', t)))).toBe(2);
    expect(agree(['a', 'b', 'c'].map((t) => chunkOf('reasoning', t)))).toBe(2);
  });

  it('never reuses a payload whose text is not one string token', () => {
    const base = chunkOf('content', 'x');
    const broken = [
      base.replace('"x"', '"a"b"'), // an unescaped quote: two tokens
      base.replace('"x"', '"a\\q"'), // a bad escape
      base.replace('"x"', '"a\tb"'), // a raw control character
      base.replace('"x"', '"a\\"'), // the escape eats the closing quote
      base.replace('"x"', '"a","content":"b"'), // a duplicate key sneaked in: JSON.parse takes the last
      base.replace('"x"', '"a"}],"x":[{"y":"'), // the "text" closes the structure
    ];
    for (const d of broken) agree([base, chunkOf('content', 'y'), d, chunkOf('content', 'z')]);
  });

  it('does not take a look-alike field for the text', () => {
    // The real text is spaced (not found by its JSON.stringify form); another member looks like it.
    const odd = (t: string) => `{"choices":[{"delta":{"content" : "${t}"}}],"x":{"content":"${t}"}}`;
    const p = new ChunkParser();
    for (const t of ['a', 'b', 'c']) expect(structuredClone(p.parse(odd(t)))).toStrictEqual(JSON.parse(odd(t)));
    expect(p.reused).toBe(0);
    // Only the look-alike changes: read from a template on it, the text would seem to change too.
    const q = new ChunkParser();
    const oddX = (t: string, x: string) => `{"choices":[{"delta":{"content" : "${t}"}}],"x":{"content":"${x}"}}`;
    for (const d of [oddX('a', 'a'), oddX('a', 'zzz'), oddX('a', 'y')]) expect(structuredClone(q.parse(d)), d).toStrictEqual(JSON.parse(d));
  });

  it('agrees with JSON.parse on generated streams (fast-check, seeded)', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('"', '\\', '\\"', '\n', '\u0000', '}', '","content":"', ''));
    const shape = fc.record({
      field: fc.constantFrom('content', 'reasoning', 'reasoning_content'),
      extra: fc.dictionary(fc.constantFrom('usage', 'system_fingerprint', 'obfuscation', 'content'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
      space: fc.constantFrom(0, 1, 2),
    });
    const step = fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('text' as const), text }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('shape' as const), shape, text }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('mutate' as const), at: fc.nat(), insert: fc.constantFrom('"', '\\', '}', ',', ' ', '\u0001', 'x', '') }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), json: fc.json({ maxDepth: 3 }) }) },
    );
    fc.assert(
      fc.property(shape, fc.array(step, { minLength: 1, maxLength: 30 }), (first, steps) => {
        let s = first;
        const make = (t: string) => JSON.stringify({ id: 'chatcmpl-x', choices: [{ index: 0, delta: { [s.field]: t } }], ...s.extra }, null, s.space);
        let last = make('start');
        const payloads = [last];
        for (const st of steps) {
          if (st.kind === 'text') last = make(st.text);
          else if (st.kind === 'shape') { s = st.shape; last = make(st.text); }
          else if (st.kind === 'mutate') { const i = st.at % (last.length + 1); last = last.slice(0, i) + st.insert + last.slice(i + (st.insert ? 0 : 1)); }
          else last = st.json;
          payloads.push(last);
        }
        agree(payloads);
      }),
      { seed: 37, numRuns: 400 },
    );
  });
});
