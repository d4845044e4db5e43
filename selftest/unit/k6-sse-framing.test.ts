// One SSE reader for Node and k6: the k6 scripts bundle the framing core of
// lib/http/sse-reader.ts (lib/spec/sse-framing.ts) through load/k6/lib/sse.ts. Here that module is
// bundled the way load/k6/build.ts bundles the scripts (esbuild, platform neutral,
// ES2017) and run in a bare JavaScript context with no Node or DOM APIs (no TextDecoder,
// TextEncoder or Buffer: k6 has none of them), then fed the same byte sequences as the
// Node reader: both must give the same events, problems and stats.
import { beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { createContext, runInContext } from 'node:vm';
import { join } from 'node:path';
import { SSE_CASES as CASES, concat, nodeFraming as node } from '../support/sse-cases.ts';
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

/** The k6 reader on what k6 holds: text (the whole body decoded, or text pieces). */
function k6(text: string | string[]) {
  const r = new k6sse.SseTextReader(5);
  const events = (typeof text === 'string' ? [text] : text).flatMap((t) => r.push(t));
  r.end();
  // Plain objects out of the other context, so toEqual compares values, not prototypes.
  return JSON.parse(JSON.stringify({ events, problems: r.problems, stats: r.stats })) as ReturnType<typeof node>;
}

const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

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
