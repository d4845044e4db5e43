// The coverage phase: a fixed, seed-free list of requests sent before the random phase
// (Schemathesis' coverage phase). For every field the generators know (KNOWN_FIELDS, every
// nesting level), on the plain and the streaming path: the field missing, null, each wrong
// JSON type, "", [] and {}, the ends of its documented range and just outside them, a
// string up to the body cap, and text with multi-byte UTF-8, emoji, combining marks,
// U+2028/U+2029, control characters, right-to-left text and lone surrogates; vocabulary
// values (roles, part types, tool_choice); long conversations, deep and wide unknown
// fields; every array field at each length up to its maximum and one past it; unknown
// keys of unusual shapes at each object level; bodies that are not JSON. Same list for
// every seed, so a basic verdict never depends on the seed. A value gets an invalid
// kind (CHAT-2..CHAT-6) only where that clause's words forbid it.
//
// A probe is one change to the smallest ordinary request. Probes of the same kind, route
// and path that touch different fields share one request (a pack), so the list stays
// near the random phase's size; a pack that fails is split and each probe resent alone,
// and a probe with a size (a length, a count, a depth) is bisected to the smallest size
// that still fails, so a finding shows the one change that caused it. Invalid kinds
// (CHAT-2..CHAT-6) are never packed: their oracle needs the one invalid field.
//
// Ids are stable: request k of the list is FUZZ_REPLAY=k@c, its j-th probe alone k@c:j,
// that probe at size n k@c:j:n (same models, brain id and body cap).
import { KNOWN_FIELDS, nested, type CaseKind, type FuzzCase, type KnownField } from './generators.ts';

type Body = Record<string, unknown>;
type Route = 'chat' | 'brain';

export interface CoverageOptions {
  models: string[];
  brainId?: string;
  maxBodyBytes: number;
}

export interface Probe {
  /** "temperature=above-max", "messages[].content=text:emoji": what it changes, for reports. */
  name: string;
  /** The top-level keys it changes besides messages (packs keep these disjoint). */
  keys: string[];
  kind: CaseKind;
  route: Route;
  stream: boolean;
  /** The body (or raw text) with only this probe's change, at size n when it has a size. */
  build: (n?: number) => { body?: unknown; raw?: string };
  /** The size it is sent at; bisected down to `min` when it fails. */
  size?: { n: number; min: number };
  /** The array fields it changes (messages, tools): a pack concatenates them. */
  concat: string[];
  /** Packed with others of its group (false: invalid kinds, raw bodies, whole-cap strings). */
  packable: boolean;
  /** A value clients send (text, vocabulary, in range): packed apart from odd ones, which a strict server refuses whole. */
  usual: boolean;
}

export interface CoverageCase {
  /** Position in the list: FUZZ_REPLAY=<index>@c. */
  index: number;
  probes: Probe[];
  case: FuzzCase;
}

/** Probes per request at most (distinct fields). */
export const PACK_SIZE = 24;

/**
 * Documented ranges (OpenAI chat API reference; the spec names the parameters, not their
 * ranges): each end, and just outside it. Integers without a documented top get the
 * int32 edge instead, where servers' own types overflow.
 */
export const RANGES: Record<string, { min: number; max?: number; integer?: boolean }> = {
  temperature: { min: 0, max: 2 },
  top_p: { min: 0, max: 1 },
  presence_penalty: { min: -2, max: 2 },
  frequency_penalty: { min: -2, max: 2 },
  n: { min: 1, max: 128, integer: true },
  max_tokens: { min: 1, integer: true },
  max_completion_tokens: { min: 1, integer: true },
  top_logprobs: { min: 0, max: 20, integer: true },
  'logit_bias.50256': { min: -100, max: 100 },
  seed: { min: -(2 ** 31), max: 2 ** 31 - 1, integer: true },
};

/** Text that trips parsers, tokenizers and byte counts, one class each (one feature each in signature.ts, so a finding covers its class). */
export const TEXTS: Record<string, string> = {
  utf8: 'héllo wörld, 日本語のテキスト, Привет',
  emoji: 'hi 😀 👩‍👩‍👧 🏳️‍🌈',
  combining: 'e\u0301 n\u0303 Z\u0351\u0300\u0316',
  separators: 'line\u2028next\u2029para',
  control: 'a\u0001b\u0007c\u001bd\u007fe\tf',
  nul: 'a\u0000b',
  rtl: 'שלום مرحبا \u202eevil\u200f',
  surrogate: 'x \ud800 y \udfff',
};

/** The fields a model reads as text. */
const MESSAGE_TEXT = ['messages[].content', 'messages[].content[].text'];

/** Vocabulary a field takes: each value is a probe (they are where handlers branch). */
const VOCABULARY: Record<string, unknown[]> = {
  'messages[].role': ['system', 'developer', 'user', 'assistant', 'tool', 'function'],
  'messages[].content[].type': ['text', 'image_url', 'input_audio', 'file'],
  'response_format.type': ['text', 'json_object', 'json_schema'],
  tool_choice: ['auto', 'none', 'required'],
};

/** Fields beyond KNOWN_FIELDS that a range names. */
const EXTRA_FIELDS: KnownField[] = [
  { path: 'top_logprobs', types: ['number'], kind: () => 'valid', set: (b, v) => { b.logprobs = true; b.top_logprobs = v; } },
];

/** Array fields a pack concatenates (each probe brings its own items). */
const CONCAT = ['messages', 'tools'];

/**
 * Array fields at every length from 0 to their documented maximum and one past it (OpenAI
 * chat API reference: up to 4 stop sequences, at most 128 tools; UNDOCUMENTED_MAX_LENGTH
 * where none is documented). Above SWEPT_LENGTHS only the maximum and one past it are sent,
 * the latter bisected when it fails: there a length is a size, and each its own request
 * would cost more than the whole phase.
 */
export const ARRAY_MAX: Record<string, number> = { stop: 4, tools: 128 };
export const UNDOCUMENTED_MAX_LENGTH = 8;
export const SWEPT_LENGTHS = 8;
/** The lengths an array field is sent at. */
export function arrayLengths(path: string): number[] {
  const max = ARRAY_MAX[path] ?? UNDOCUMENTED_MAX_LENGTH;
  const swept = Array.from({ length: Math.min(max, SWEPT_LENGTHS) + 1 }, (_, k) => k);
  return [...new Set([...swept, max, max + 1])];
}
const STOPS = ['END', '###', '\n\n', 'STOP', 'Human:', 'User:'];
const toolNamed = (i: number) => ({ type: 'function', function: { name: `tool_${i}`, description: 'Weather', parameters: { type: 'object', properties: {} } } });
const callNamed = (i: number) => ({ id: `call_${i}`, type: 'function', function: { name: 'get_weather', arguments: '{}' } });
/** Each array field the generators know, as an array of `k` items of its element type. */
const ARRAYS: Array<{ path: string; key: string; build: (k: number) => Body; kind: (k: number) => CaseKind }> = [
  { path: 'messages', key: 'messages', build: (k) => ({ messages: conversation(k) }), kind: (k) => (k ? 'valid' : 'edge') },
  { path: 'stop', key: 'stop', build: (k) => ({ stop: Array.from({ length: k }, (_, i) => STOPS[i % STOPS.length]!.repeat(1 + Math.floor(i / STOPS.length))) }), kind: () => 'valid' },
  { path: 'tools', key: 'tools', build: (k) => ({ tools: Array.from({ length: k }, (_, i) => toolNamed(i)) }), kind: () => 'valid' },
  { path: 'messages[].content', key: '', build: (k) => ({ messages: [{ role: 'user', content: Array.from({ length: k }, () => ({ type: 'text', text: 'hello' })) }] }), kind: () => 'edge' },
  {
    path: 'messages[].tool_calls', key: '', kind: () => 'edge',
    build: (k) => ({ messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: null, tool_calls: Array.from({ length: k }, (_, i) => callNamed(i)) }, ...Array.from({ length: k }, (_, i) => ({ role: 'tool', tool_call_id: `call_${i}`, content: 'ok' }))] }),
  },
];

/** Keys a document store, a query language or a template engine treats specially, or a JavaScript object inherits. */
export const UNUSUAL_KEYS: Record<string, string> = {
  dollar: '$', dot: '.', empty: '', long: 'k'.repeat(4096), 'non-ascii': 'ключ-鍵-😀', proto: '__proto__', constructor: 'constructor',
};
/** An own property (a plain `o[k] = v` with k "__proto__" would set the prototype instead). */
const own = (o: Body, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
const withKey = (o: Body, k: string): Body => own({ ...o }, k, 1);
const TOOL = () => ({ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } } });
const CALL = () => ({ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } });
const IMAGE = () => ({ url: 'data:image/png;base64,iVBORw0KGgo=' });
/**
 * Every object level of a request with named fields, and how to put an unknown key there
 * (not logit_bias, whose keys are token ids; not tool_choice's objects: tool_choice is one
 * value per request, so each probe there would be a request of its own). Top level and the
 * usual parameters' objects: CHAT-8 ("unknown extra fields"); inside messages: no clause
 * rules an unknown key (ERR-* only).
 */
const OBJECT_LEVELS: Array<{ path: string; kind: CaseKind; messages?: boolean; put: (b: Body, k: string) => void }> = [
  { path: '(body)', kind: 'valid', put: (b, k) => { own(b, k, 1); } },
  { path: 'stream_options', kind: 'valid', put: (b, k) => { b.stream = true; b.stream_options = withKey({ include_usage: true }, k); } },
  { path: 'response_format', kind: 'valid', put: (b, k) => { b.response_format = withKey({ type: 'text' }, k); } },
  { path: 'tools[]', kind: 'valid', put: (b, k) => { b.tools = [withKey(TOOL(), k)]; } },
  { path: 'tools[].function', kind: 'valid', put: (b, k) => { const t = TOOL(); b.tools = [{ ...t, function: withKey(t.function, k) }]; } },
  { path: 'tools[].function.parameters', kind: 'valid', put: (b, k) => { const t = TOOL(); b.tools = [{ ...t, function: { ...t.function, parameters: withKey(t.function.parameters, k) } }]; } },
  { path: 'messages[]', kind: 'edge', messages: true, put: (b, k) => { b.messages = [withKey({ role: 'user', content: 'hello' }, k)]; } },
  { path: 'messages[].content[]', kind: 'edge', messages: true, put: (b, k) => { b.messages = [{ role: 'user', content: [withKey({ type: 'text', text: 'hello' }, k)] }]; } },
  { path: 'messages[].content[].image_url', kind: 'edge', messages: true, put: (b, k) => { b.messages = [{ role: 'user', content: [{ type: 'image_url', image_url: withKey(IMAGE(), k) }] }]; } },
  {
    path: 'messages[].tool_calls[]', kind: 'edge', messages: true,
    put: (b, k) => { b.messages = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: null, tool_calls: [withKey(CALL(), k)] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }]; },
  },
  {
    path: 'messages[].tool_calls[].function', kind: 'edge', messages: true,
    put: (b, k) => { const c = CALL(); b.messages = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: null, tool_calls: [{ ...c, function: withKey(c.function, k) }] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }]; },
  },
];

const MISSING = Symbol('missing');
/** Removes every MISSING placeholder (object members and array items). */
function dropMissing(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== MISSING).map(dropMissing);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== MISSING).map(([k, x]) => [k, dropMissing(x)]));
  return v;
}

const sizeOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');
const filler = (n: number) => 'lorem ipsum '.repeat(Math.ceil(n / 12)).slice(0, n);
const conversation = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? { role: 'assistant', content: 'ok' } : { role: 'user', content: 'hello' }));
const wide = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Every probe, in a fixed order. */
export function coverageProbes(o: CoverageOptions): Probe[] {
  const model = o.models[0] ?? 'svc-auto';
  const paths: Array<{ route: Route; stream: boolean }> = [
    { route: 'chat', stream: false }, { route: 'chat', stream: true },
    // The spec does not say the brain route streams (BRAIN-6 reports whether it does): its plain path only.
    ...(o.brainId ? [{ route: 'brain' as const, stream: false }] : []),
  ];
  const base = (route: Route, stream: boolean): Body => ({
    ...(route === 'chat' ? { model } : {}),
    messages: [{ role: 'user', content: 'hello' }],
    ...(stream ? { stream: true } : {}),
  });
  const out: Probe[] = [];
  const seen = new Set<string>();

  // `whole`: array fields the probe sends whole (their length is the probe): a key of its own, never concatenated.
  const add = (route: Route, stream: boolean, name: string, kind: CaseKind, make: (n?: number) => Body, opts: { size?: { n: number; min: number }; packable?: boolean; usual?: boolean; whole?: string[] } = {}) => {
    const usual = opts.usual ?? /=(text:|long-|parts:|deep-|wide-|")/.test(name);
    const first = make(opts.size?.n);
    const body = dropMissing(first) as Body;
    if (route === 'brain') delete body.model;
    const realStream = body.stream === true;
    // Invalid kinds are judged on /chat/completions only (the brain route's body is not specified).
    if (route === 'brain' && kind !== 'valid' && kind !== 'edge') return;
    const key = `${route} ${JSON.stringify(body)}`;
    if (seen.has(key)) return;
    seen.add(key);
    const ref = base(route, stream);
    const changed = Object.keys({ ...ref, ...body }).filter((k) => JSON.stringify(ref[k]) !== JSON.stringify(body[k]));
    const concat = changed.filter((k) => CONCAT.includes(k) && Array.isArray(body[k]) && !opts.whole?.includes(k));
    out.push({
      name, kind, route, stream: realStream, usual, keys: changed.filter((k) => !concat.includes(k)), concat, size: opts.size,
      packable: (opts.packable ?? true) && (kind === 'valid' || kind === 'edge') && Array.isArray(body.messages),
      build: (n) => {
        const b = dropMissing(make(n ?? opts.size?.n)) as Body;
        if (route === 'brain') delete b.model;
        return { body: b };
      },
    });
  };

  for (const { route, stream } of paths) {
    const fresh = () => base(route, stream);
    // The brain route names its brain in the path: only what is inside messages is its own.
    const fields = [...KNOWN_FIELDS, ...EXTRA_FIELDS].filter((f) => route === 'chat' || f.path.startsWith('messages['));
    for (const f of fields) {
      const put = (v: unknown) => () => { const b = fresh(); f.set(b, v, 0); return b; };
      const kindOf = (v: unknown): CaseKind => (f.path === 'messages[].role' && v === MISSING ? 'bad-message' : f.kind(v === MISSING ? undefined : v));
      // Missing: required fields and what nests inside the containers set() builds.
      if (f.path === 'model' || f.path === 'messages' || f.path.includes('.') || f.path.includes('[')) {
        add(route, stream, `${f.path}=missing`, kindOf(MISSING), put(MISSING));
      }
      add(route, stream, `${f.path}=null`, kindOf(null), put(null));
      if (!f.types.includes('boolean')) add(route, stream, `${f.path}=boolean`, kindOf(true), put(true));
      if (!f.types.includes('number')) add(route, stream, `${f.path}=number`, kindOf(1), put(1));
      add(route, stream, `${f.path}=empty-string`, kindOf(''), put(''));
      add(route, stream, `${f.path}=empty-array`, kindOf([]), put([]));
      add(route, stream, `${f.path}=empty-object`, kindOf({}), put({}));
      const range = RANGES[f.path];
      if (range) {
        const step = range.integer ? 1 : 0.01;
        const vals: Array<[string, number]> = [['min', range.min], ['below-min', +(range.min - step).toFixed(2)]];
        if (range.max !== undefined) vals.push(['max', range.max], ['above-max', +(range.max + step).toFixed(2)]);
        else vals.push(['int32-max', 2 ** 31 - 1], ['above-int32', 2 ** 31]);
        if (range.integer) vals.push(['fraction', range.min + 0.5]);
        for (const [what, v] of vals) add(route, stream, `${f.path}=${what}`, kindOf(v), put(v));
      }
      for (const v of VOCABULARY[f.path] ?? []) add(route, stream, `${f.path}=${JSON.stringify(v)}`, kindOf(v), put(v));
      if (f.types.includes('string')) {
        // Message text gets each class alone; other string fields one text holding them all.
        const texts = MESSAGE_TEXT.includes(f.path) ? Object.entries(TEXTS) : [['mixed', Object.values(TEXTS).join(' ')] as const];
        for (const [cls, t] of texts) add(route, stream, `${f.path}=text:${cls}`, kindOf(t), put(t));
        // Up to the cap: message content alone takes all of it; other fields share a request, a quarter each.
        const whole = f.path === 'messages[].content';
        const probe = fresh();
        f.set(probe, '', 0);
        const room = Math.max(1, o.maxBodyBytes - sizeOf(probe) - 16);
        const n = whole ? room : Math.max(1, Math.floor(room / 4) - 64);
        add(route, stream, `${f.path}=long-string`, kindOf('x'), (k) => { const b = fresh(); f.set(b, filler(k ?? n), 0); return b; }, { size: { n, min: 1 }, packable: !whole });
      }
    }
    // Structure: counts and depths a handler meets only in real traffic (bisected when they fail).
    const turns = Math.min(1024, Math.floor((o.maxBodyBytes - 200) / 40));
    add(route, stream, 'messages=long-conversation', 'valid', (k) => ({ ...fresh(), messages: conversation(k ?? turns) }), { size: { n: turns, min: 2 }, packable: false });
    add(route, stream, 'messages[].content=parts:text+image', 'valid', () => ({ ...fresh(), messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }] }));
    if (route === 'chat') {
      add(route, stream, 'chatgate_fuzz=deep-object', 'valid', (k) => ({ ...fresh(), chatgate_fuzz: nested(k ?? 64) }), { size: { n: 64, min: 1 } });
      add(route, stream, 'x_extra=wide-array', 'valid', (k) => ({ ...fresh(), x_extra: wide(k ?? 4000) }), { size: { n: 4000, min: 1 } });
      // CHAT-4 in a later message, not only the first.
      for (const [what, content] of [['number', 1], ['object', { text: 'hi' }]] as const) {
        add(route, stream, `messages[1].content=${what}`, 'bad-message', () => ({ ...fresh(), messages: [{ role: 'user', content: 'hello' }, { role: 'user', content }] }));
      }
      add(route, stream, 'messages[1].role=missing', 'bad-message', () => ({ ...fresh(), messages: [{ role: 'user', content: 'hello' }, { content: 'hi' }] }));
    }
    // Arrays at every length up to their maximum and one past it; lengths clients send are usual.
    for (const a of ARRAYS.filter((x) => route === 'chat' || x.path.startsWith('messages['))) {
      const max = ARRAY_MAX[a.path] ?? UNDOCUMENTED_MAX_LENGTH;
      for (const k of arrayLengths(a.path)) {
        const size = k > SWEPT_LENGTHS ? { size: { n: k, min: SWEPT_LENGTHS + 1 } } : {};
        add(route, stream, `${a.path}=length:${k}`, a.kind(k), (n) => ({ ...fresh(), ...a.build(n ?? k) }), { ...size, usual: k >= 1 && k <= max, whole: a.key ? [a.key] : [] });
      }
    }
    // Unknown keys of each unusual shape at each object level, alone.
    for (const level of OBJECT_LEVELS.filter((l) => route === 'chat' || l.messages)) {
      for (const [shape, key] of Object.entries(UNUSUAL_KEYS)) {
        add(route, stream, `${level.path}=unusual-key:${shape}`, level.kind, () => { const b = fresh(); level.put(b, key); return b; });
      }
    }
  }

  // Bodies that are not JSON (CHAT-6), each with and without stream in the text.
  const RAW: Array<[string, (json: string) => string]> = [
    ['cut-half', (j) => j.slice(0, Math.floor(j.length / 2))],
    ['cut-before-end', (j) => j.slice(0, -1)],
    ['trailing-garbage', (j) => `${j}}x`],
    ['trailing-comma', (j) => `${j.slice(0, -1)},}`],
    ['single-quotes', (j) => j.replace(/"/g, "'")],
    ['empty-body', () => ''],
    ['bare-word', () => 'hello'],
  ];
  for (const stream of [false, true]) {
    const json = JSON.stringify(base('chat', stream));
    for (const [what, f] of RAW) {
      const raw = f(json);
      const key = `raw ${raw}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ name: `body=not-json:${what}`, kind: 'not-json', route: 'chat', stream: false, usual: false, keys: ['(raw)'], concat: [], packable: false, build: () => ({ raw }) });
    }
  }
  return out;
}

/** The request of a pack: each probe's change on one ordinary body (messages concatenated). */
export function packCase(probes: Probe[], sizes: Array<number | undefined> = []): FuzzCase {
  const built = probes.map((p, i) => p.build(sizes[i]));
  const p0 = probes[0]!;
  const name = probes.map((p, i) => (sizes[i] !== undefined && sizes[i] !== p.size?.n ? `${p.name}(${sizes[i]})` : p.name)).join(' + ');
  if (built[0]!.raw !== undefined) return { kind: p0.kind, route: p0.route, raw: built[0]!.raw, label: `coverage: ${name}` };
  if (probes.length === 1) return { kind: p0.kind, route: p0.route, body: built[0]!.body, label: `coverage: ${name}` };
  const body: Body = { ...(built[0]!.body as Body) };
  const lists = new Map<string, unknown[]>();
  built.forEach((b, i) => {
    const one = b.body as Body;
    for (const k of probes[i]!.keys) own(body, k, one[k]);
    for (const k of probes[i]!.concat) lists.set(k, [...(lists.get(k) ?? []), ...(one[k] as unknown[])]);
  });
  for (const [k, items] of lists) body[k] = items;
  return { kind: p0.kind, route: p0.route, body, label: `coverage: ${name}` };
}

/** The fixed list: probes grouped by kind, route and path; packable ones share requests on distinct fields. */
export function coverageCases(o: CoverageOptions): CoverageCase[] {
  const probes = coverageProbes(o);
  const groups = new Map<string, Probe[]>();
  for (const p of probes) {
    const k = `${p.route}|${p.stream}|${p.kind}|${p.usual}`;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  const packs: Probe[][] = [];
  for (const list of groups.values()) {
    const open: Array<{ probes: Probe[]; keys: Set<string>; concat: Set<string>; bytes: number }> = [];
    for (const p of list) {
      if (!p.packable) { packs.push([p]); continue; }
      // Top-level keys stay disjoint (an array sent whole is a key); items of messages and tools simply add up; the body stays within the cap.
      const bytes = sizeOf(packCase([p]).body);
      const slot = open.find((s) => s.probes.length < PACK_SIZE && s.bytes + bytes <= o.maxBodyBytes
        && p.keys.every((k) => !s.keys.has(k) && !s.concat.has(k)) && p.concat.every((k) => !s.keys.has(k)));
      if (slot) { slot.probes.push(p); p.keys.forEach((k) => slot.keys.add(k)); p.concat.forEach((k) => slot.concat.add(k)); slot.bytes += bytes; }
      else open.push({ probes: [p], keys: new Set(p.keys), concat: new Set(p.concat), bytes });
    }
    packs.push(...open.map((s) => s.probes));
  }
  // Each probe's body counts whole (its frame too), so a pack is never larger than the sum.
  return packs.map((ps, index) => ({ index, probes: ps, case: packCase(ps) }));
}

/** The case a coverage replay id names: "c" (request k), "c:j" (its probe j alone), "c:j:n" (at size n). */
export function coverageCaseAt(list: CoverageCase[], k: number, path: string): FuzzCase {
  const c = list[k];
  if (!c) throw new Error(`FUZZ_REPLAY=${k}@${path}: the coverage phase has ${list.length} requests (0 to ${list.length - 1})`);
  const [, j, n] = path.split(':');
  if (j === undefined) return c.case;
  const p = c.probes[Number(j)];
  if (!p) throw new Error(`FUZZ_REPLAY=${k}@${path}: coverage request ${k} has ${c.probes.length} probes`);
  return packCase([p], [n === undefined ? undefined : Number(n)]);
}
