// Generated chat requests (fast-check arbitraries): from schemas/chat-request.schema.json
// (model, messages with role and content as string / null / parts, stream, stream_options)
// and from what OpenAI-style clients add on top (the usual parameters, roles, names,
// tool calls), plus Unicode edge cases, long strings and conversations, unknown fields
// with deep values, and invalid bodies of each kind the spec rules on (CHAT-2..CHAT-6).
// Beyond those, the shapes that crash real servers (FuzzCase.shape): every known field,
// at every nesting level, set to null or to a value of each wrong JSON type; every string
// field (model included) as a long string; message content far longer than 6,000
// characters. Long strings go up to what the body cap (FUZZ_MAX_BODY_BYTES) leaves.
//
// Mappers never mutate what they are given: fast-check reuses a generated value across
// shrink candidates, so each mapper works on its own copy (structuredClone).
//
// Every arbitrary shrinks towards the smallest request that still shows a failure: record
// keys are optional (removed first), arrays lose items, sizes and depths are integers.
// A case carries its kind, so the oracle knows which clause judges it and shrinking never
// wanders from one kind to another (the shrink predicate demands the same kind).
import fc from 'fast-check';

/** Which clause a generated body answers to. */
export type CaseKind =
  | 'valid'      // known shape + parameters/extra fields: CHAT-8 (any status but a crash)
  | 'edge'       // odd but not ruled by the spec (empty messages, unknown role, ...): ERR-* only
  | 'no-model'   // CHAT-2
  | 'bad-messages' // CHAT-3
  | 'bad-message'  // CHAT-4
  | 'bad-stream'   // CHAT-5
  | 'not-json';    // CHAT-6

export interface FuzzCase {
  kind: CaseKind;
  route: 'chat' | 'brain';
  /** The JSON body (undefined for not-json). */
  body?: unknown;
  /** Raw body text for not-json. */
  raw?: string;
  /** What the generator did, for the summary ("stop as array", "content parts", ...). */
  label: string;
  /** Set for the shapes beyond the schema's happy path: which one. */
  shape?: Shape;
}

/** The shapes that crash real servers, each generated on purpose (see KNOWN_FIELDS). */
export type Shape = 'null-field' | 'wrong-type' | 'long-string' | 'long-content';
export const SHAPES: Shape[] = ['null-field', 'wrong-type', 'long-string', 'long-content'];

export interface GeneratorOptions {
  models: string[];
  brainId?: string;
  maxBodyBytes: number;
}

// Pieces of text a real conversation may hold, and the ones parsers trip on: emoji and
// ZWJ sequences, combining marks, right-to-left text and controls, NUL, lone surrogates
// (JSON.stringify writes them as \ud800 escapes), line/paragraph separators, BOM, quotes.
export const TEXT_PIECES = [
  'hello', 'Say hello in one short sentence.', 'world', '42', 'ok',
  '😀', '👩‍👩‍👧', 'e\u0301', 'Z\u0351\u0300', 'שלום', 'مرحبا', '\u202eevil', '\u200f',
  '\u0000', '\ud800', '\udfff', '\u2028', '\ufeff', '\t', '\n', '"quoted"', '\\', '</script>', '%s%n', '{{x}}',
];

/**
 * Absent or present; shrinking tries "absent" first (oneof's cross-shrink towards its first
 * arbitrary). fast-check's array shrinker removes items from the front, so an item after
 * the one that matters would stay: lists of `maybe` items let every item go on its own.
 */
export function maybe<T>(arb: fc.Arbitrary<T>, absentWeight = 1, presentWeight = 8): fc.Arbitrary<T | undefined> {
  return fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant(undefined), weight: absentWeight }, { arbitrary: arb, weight: presentWeight });
}
function list<T>(arb: fc.Arbitrary<T>, minLength: number, maxLength: number, fallback: T[]): fc.Arbitrary<T[]> {
  return fc.array(maybe(arb), { minLength, maxLength }).map((a) => {
    const kept = a.filter((x): x is T => x !== undefined);
    return kept.length >= minLength ? kept : [...kept, ...fallback].slice(0, Math.max(minLength, kept.length));
  });
}
/** An object of optional fields: each one can be dropped on its own when shrinking. */
function optionalFields<T extends Record<string, fc.Arbitrary<unknown>>>(fields: T, absentWeight: number, presentWeight = 1): fc.Arbitrary<Record<string, unknown>> {
  const rec = Object.fromEntries(Object.entries(fields).map(([k, a]) => [k, maybe(a, absentWeight, presentWeight)])) as Record<string, fc.Arbitrary<unknown>>;
  return fc.record(rec).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
}

const plainText = list(fc.constantFrom('hello', 'world', 'ok', 'Say hello.'), 1, 4, ['hello']).map((a) => a.join(' '));
const edgyText = list(fc.constantFrom(...TEXT_PIECES), 1, 6, ['hello']).map((a) => a.join(' '));
/** A long string whose length shrinks by bisection (the size is what matters, not the letters). */
const longText = fc.integer({ min: 256, max: 6000 }).map((n) => 'lorem ipsum '.repeat(Math.ceil(n / 12)).slice(0, n));
/**
 * An arbitrary made on first use, with the same values and shrinks: fc.string({ unit: 'binary' })
 * takes about a second to build, which every suite run loading this module paid (the coverage
 * phase does), random cases or none.
 */
class Lazy<T> extends fc.Arbitrary<T> {
  private made?: fc.Arbitrary<T>;
  constructor(private readonly make: () => fc.Arbitrary<T>) { super(); }
  private get arb(): fc.Arbitrary<T> { return (this.made ??= this.make()); }
  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> { return this.arb.generate(mrng, biasFactor); }
  canShrinkWithoutContext(value: unknown): value is T { return this.arb.canShrinkWithoutContext(value); }
  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> { return this.arb.shrink(value, context); }
}
const unicodeText = new Lazy(() => fc.string({ unit: 'binary', maxLength: 24 }));

export const text = fc.oneof(
  { arbitrary: plainText, weight: 5 },
  { arbitrary: edgyText, weight: 4 },
  { arbitrary: unicodeText, weight: 1 },
  { arbitrary: longText, weight: 1 },
);

const textPart = fc.record({ type: fc.constant('text'), text });
const imagePart = fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.constant('data:image/png;base64,iVBORw0KGgo=') }) });
const parts = list(fc.oneof({ arbitrary: textPart, weight: 4 }, { arbitrary: imagePart, weight: 1 }), 1, 3, [{ type: 'text', text: 'hello' }]);
const content = fc.oneof({ withCrossShrink: true }, { arbitrary: text, weight: 4 }, { arbitrary: parts, weight: 1 });
const name = fc.constantFrom('alice', 'bob_2', 'tool-user');

const withName = <T extends Record<string, unknown>>(arb: fc.Arbitrary<T>) => fc.tuple(arb, maybe(name, 3, 1)).map(([m, n]) => (n === undefined ? m : { ...m, name: n }));
const userMessage = withName(fc.record({ role: fc.constant('user'), content }));
const systemMessage = withName(fc.record({ role: fc.constantFrom('system', 'developer'), content: text }));
const toolCall = fc.record({
  id: fc.constant('call_fuzz_1'), type: fc.constant('function'),
  function: fc.record({ name: fc.constant('get_weather'), arguments: fc.constantFrom('{}', '{"city":"Paris"}') }),
});
const assistantMessage = fc.oneof(
  withName(fc.record({ role: fc.constant('assistant'), content: text })),
  fc.record({ role: fc.constant('assistant'), content: fc.constant(null), tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 2 }) }),
);
const toolMessage = fc.record({ role: fc.constant('tool'), tool_call_id: fc.constant('call_fuzz_1'), content: text });

export const message = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: userMessage, weight: 5 },
  { arbitrary: systemMessage, weight: 2 },
  { arbitrary: assistantMessage, weight: 2 },
  { arbitrary: toolMessage, weight: 1 },
);

const HELLO: any = { role: 'user', content: 'hello' }; // eslint-disable-line @typescript-eslint/no-explicit-any -- a fixed filler of the union type
export const messages = fc.oneof(
  { arbitrary: list(message, 1, 6, [HELLO]), weight: 12 },
  // A long conversation: filler turns before the generated ones; their count shrinks by bisection.
  { arbitrary: fc.tuple(fc.integer({ min: 0, max: 60 }), list(message, 1, 4, [HELLO])).map(([k, ms]) => [...filler(k), ...ms]), weight: 1 },
);

function filler(k: number): Array<Record<string, unknown>> {
  return Array.from({ length: k }, (_, i) => (i % 2 ? { role: 'assistant', content: 'ok' } : { role: 'user', content: 'hello' }));
}

// Values no well-typed client sends, for the parameters' "odd" side.
const oddScalar = fc.oneof(
  fc.constantFrom(null, true, false, '', '0.5', 'NaN', -1, 0, 1e308, -1e308, 2 ** 53, 0.1),
  fc.integer({ min: 65_536, max: 2 ** 31 - 1 }),
  fc.integer({ min: -(2 ** 31), max: -1 }),
  fc.string({ maxLength: 8 }),
);
const odd = fc.oneof({ arbitrary: oddScalar, weight: 4 }, { arbitrary: fc.array(fc.integer(), { maxLength: 3 }), weight: 1 }, { arbitrary: fc.dictionary(fc.constantFrom('a', 'b'), fc.integer(), { maxKeys: 2 }), weight: 1 });
const or = <T>(usual: fc.Arbitrary<T>) => fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: odd, weight: 1 });

const tool = fc.record({
  type: fc.constant('function'),
  function: fc.record({
    name: fc.constantFrom('get_weather', 'lookup'),
    description: text,
    parameters: fc.constant({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  }, { requiredKeys: ['name'] }),
});

/** The usual OpenAI parameters: a few of them per request (shrinking drops them first). */
const paramValues = {
  temperature: or(fc.double({ min: 0, max: 2, noNaN: true })),
  top_p: or(fc.double({ min: 0, max: 1, noNaN: true })),
  n: or(fc.integer({ min: 1, max: 3 })),
  stop: fc.oneof(text, fc.array(fc.constantFrom('\n', 'END', 'stop', '###'), { maxLength: 4 }), odd),
  max_tokens: or(fc.integer({ min: 1, max: 64 })),
  max_completion_tokens: or(fc.integer({ min: 1, max: 64 })),
  presence_penalty: or(fc.double({ min: -2, max: 2, noNaN: true })),
  frequency_penalty: or(fc.double({ min: -2, max: 2, noNaN: true })),
  logit_bias: or(fc.dictionary(fc.integer({ min: 0, max: 100_000 }).map(String), fc.integer({ min: -100, max: 100 }), { maxKeys: 3 })),
  seed: or(fc.integer()),
  user: or(fc.constantFrom('chatgate-fuzz', 'user-123', '')),
  response_format: or(fc.constantFrom({ type: 'text' }, { type: 'json_object' })),
  tools: or(fc.array(tool, { minLength: 1, maxLength: 2 })),
  tool_choice: or(fc.constantFrom('auto', 'none', 'required', { type: 'function', function: { name: 'get_weather' } })),
  parallel_tool_calls: or(fc.boolean()),
  logprobs: or(fc.boolean()),
};
export const params = optionalFields(paramValues, 5);

/** Objects nested `depth` levels deep; depth is an integer, so it shrinks to the exact threshold. */
export function nested(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
const nestedArrays = (depth: number) => { let v: unknown = [1]; for (let i = 1; i < depth; i++) v = [v]; return v; };

const unknownValue = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 4 },
  { arbitrary: fc.integer({ min: 3, max: 64 }).map((d) => nested(d)), weight: 1 },
  { arbitrary: fc.integer({ min: 3, max: 64 }).map(nestedArrays), weight: 1 },
  { arbitrary: fc.integer({ min: 100, max: 4000 }).map((n) => Array.from({ length: n }, (_, i) => i)), weight: 1 },
);
export const unknownFields = optionalFields({ chatgate_fuzz: unknownValue, x_extra: unknownValue }, 5);

/** stream / stream_options as clients send them. */
const streaming = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant({}), weight: 3 },
  { arbitrary: fc.constant({ stream: false }), weight: 1 },
  { arbitrary: fc.record({ stream: fc.constant(true), stream_options: fc.record({ include_usage: fc.boolean() }) }, { requiredKeys: ['stream'] }), weight: 3 },
);


// --- every known field: null, each wrong type, long strings -------------------------------

type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
const JSON_TYPES: JsonType[] = ['null', 'boolean', 'number', 'string', 'array', 'object'];
/** Values of each JSON type, for "a value of the wrong type" (shrinking goes to the first). */
const OF_TYPE: Record<Exclude<JsonType, 'null'>, fc.Arbitrary<unknown>> = {
  boolean: fc.constantFrom(true, false),
  number: fc.constantFrom(0, 1, -1, 1.5, 1e308),
  string: fc.constantFrom('', 'x', '1', 'true'),
  array: fc.constantFrom([], [1], ['x'], [null], [{}]),
  object: fc.constantFrom({}, { a: 1 }, { type: 'x' }),
};

type Body = Record<string, unknown>;
/** A field of the request that the schema or OpenAI-style clients know, and how to put a value there. */
export interface KnownField {
  /** "messages[].content[].text": arrays as [], objects as dots. */
  path: string;
  /** The JSON types clients send there (integers count as number). */
  types: JsonType[];
  /** Which clause rules a body with this field set to `value`: the invalid kinds' clauses, CHAT-8 ('valid') or ERR-* only ('edge'). */
  kind: (value: unknown) => CaseKind;
  /** Sets the field to `value` in `body` (its own copy), building the containers the path needs; `at` picks a message. */
  set: (body: Body, value: unknown, at: number) => void;
}

/** Nesting level of a field: 1 for a top-level field, one more per array item or object member below. */
export function levelOf(path: string): number {
  return path.split(/\.|(?=\[\])/).length;
}

const msgs = (b: Body) => (Array.isArray(b.messages) && b.messages.length ? b.messages as Body[] : [{ role: 'user', content: 'hello' }]);
/** Replaces message `at` (of the existing ones) by `f(its copy)`. */
function onMessage(b: Body, at: number, f: (m: Body) => unknown): void {
  const list = msgs(b);
  const i = at % list.length;
  b.messages = list.map((m, j) => (j === i ? f({ ...(m && typeof m === 'object' ? m : {}) }) : m));
}
/** A user message whose content is one part, `part` (a text part by default). */
const withPart = (b: Body, at: number, part: unknown) => onMessage(b, at, (m) => ({ ...m, role: 'user', content: [part] }));
const imagePartWith = (image_url: unknown) => ({ type: 'image_url', image_url });
/** An assistant message with one tool call, inserted before message `at`, and the tool's answer after it. */
function withToolCall(b: Body, at: number, call: unknown): void {
  const list = msgs(b);
  const i = at % list.length;
  b.messages = [...list.slice(0, i), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_fuzz_1', content: 'ok' }, ...list.slice(i)];
}
const CALL = () => ({ id: 'call_fuzz_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } });
const TOOL = () => ({ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } } });
const top = (name: string, types: JsonType[], kind: KnownField['kind'] = () => 'valid', extra: (b: Body) => void = () => {}): KnownField =>
  ({ path: name, types, kind, set: (b, v) => { extra(b); b[name] = v; } });
const streamOn = (b: Body) => { b.stream = true; };
const edgeKind = () => 'edge' as const;
const validKind = () => 'valid' as const;

export const KNOWN_FIELDS: KnownField[] = [
  // Top level: the schema's fields, then the usual OpenAI parameters (CHAT-8).
  top('model', ['string'], (v) => (typeof v === 'string' ? 'edge' : 'no-model')), // a long model is an unknown one: not CHAT-2's
  // CHAT-3 forbids messages missing or not an array: an empty array is no clause's (ERR-* only).
  top('messages', ['array'], (v) => (Array.isArray(v) ? 'edge' : 'bad-messages')),
  top('stream', ['boolean'], (v) => (v === null ? 'edge' : 'bad-stream'), (b) => { delete b.stream_options; }),
  top('stream_options', ['object'], validKind, streamOn),
  ...(['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'n', 'max_tokens', 'max_completion_tokens', 'seed'] as const).map((p) => top(p, ['number'])),
  top('stop', ['string', 'array']),
  top('logit_bias', ['object']),
  top('user', ['string']),
  top('response_format', ['object']),
  top('tools', ['array']),
  top('tool_choice', ['string', 'object'], validKind, (b) => { b.tools = [TOOL()]; }),
  top('parallel_tool_calls', ['boolean']),
  top('logprobs', ['boolean']),
  // Inside the objects and arrays of the usual parameters (CHAT-8).
  { path: 'stream_options.include_usage', types: ['boolean'], kind: validKind, set: (b, v) => { b.stream = true; b.stream_options = { include_usage: v }; } },
  { path: 'stop[]', types: ['string'], kind: validKind, set: (b, v) => { b.stop = ['END', v]; } },
  { path: 'logit_bias.50256', types: ['number'], kind: validKind, set: (b, v) => { b.logit_bias = { 50256: v }; } },
  { path: 'response_format.type', types: ['string'], kind: validKind, set: (b, v) => { b.response_format = { type: v }; } },
  { path: 'tools[]', types: ['object'], kind: validKind, set: (b, v) => { b.tools = [v]; } },
  { path: 'tools[].type', types: ['string'], kind: validKind, set: (b, v) => { b.tools = [{ ...TOOL(), type: v }]; } },
  { path: 'tools[].function', types: ['object'], kind: validKind, set: (b, v) => { b.tools = [{ type: 'function', function: v }]; } },
  ...(['name', 'description'] as const).map((k): KnownField => ({ path: `tools[].function.${k}`, types: ['string'], kind: validKind, set: (b, v) => { const t = TOOL(); b.tools = [{ ...t, function: { ...t.function, [k]: v } }]; } })),
  { path: 'tools[].function.parameters', types: ['object'], kind: validKind, set: (b, v) => { const t = TOOL(); b.tools = [{ ...t, function: { ...t.function, parameters: v } }]; } },
  { path: 'tool_choice.type', types: ['string'], kind: validKind, set: (b, v) => { b.tools = [TOOL()]; b.tool_choice = { type: v, function: { name: 'get_weather' } }; } },
  { path: 'tool_choice.function', types: ['object'], kind: validKind, set: (b, v) => { b.tools = [TOOL()]; b.tool_choice = { type: 'function', function: v }; } },
  { path: 'tool_choice.function.name', types: ['string'], kind: validKind, set: (b, v) => { b.tools = [TOOL()]; b.tool_choice = { type: 'function', function: { name: v } }; } },
  // Messages: CHAT-4 rules content of a type no client sends (a number, an object without
  // parts); everything else in a message is not ruled by the spec (ERR-* only).
  { path: 'messages[]', types: ['object'], kind: edgeKind, set: (b, v, at) => onMessage(b, at, () => v) },
  { path: 'messages[].role', types: ['string'], kind: edgeKind, set: (b, v, at) => onMessage(b, at, (m) => ({ ...m, role: v })) },
  {
    path: 'messages[].content', types: ['string', 'array'],
    kind: (v) => (typeof v === 'number' || (!!v && typeof v === 'object' && !Array.isArray(v)) ? 'bad-message' : typeof v === 'string' ? 'valid' : 'edge'),
    set: (b, v, at) => onMessage(b, at, (m) => ({ ...m, role: typeof m.role === 'string' ? m.role : 'user', content: v })),
  },
  ...(['name', 'tool_call_id'] as const).map((k): KnownField => ({ path: `messages[].${k}`, types: ['string'], kind: edgeKind, set: (b, v, at) => onMessage(b, at, (m) => ({ ...m, [k]: v })) })),
  { path: 'messages[].tool_calls', types: ['array'], kind: edgeKind, set: (b, v, at) => onMessage(b, at, (m) => ({ ...m, role: 'assistant', tool_calls: v })) },
  // Content parts and tool calls inside messages.
  { path: 'messages[].content[]', types: ['object'], kind: edgeKind, set: (b, v, at) => withPart(b, at, v) },
  { path: 'messages[].content[].type', types: ['string'], kind: edgeKind, set: (b, v, at) => withPart(b, at, { type: v, text: 'hello' }) },
  { path: 'messages[].content[].text', types: ['string'], kind: edgeKind, set: (b, v, at) => withPart(b, at, { type: 'text', text: v }) },
  { path: 'messages[].content[].image_url', types: ['object'], kind: edgeKind, set: (b, v, at) => withPart(b, at, imagePartWith(v)) },
  { path: 'messages[].content[].image_url.url', types: ['string'], kind: edgeKind, set: (b, v, at) => withPart(b, at, imagePartWith({ url: v })) },
  { path: 'messages[].tool_calls[]', types: ['object'], kind: edgeKind, set: (b, v, at) => withToolCall(b, at, v) },
  ...(['id', 'type'] as const).map((k): KnownField => ({ path: `messages[].tool_calls[].${k}`, types: ['string'], kind: edgeKind, set: (b, v, at) => withToolCall(b, at, { ...CALL(), [k]: v }) })),
  { path: 'messages[].tool_calls[].function', types: ['object'], kind: edgeKind, set: (b, v, at) => withToolCall(b, at, { ...CALL(), function: v }) },
  ...(['name', 'arguments'] as const).map((k): KnownField => ({ path: `messages[].tool_calls[].function.${k}`, types: ['string'], kind: edgeKind, set: (b, v, at) => { const c = CALL(); withToolCall(b, at, { ...c, function: { ...c.function, [k]: v } }); } })),
];

const STRING_FIELDS = KNOWN_FIELDS.filter((f) => f.types.includes('string'));
/** "a value of the wrong type" for each field: (field, type) pairs, every level. */
const WRONG_TYPES = KNOWN_FIELDS.flatMap((f) => JSON_TYPES.filter((t) => t !== 'null' && !f.types.includes(t)).map((t) => [f, t as Exclude<JsonType, 'null'>] as const));
/**
 * One of `items`, each nesting level equally likely (then each item of that level): the deep
 * fields (content parts, tool calls) are few but crash servers as often as the top-level ones.
 */
function byLevel<T>(items: readonly T[], pathOf: (t: T) => string): fc.Arbitrary<T> {
  const levels = [...new Set(items.map((t) => levelOf(pathOf(t))))].sort((a, b) => a - b);
  return fc.constantFrom(...levels).chain((l) => fc.constantFrom(...items.filter((t) => levelOf(pathOf(t)) === l)));
}

/** `n` characters of filler (ASCII: its length in bytes is its length in characters). */
const longFiller = (n: number) => 'lorem ipsum '.repeat(Math.ceil(n / 12)).slice(0, n);
/** The longest string of at most `n` characters that keeps `body` (holding "" in its place) within `cap`. */
function fitString(body: Body, n: number, cap: number): number {
  return Math.max(0, Math.min(n, cap - sizeOf(body) - 16));
}

function sizeOf(body: unknown): number {
  return Buffer.byteLength(JSON.stringify(body) ?? '');
}

export function caseArbitrary(opts: GeneratorOptions): fc.Arbitrary<FuzzCase> {
  const modelNames = [...opts.models, ...(opts.brainId ? [`brain:${opts.brainId}`] : [])];
  const model = fc.constantFrom(...modelNames);
  const route = opts.brainId ? fc.oneof({ arbitrary: fc.constant('chat' as const), weight: 4 }, { arbitrary: fc.constant('brain' as const), weight: 1 }) : fc.constant('chat' as const);
  const fits = (c: FuzzCase) => (c.raw !== undefined ? Buffer.byteLength(c.raw) : sizeOf(c.body)) <= opts.maxBodyBytes;

  // A valid-looking body: model + messages + whatever clients add + unknown fields.
  const validBody = fc.record({ model, messages, params, unknown: unknownFields, streaming })
    .map(({ model, messages, params, unknown, streaming }) => ({ model, messages, ...params, ...unknown, ...streaming }) as Record<string, unknown>);

  const valid = fc.tuple(route, validBody).map(([route, shared]): FuzzCase => {
    const body = structuredClone(shared);
    if (route === 'brain') delete body.model; // the route names the brain
    return { kind: 'valid', route, body, label: labelOf(body) };
  });

  const nonString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.constant('svc'), { maxLength: 2 }), fc.constant({ id: 'svc' }));
  const noModel = fc.tuple(validBody, fc.option(nonString, { nil: undefined })).map(([shared, m]): FuzzCase => {
    const body = structuredClone(shared);
    if (m === undefined) delete body.model; else body.model = m;
    return { kind: 'no-model', route: 'chat', body, label: m === undefined ? 'model missing' : `model as ${typeName(m)}` };
  });

  const nonArray = fc.oneof(fc.constant({ role: 'user', content: 'hi' }), fc.constant('hi'), fc.integer(), fc.boolean(), fc.constant(null));
  const badMessages = fc.tuple(validBody, fc.option(nonArray, { nil: undefined })).map(([shared, m]): FuzzCase => {
    const body = structuredClone(shared);
    if (m === undefined) delete body.messages; else body.messages = m;
    return { kind: 'bad-messages', route: 'chat', body, label: m === undefined ? 'messages missing' : `messages as ${typeName(m)}` };
  });

  // CHAT-4 names two things: no role, and content of a type no client sends (number, object without parts).
  const badContent = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant({ text: 'hi' }), fc.constant({}));
  const badMessage = fc.tuple(validBody, fc.nat(), fc.option(badContent, { nil: undefined })).map(([shared, at, c]): FuzzCase => {
    const body = structuredClone(shared);
    const list = body.messages as Array<Record<string, unknown>>;
    const i = at % list.length;
    const m = { ...list[i] };
    if (c === undefined) delete m.role; else m.content = c;
    body.messages = list.map((x, j) => (j === i ? m : x));
    return { kind: 'bad-message', route: 'chat', body, label: c === undefined ? 'message without role' : `content as ${typeName(c)}` };
  });

  const nonBoolean = fc.oneof(fc.constantFrom('yes', 'true', 'false', ''), fc.integer({ min: 0, max: 2 }), fc.constant({}), fc.constant([true]));
  const badStream = fc.tuple(validBody, nonBoolean).map(([shared, s]): FuzzCase => {
    const body = structuredClone(shared);
    delete body.stream_options;
    body.stream = s;
    return { kind: 'bad-stream', route: 'chat', body, label: `stream as ${typeName(s)}` };
  });

  // Text that is not JSON: a cut-off body, trailing garbage, a trailing comma, single quotes.
  const notJson = fc.tuple(validBody, fc.nat(), fc.constantFrom('cut', 'garbage', 'comma', 'quotes')).map(([body, at, how]): FuzzCase => {
    const json = JSON.stringify(body);
    let raw: string;
    if (how === 'cut') raw = json.slice(0, 1 + (at % (json.length - 1)));
    else if (how === 'garbage') raw = `${json}}x`;
    else if (how === 'comma') raw = `${json.slice(0, -1)},}`;
    else raw = json.replace(/"/g, "'");
    return { kind: 'not-json', route: 'chat', raw, label: `not JSON (${how})` };
  });

  // Not ruled by the spec: judged only by ERR-1/ERR-2 (and EV-* if a stream comes back).
  const edge = fc.tuple(route, validBody, fc.constantFrom('empty-messages', 'unknown-role', 'role-not-string', 'message-not-object', 'empty-model', 'content-boolean', 'body-array', 'stream-null'))
    .map(([route, shared, how]): FuzzCase => {
      const body = structuredClone(shared);
      const list = body.messages as unknown[];
      if (how === 'empty-messages') body.messages = [];
      if (how === 'unknown-role') body.messages = [{ role: 'chatgate-robot', content: 'hi' }, ...list];
      if (how === 'role-not-string') body.messages = [{ role: 7, content: 'hi' }, ...list];
      if (how === 'message-not-object') body.messages = ['hi', ...list];
      if (how === 'empty-model') body.model = '';
      if (how === 'content-boolean') body.messages = [{ role: 'user', content: true }, ...list];
      if (how === 'stream-null') { delete body.stream_options; body.stream = null; }
      if (route === 'brain') delete body.model;
      return { kind: 'edge', route, body: how === 'body-array' ? [body] : body, label: how };
    });


  // Every known field set to null; the route follows the kind (the brain route takes no model, and only /chat/completions is ruled by CHAT-2..6).
  const routeFor = (kind: CaseKind, field: KnownField, r: 'chat' | 'brain') => (kind === 'valid' || kind === 'edge') && field.path !== 'model' ? r : 'chat';
  // Shrinking may drop the change of a valid or edge case (`keep` false: the plain valid body is
  // left, judged no more strictly than before), so a crash of another cause met on such a case
  // shrinks to the ordinary request that shows it. The invalid kinds keep theirs: their oracle
  // (CHAT-2..5) needs it.
  const keep = fc.option(fc.constant(true), { freq: 1000, nil: false });
  const mutated = (shape: Shape, field: KnownField, value: unknown, r: 'chat' | 'brain', shared: Body, at: number, label: string, kept: boolean): FuzzCase => {
    const body = structuredClone(shared);
    const kind = field.kind(value);
    if (kept || (kind !== 'valid' && kind !== 'edge')) field.set(body, value, at);
    const route = routeFor(kind, field, r);
    if (route === 'brain') delete body.model;
    return { kind, route, body, label, shape };
  };
  const nullField = fc.tuple(route, validBody, byLevel(KNOWN_FIELDS, (f) => f.path), fc.nat(), keep)
    .map(([r, shared, field, at, kept]) => mutated('null-field', field, null, r, shared, at, `null: ${field.path}`, kept));
  // Every wrong type at every nesting level: a (field, type) pair, then a value of that type.
  const wrongType = fc.tuple(route, validBody, byLevel(WRONG_TYPES, ([f]) => f.path).chain(([field, type]) => OF_TYPE[type].map((v) => [field, type, v] as const)), fc.nat(), keep)
    .map(([r, shared, [field, type, value], at, kept]) => mutated('wrong-type', field, value, r, shared, at, `${type} at ${field.path}`, kept));
  // Long strings in every string field, up to what the body cap leaves. The length is uniform
  // up to the cap (no bias towards either end: most are far longer than 6,000 characters)
  // and shrinks by bisection to a crash's exact threshold, however short.
  const slimBody = fc.record({ model, messages: list(message, 1, 3, [HELLO]), streaming })
    .map(({ model, messages, streaming }) => ({ model, messages, ...streaming }) as Body);
  const long = (shape: Shape, fields: KnownField[]) => fc.tuple(route, slimBody, fc.constantFrom(...fields), fc.noBias(fc.integer({ min: 1, max: opts.maxBodyBytes })), fc.nat(), keep)
    .map(([r, shared, field, n, at, kept]) => {
      const probe = structuredClone(shared);
      field.set(probe, '', at);
      return mutated(shape, field, longFiller(fitString(probe, n, opts.maxBodyBytes)), r, shared, at, shape === 'long-content' ? 'long content' : `long string: ${field.path}`, kept);
    });
  const longString = long('long-string', STRING_FIELDS);
  // Message content far longer than 6,000 characters (clients send whole documents).
  const longContent = long('long-content', KNOWN_FIELDS.filter((f) => f.path === 'messages[].content' || f.path === 'messages[].content[].text'));

  return fc.oneof(
    { arbitrary: valid, weight: 10 },
    { arbitrary: noModel, weight: 1 },
    { arbitrary: badMessages, weight: 1 },
    { arbitrary: badMessage, weight: 2 },
    { arbitrary: badStream, weight: 1 },
    { arbitrary: notJson, weight: 2 },
    { arbitrary: edge, weight: 2 },
    { arbitrary: nullField, weight: 3 },
    { arbitrary: wrongType, weight: 3 },
    { arbitrary: longString, weight: 2 },
    { arbitrary: longContent, weight: 2 },
  ).filter(fits);
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** A coarse description of a valid body for the summary: what it carries beyond model and messages. */
function labelOf(body: Record<string, unknown>): string {
  const extra = Object.keys(body).filter((k) => !['model', 'messages', 'stream', 'stream_options'].includes(k));
  return extra.length ? 'with parameters' : 'plain';
}
