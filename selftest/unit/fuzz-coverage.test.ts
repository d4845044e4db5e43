// fuzz/coverage.ts: the coverage phase is one fixed list (no seed), it holds every probe
// the issue names for every known field on the plain and the streaming path, packs only
// probes a pack can carry, stays within the body cap, and a replay id gives the request back.
import { describe, expect, it } from 'vitest';
import { KNOWN_FIELDS } from '../../fuzz/generators.ts';
import { ARRAY_MAX, arrayLengths, coverageCaseAt, coverageCases, coverageProbes, PACK_SIZE, RANGES, SWEPT_LENGTHS, TEXTS, UNDOCUMENTED_MAX_LENGTH, UNUSUAL_KEYS } from '../../fuzz/coverage.ts';
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

  it('an invalid kind only where its clause\'s words forbid the value (CHAT-2..CHAT-6); anything else is judged by ERR-* or CHAT-8', () => {
    const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
    const forbids: Record<string, (b: Record<string, unknown>) => boolean> = {
      // CHAT-2: missing model, or not a string. CHAT-3: missing messages, or not an array.
      'no-model': (b) => !('model' in b) || typeof b.model !== 'string',
      'bad-messages': (b) => !('messages' in b) || !Array.isArray(b.messages),
      // CHAT-4: a message without role, or content a number or an object without parts.
      'bad-message': (b) => (b.messages as unknown[]).some((m) => isObject(m) && (!('role' in m) || typeof m.content === 'number' || isObject(m.content))),
      // CHAT-5: stream not a boolean.
      'bad-stream': (b) => 'stream' in b && typeof b.stream !== 'boolean',
    };
    for (const p of probes) {
      const { body, raw } = p.build();
      if (p.kind === 'not-json') { expect(() => JSON.parse(raw!), p.name).toThrow(); continue; }
      if (forbids[p.kind]) expect(forbids[p.kind]!(body as Record<string, unknown>), `${p.name} is ${p.kind}`).toBe(true);
    }
    // An empty messages array is an array: no clause forbids it.
    expect(probes.filter((p) => p.name === 'messages=empty-array').map((p) => `${p.stream} ${p.kind}`)).toEqual(['false edge', 'true edge']);
  });

  it('array fields at every length up to their maximum and one past it; unknown keys of each unusual shape at each object level, alone', () => {
    expect(arrayLengths('stop')).toEqual([0, 1, 2, 3, 4, 5]);
    expect(arrayLengths('tools')).toEqual([...Array.from({ length: SWEPT_LENGTHS + 1 }, (_, k) => k), ARRAY_MAX.tools, ARRAY_MAX.tools! + 1]);
    expect(arrayLengths('messages[].content')).toHaveLength(UNDOCUMENTED_MAX_LENGTH + 2);
    for (const stream of [false, true]) {
      const have = names('chat', stream);
      // A length may be another probe's body too (stop of one item, the ordinary one message): sent once, under either name.
      const bodies = probes.filter((p) => p.route === 'chat' && p.stream === stream && p.kind !== 'not-json').map((p) => p.build().body as Record<string, unknown>);
      const lengthsOf = (b: Record<string, unknown>, path: string): number[] => {
        const [top, inner] = path.split('[].');
        const v = b[top!];
        if (!Array.isArray(v)) return [];
        return inner ? v.map((m) => (m as Record<string, unknown>)?.[inner]).filter(Array.isArray).map((a) => a.length) : [v.length];
      };
      for (const path of ['messages', 'stop', 'tools', 'messages[].content', 'messages[].tool_calls']) {
        const sentAt = new Set(bodies.flatMap((b) => lengthsOf(b, path)));
        for (const k of arrayLengths(path)) expect(sentAt.has(k), `${path} of length ${k} (stream ${stream})`).toBe(true);
        expect([...have].filter((n) => n.startsWith(`${path}=length:`)).length).toBeGreaterThan(arrayLengths(path).length - 3);
      }
      for (const level of ['(body)', 'response_format', 'tools[]', 'tools[].function', 'tools[].function.parameters', 'messages[]', 'messages[].content[]', 'messages[].content[].image_url', 'messages[].tool_calls[]', 'messages[].tool_calls[].function']) {
        for (const shape of Object.keys(UNUSUAL_KEYS)) expect(have, `${level} ${shape}`).toContain(`${level}=unusual-key:${shape}`);
      }
    }
    expect(names('chat', true)).toContain('stream_options=unusual-key:proto');
    expect(names('brain', false)).toContain('messages[]=unusual-key:dollar');
    // Each probe's length and key arrive in the request its pack sends: an own "__proto__", a tools array sent whole.
    const sent = (name: string) => cases.find((c) => c.probes.some((p) => p.name === name) && c.case.route === 'chat' && !c.probes[0]!.stream)!;
    const proto = JSON.parse(JSON.stringify(sent('(body)=unusual-key:proto').case.body)) as object;
    expect(Object.keys(proto)).toContain('__proto__');
    expect(JSON.stringify(sent('tools=length:7').case.body)).toMatch(/"tool_6"/);
    expect((sent('tools=length:7').case.body as { tools: unknown[] }).tools).toHaveLength(7);
  });

  it('every probe of a pack is in the request it sends (no probe overwrites another\'s field)', () => {
    for (const c of cases.filter((x) => x.probes.length > 1)) {
      const body = c.case.body as Record<string, unknown>;
      for (const p of c.probes) {
        const own = p.build().body as Record<string, unknown>;
        for (const k of p.keys) expect(JSON.stringify(Object.getOwnPropertyDescriptor(body, k)?.value), `${p.name} in pack ${c.index}`).toBe(JSON.stringify(own[k]));
        for (const k of p.concat) for (const item of own[k] as unknown[]) expect((body[k] as unknown[]).map((x) => JSON.stringify(x)), `${p.name} in pack ${c.index}`).toContain(JSON.stringify(item));
      }
    }
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
