// fuzz/generators.ts: the shapes that crash real servers are generated on purpose, and 200
// random requests meet each of them. The first 200 cases of a fixed seed are exactly the
// requests the random phase of a run with that FUZZ_SEED sends when it gets 200 (after the
// coverage phase: FUZZ_RUNS=376 against the embedded reference; caseAt(caseSeed(seed, i))), so
// counting them is counting what the random phase sends.
import { describe, expect, it } from 'vitest';
import { caseArbitrary, KNOWN_FIELDS, levelOf, SHAPES, type CaseKind, type FuzzCase } from '../../fuzz/generators.ts';
import { caseAt, caseSeed } from '../../fuzz/campaign.ts';
import { INVALID_CLAUSE } from '../../fuzz/oracles.ts';

const CAP = 64 * 1024; // FUZZ_MAX_BODY_BYTES' default
const BRAIN = '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c';
const arb = caseArbitrary({ models: ['svc-auto', 'svc'], brainId: BRAIN, maxBodyBytes: CAP });
const KINDS: CaseKind[] = ['valid', 'edge', 'no-model', 'bad-messages', 'bad-message', 'bad-stream', 'not-json'];
/** The seed of selftest/e2e/fuzz-defects.test.ts, and 200 random requests. */
const SEED = 7;
const BUDGET = 200;

const firstCases = (seed: number, n = BUDGET): FuzzCase[] => Array.from({ length: n }, (_, i) => caseAt(arb, caseSeed(seed, i), '0'));
const count = <T>(xs: T[], key: (x: T) => string | undefined): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const x of xs) { const k = key(x); if (k !== undefined) out[k] = (out[k] ?? 0) + 1; }
  return out;
};
/** The field a shaped case changed, from its label ("null: path", "<type> at path", "long string: path"). */
function fieldOf(c: FuzzCase): string | undefined {
  if (c.shape === 'null-field') return c.label.replace(/^null: /, '');
  if (c.shape === 'wrong-type') return c.label.replace(/^\w+ at /, '');
  if (c.shape === 'long-string') return c.label.replace(/^long string: /, '');
  return undefined;
}
/** Every value found at `path` ("messages[].content[].text") in `v`. */
function valuesAt(v: unknown, path: string): unknown[] {
  const steps = path.split(/\.|(?=\[\])/);
  let here: unknown[] = [v];
  for (const s of steps) {
    here = here.flatMap((x) => (s === '[]' ? (Array.isArray(x) ? x : []) : x && typeof x === 'object' && !Array.isArray(x) && s in x ? [(x as Record<string, unknown>)[s]] : []));
  }
  return here;
}
const longestString = (v: unknown): number => (typeof v === 'string' ? v.length : v && typeof v === 'object' ? Math.max(0, ...Object.values(v).map(longestString)) : 0);

describe('the first 200 cases of a fixed seed meet every kind', () => {
  const cases = firstCases(SEED);
  const kinds = count(cases, (c) => c.kind);
  const shapes = count(cases, (c) => c.shape);
  const levels = count(cases.filter((c) => c.shape === 'null-field' || c.shape === 'wrong-type'), (c) => `level ${levelOf(fieldOf(c)!)}`);
  // Shown when a run fails, and as the figures the report quotes.
  const figures = JSON.stringify({ kinds, shapes, levels });

  it('every kind of case (valid, edge and each invalid kind of CHAT-2..6)', () => {
    for (const k of KINDS) expect(kinds[k] ?? 0, `${k}: ${figures}`).toBeGreaterThanOrEqual(3);
  });

  it('every shape, at least 8 times each', () => {
    for (const s of SHAPES) expect(shapes[s] ?? 0, `${s}: ${figures}`).toBeGreaterThanOrEqual(8);
  });

  it('null and wrong types at every nesting level of the known fields', () => {
    const all = [...new Set(KNOWN_FIELDS.map((f) => levelOf(f.path)))];
    expect(all.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    for (const l of all) expect(levels[`level ${l}`] ?? 0, `level ${l}: ${figures}`).toBeGreaterThanOrEqual(2);
    const nulls = cases.filter((c) => c.shape === 'null-field');
    expect(new Set(nulls.map((c) => levelOf(fieldOf(c)!))).size, figures).toBeGreaterThanOrEqual(5);
    const types = count(cases.filter((c) => c.shape === 'wrong-type'), (c) => c.label.split(' ')[0]);
    for (const t of ['boolean', 'number', 'string', 'array', 'object']) expect(types[t] ?? 0, `wrong type ${t}: ${JSON.stringify(types)}`).toBeGreaterThanOrEqual(1);
  });

  it('message content far longer than 6,000 characters, up to the body cap', () => {
    const long = cases.filter((c) => c.shape === 'long-content').map((c) => longestString(c.body));
    expect(long.filter((n) => n > 6000).length, `long content lengths ${long.join(', ')}`).toBeGreaterThanOrEqual(5);
    expect(Math.max(...long), 'the longest reaches most of the body cap').toBeGreaterThan(CAP * 0.75);
  });

  it('long strings in several string fields, and every body within the cap', () => {
    const fields = count(cases.filter((c) => c.shape === 'long-string'), fieldOf);
    expect(Object.keys(fields).length, JSON.stringify(fields)).toBeGreaterThanOrEqual(5);
    for (const c of cases) expect(Buffer.byteLength(c.raw ?? JSON.stringify(c.body)), c.label).toBeLessThanOrEqual(CAP);
  });

  it('every shape on other seeds too (the weights, not one lucky seed)', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const s = count(firstCases(seed), (c) => c.shape);
      for (const shape of SHAPES) expect(s[shape] ?? 0, `seed ${seed}: ${JSON.stringify(s)}`).toBeGreaterThanOrEqual(5);
    }
  });
});

describe('the catalog of known fields', () => {
  const base = () => ({ model: 'svc-auto', messages: [{ role: 'user', content: 'hello' }] });
  const WRONG: Record<string, unknown> = { null: null, boolean: true, number: 1.5, string: 'x', array: [1], object: { a: 1 } };

  it('puts null, each wrong type and a long string exactly at each field, at every level', () => {
    for (const f of KNOWN_FIELDS) {
      for (const [type, value] of Object.entries(WRONG)) {
        if (f.types.includes(type as never)) continue;
        const body: Record<string, unknown> = base();
        f.set(body, value, 0);
        expect(valuesAt(body, f.path), `${type} at ${f.path}`).toContainEqual(value);
      }
      if (f.types.includes('string')) {
        const body: Record<string, unknown> = base();
        f.set(body, 'y'.repeat(10_000), 0);
        expect(valuesAt(body, f.path), `long string at ${f.path}`).toContainEqual('y'.repeat(10_000));
      }
    }
  });

  it('judges each change by the clause that rules it', () => {
    const kind = (path: string, v: unknown) => KNOWN_FIELDS.find((f) => f.path === path)!.kind(v);
    expect(kind('model', null)).toBe('no-model');
    expect(kind('model', 'x'.repeat(5000))).toBe('edge'); // an unknown model: CHAT-7's, not CHAT-2's
    expect(kind('messages', 'hi')).toBe('bad-messages');
    expect(kind('stream', 'yes')).toBe('bad-stream');
    expect(kind('stream', null)).toBe('edge');
    expect(kind('messages[].content', 42)).toBe('bad-message');
    expect(kind('messages[].content', { text: 'hi' })).toBe('bad-message');
    expect(kind('messages[].content', null)).toBe('edge');
    expect(kind('messages[].content[].text', 7)).toBe('edge');
    expect(kind('stream_options.include_usage', 'yes')).toBe('valid'); // CHAT-8: honoured, ignored or 400
    expect(kind('temperature', null)).toBe('valid');
    // Each invalid kind a field can yield is one the oracles rule on /chat/completions.
    for (const f of KNOWN_FIELDS) for (const v of Object.values(WRONG)) {
      const k = f.kind(v);
      expect(k === 'valid' || k === 'edge' || INVALID_CLAUSE[k] !== undefined, `${f.path}: ${k}`).toBe(true);
    }
  });

  it('invalid kinds go to /chat/completions only; the brain route never carries a model', () => {
    for (const c of firstCases(SEED, 600)) {
      if (INVALID_CLAUSE[c.kind]) expect(c.route, c.label).toBe('chat');
      if (c.route === 'brain') expect(c.body && typeof c.body === 'object' && 'model' in c.body, c.label).toBe(false);
    }
  });
});
