// fuzz/coverage.ts: the coverage phase is one fixed list (no seed), it holds every probe
// the issue names for every known field on the plain and the streaming path, packs only
// probes a pack can carry, stays within the body cap, and a replay id gives the request back.
import { describe, expect, it } from 'vitest';
import { KNOWN_FIELDS } from '../../fuzz/generators.ts';
import { coverageCaseAt, coverageCases, coverageProbes, PACK_SIZE, RANGES, TEXTS } from '../../fuzz/coverage.ts';
import { randomBudget } from '../../fuzz/campaign.ts';
import { FUZZ_DEFAULT_RUNS } from '../../lib/run/config.ts';

const CAP = 64 * 1024;
const O = { models: ['svc-auto', 'svc'], brainId: '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c', maxBodyBytes: CAP };
const probes = coverageProbes(O);
const cases = coverageCases(O);
const names = (route: string, stream: boolean) => new Set(probes.filter((p) => p.route === route && (p.stream === stream || p.name.startsWith('stream='))).map((p) => p.name));

describe('the coverage phase', () => {
  it('is one list, whatever the seed: built twice, the same requests', () => {
    expect(JSON.stringify(coverageCases(O).map((c) => c.case))).toBe(JSON.stringify(cases.map((c) => c.case)));
    expect(cases.map((c) => c.index)).toEqual(cases.map((_, i) => i));
    // The size the observations print: fixed for these models, brain and cap.
    expect(cases.length).toBeGreaterThan(100);
    expect(cases.length).toBeLessThan(FUZZ_DEFAULT_RUNS);
  });

  it('every known field, plain and streaming: null, each wrong type, empty values, texts, a long string; ranges at both ends and beyond', () => {
    for (const stream of [false, true]) {
      const have = names('chat', stream);
      // stream_options asks for a stream: its probes are on the streaming path only.
      for (const f of KNOWN_FIELDS.filter((x) => stream || !x.path.startsWith('stream_options'))) {
        for (const v of ['null', 'empty-string', 'empty-array', 'empty-object']) expect(have, `${f.path}=${v} (stream ${stream})`).toContain(`${f.path}=${v}`);
        if (!f.types.includes('boolean')) expect(have).toContain(`${f.path}=boolean`);
        if (!f.types.includes('number')) expect(have).toContain(`${f.path}=number`);
        if (f.types.includes('string')) {
          expect(have).toContain(`${f.path}=long-string`);
          expect([...have].some((n) => n.startsWith(`${f.path}=text:`)), `${f.path} text`).toBe(true);
        }
        if (f.path.includes('.') || f.path.includes('[')) {
          // Missing from a container that then is empty is the same body as the empty container (sent once).
          const parent = f.path.replace(/(\.[^.[\]]+|\[\])$/, '');
          expect([`${f.path}=missing`, `${parent}=empty-object`, `${parent}=empty-array`].some((n) => have.has(n)), `${f.path}=missing`).toBe(true);
        }
      }
      for (const [field, r] of Object.entries(RANGES)) {
        expect(have).toContain(`${field}=min`);
        expect(have).toContain(`${field}=below-min`);
        expect(have).toContain(r.max === undefined ? `${field}=int32-max` : `${field}=max`);
        expect(have).toContain(r.max === undefined ? `${field}=above-int32` : `${field}=above-max`);
      }
      for (const cls of Object.keys(TEXTS)) expect(have).toContain(`messages[].content=text:${cls}`);
      for (const s of ['model=missing', 'messages=missing', 'messages[].role=missing', 'messages=long-conversation']) expect(have).toContain(s);
    }
    // The brain route: what is inside messages (its model is in the path).
    const brain = names('brain', false);
    expect(brain).toContain('messages[].role="tool"');
    expect([...brain].every((n) => n.startsWith('messages'))).toBe(true);
    expect(probes.filter((p) => p.kind === 'not-json').length).toBeGreaterThanOrEqual(10);
  });

  it('the text classes hold what they are named for', () => {
    expect(TEXTS.separators).toMatch(/\u2028/);
    expect(TEXTS.separators).toMatch(/\u2029/);
    expect(TEXTS.nul).toContain('\u0000');
    expect(TEXTS.combining).toMatch(/[\u0300-\u036f]/);
    expect(TEXTS.emoji).toMatch(/\p{Extended_Pictographic}/u);
    expect(Buffer.byteLength(TEXTS.utf8)).toBeGreaterThan(TEXTS.utf8.length);
  });

  it('packs hold one kind, route and path, distinct top-level keys, at most PACK_SIZE probes; invalid kinds alone', () => {
    for (const c of cases) {
      expect(c.probes.length).toBeLessThanOrEqual(PACK_SIZE);
      const [p0] = c.probes;
      for (const p of c.probes) {
        expect([p.kind, p.route, p.stream]).toEqual([p0!.kind, p0!.route, p0!.stream]);
        if (c.probes.length > 1) expect(p.kind === 'valid' || p.kind === 'edge').toBe(true);
      }
      const keys = c.probes.flatMap((p) => p.keys);
      expect(new Set(keys).size).toBe(keys.length);
      expect(c.case.kind).toBe(p0!.kind);
      if (c.case.body !== undefined && !Array.isArray(c.case.body)) expect(((c.case.body as { stream?: unknown }).stream === true)).toBe(p0!.stream);
      const bytes = c.case.raw !== undefined ? Buffer.byteLength(c.case.raw) : Buffer.byteLength(JSON.stringify(c.case.body));
      expect(bytes).toBeLessThanOrEqual(CAP);
    }
    // Every probe is sent: none is left out of the packs (a pack over the cap is not built).
    const key = (p: (typeof probes)[number]) => `${p.route} ${p.stream} ${p.name} ${JSON.stringify(p.build())}`;
    expect(cases.flatMap((c) => c.probes.map(key)).sort()).toEqual(probes.map(key).sort());
    // The message content's long string reaches the cap (within the frame).
    const long = cases.find((c) => c.probes.length === 1 && c.probes[0]!.name === 'messages[].content=long-string' && c.case.route === 'chat');
    expect(Buffer.byteLength(JSON.stringify(long!.case.body))).toBeGreaterThan(CAP - 64);
  });

  it('a replay id gives the request back: the pack, one probe, one probe at a size', () => {
    const pack = cases.find((c) => c.probes.length > 2)!;
    expect(coverageCaseAt(cases, pack.index, 'c')).toEqual(pack.case);
    const alone = coverageCaseAt(cases, pack.index, 'c:1');
    expect(alone.label).toBe(`coverage: ${pack.probes[1]!.name}`);
    const sized = cases.find((c) => c.probes[0]!.name === 'messages=long-conversation')!;
    const at = coverageCaseAt(cases, sized.index, 'c:0:33');
    expect((at.body as { messages: unknown[] }).messages).toHaveLength(33);
    expect(() => coverageCaseAt(cases, cases.length, 'c')).toThrow(/coverage phase has/);
  });

  it('the random phase gets what is left of FUZZ_RUNS, never less than a quarter', () => {
    expect(randomBudget(200, 170)).toBe(50);
    expect(randomBudget(1000, 170)).toBe(830);
    expect(randomBudget(10, 170)).toBe(3);
  });
});
