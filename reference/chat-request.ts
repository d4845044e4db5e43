// Reads and checks a chat request body: Content-Type, JSON, the project's
// chat-request schema (the same one the suite judges requests by), then the usual
// OpenAI parameters the schema leaves open. The first problem becomes a 400 naming
// the field in `param`, as OpenAI does.
import { validate, type SchemaViolation } from '../lib/spec/schema-validator.ts';
import type { RequestContext } from './request-context.ts';
import { badRequest, serverError } from './errors.ts';
import { ApiError } from './api-error.ts';
import { caseFolded, legallyAccepted, notJsonError, parseAlmostJson, refuseCaseVariants, withoutBom } from './request-leniency.ts';

export interface ChatRequest {
  model: string;
  messages: unknown[];
  /** stream === true exactly. */
  stream: boolean;
  /** The request said stream: false explicitly (stream-false-sse keys on it). */
  streamExplicitFalse: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  n: number;
  raw: Record<string, unknown>;
}

export const MAX_CHOICES = 8;

/** Top-level fields an OpenAI-style client may send; only unknown-param-500 cares. */
// Stryker disable StringLiteral,ArrayDeclaration: [gate] unknown-param-500 fuzz-deep-unknown-500 +1
const KNOWN_PARAMS = new Set([
  'model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens',
  'n', 'user', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'seed',
  'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call', 'metadata',
  'store', 'service_tier', 'modalities', 'audio', 'prediction', 'reasoning_effort', 'verbosity', 'web_search_options',
]);
// Stryker restore StringLiteral,ArrayDeclaration

// Stryker disable next-line StringLiteral: [roles] CHAT-4 CHAT-9
const KNOWN_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** What bad-json-200 serves instead of an unparsable body. */
// Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: [gate] bad-json-200 CHAT-6
const DEFAULT_REQUEST = { model: 'svc-auto', messages: [{ role: 'user', content: '' }] };

// Stryker disable all: [not-sent] Content-Type
function isJsonMediaType(value: string | undefined): boolean {
  if (!value) return false;
  // Stryker restore all
  // Stryker disable next-line MethodExpression: [not-sent] Content-Type; killed: BRAIN-1
  const mime = value.split(';')[0]!.trim().toLowerCase();
  // Stryker disable next-line ConditionalExpression,LogicalOperator,MethodExpression,StringLiteral: [not-sent] Content-Type
  return mime === 'application/json' || (mime.startsWith('application/') && mime.endsWith('+json'));
}

/** Content-Type check and JSON parse (with the bad-JSON defects). */
export async function readJsonBody(ctx: RequestContext): Promise<unknown> {
  // Stryker disable all: [not-sent] Content-Type
  if (!isJsonMediaType(ctx.req.headers['content-type'])) {
    // Read (and drop) the body anyway so an oversized one still gets its 413.
    await ctx.body();
    throw badRequest('Content-Type must be application/json.', 'invalid_content_type');
  }
  // Stryker restore all
  const raw = withoutBom(ctx, (await ctx.body()).toString('utf8'));
  try {
    // The catch's block: a directive must lead a node, and '} catch {' leads none, so this region opens after the try block and closes inside the catch.
    // Stryker disable BlockStatement: [msg-free] ERR-3
    return JSON.parse(raw);
  } catch {
    // Stryker restore BlockStatement
    if (ctx.defect('almost-json-accepted')) {
      const lenient = parseAlmostJson(raw);
      if (lenient !== undefined) return lenient;
    }
    if (ctx.defect('fuzz-trailing-garbage-accepted')) {
      const lenient = firstObject(raw);
      if (lenient !== undefined) return lenient;
    }
    // fuzz-noisy-three-clauses: an object with a stray closing brace (trailing garbage) gets a text/plain 400.
    // Stryker disable next-line all: [gate] fuzz-noisy-three-clauses CHAT-6
    if (ctx.defect('fuzz-noisy-three-clauses') && raw.startsWith('{') && raw.split('}').length > raw.split('{').length) throw badRequest('The request body is not valid JSON.', 'invalid_json').withForm('text');
    if (ctx.defect('bad-json-500')) throw serverError('Internal error while reading the request.');
    if (ctx.defect('bad-json-200')) return structuredClone(DEFAULT_REQUEST);
    throw notJsonError(ctx, raw) ?? badRequest('The request body is not valid JSON.', 'invalid_json');
  }
}

/** "/messages/0/role" -> "messages[0].role", the form OpenAI uses in `param`. */
// Stryker disable all: [msg-free] ERR-3
export function paramFromPointer(pointer: string): string | null {
  if (pointer === '') return null;
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  }
  return out;
}
// Stryker restore all

/** Violations the accepts-* defects pretend not to see. */
function ignoredByDefect(ctx: RequestContext, v: SchemaViolation, body: unknown): boolean {
  const p = v.pointer;
  const raw = (body ?? {}) as Record<string, unknown>;
  if (ctx.defect('fuzz-model-bool-accepted') && p === '/model' && v.keyword !== 'required' && typeof raw.model !== 'number') return true;
  if (ctx.defect('fuzz-later-content-accepted') && /^\/messages\/[1-9]\d*\/content(\/|$)/.test(p)) return true;
  if (ctx.defect('fuzz-stream-number-accepted') && p === '/stream' && typeof raw.stream !== 'string') return true;
  if (ctx.defect('accepts-missing-model') && p === '/model' && v.keyword === 'required') return true;
  if (ctx.defect('accepts-model-number') && p === '/model' && v.keyword !== 'required') return true;
  if (ctx.defect('accepts-missing-messages') && p === '/messages' && v.keyword === 'required') return true;
  if (ctx.defect('accepts-messages-object') && p === '/messages' && v.keyword === 'type') return true;
  if (ctx.defect('accepts-message-without-role') && /^\/messages\/\d+\/role$/.test(p) && v.keyword === 'required') return true;
  if (ctx.defect('accepts-content-number') && /^\/messages\/\d+\/content(\/|$)/.test(p)) return true;
  // stream-content-type-unchecked: the streaming path's own validator reads content as it comes.
  if (ctx.defect('stream-content-type-unchecked') && raw.stream === true && /^\/messages\/\d+\/content(\/|$)/.test(p)) return true;
  if (ctx.defect('stream-not-boolean-accepted') && p === '/stream') return true;
  return false;
}

function violationError(v: SchemaViolation) {
  const param = paramFromPointer(v.pointer);
  let message: string;
  let code: string;
  // Stryker disable next-line ConditionalExpression,StringLiteral: [msg-free] ERR-3
  if (v.keyword === 'required') {
    message = `Missing required parameter: '${param}'.`;
    // The else-if's test: '} else if' leads no node, so a region (opened here, closed in its block).
    // Stryker disable ConditionalExpression,EqualityOperator: [msg-free] ERR-3
    code = 'missing_required_parameter';
  } else if (param === null) {
    // Stryker restore ConditionalExpression,EqualityOperator
    // Stryker disable next-line StringLiteral: [unreached] the mutation run's fuzz budget
    message = 'The request body must be a JSON object.';
    // Stryker disable next-line StringLiteral: [unreached] the mutation run's fuzz budget
    code = 'invalid_type';
  } else {
    // The validator's message starts with the pointer; name the field instead.
    // Stryker disable next-line MethodExpression: [msg-free] ERR-3
    const detail = v.message.startsWith(v.pointer) ? v.message.slice(v.pointer.length).trim() : v.message;
    message = `Invalid value for '${param}': ${detail}.`;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: [msg-free] ERR-3
    code = v.keyword === 'type' || v.keyword === 'anyOf' ? 'invalid_type' : 'invalid_value';
  }
  return badRequest(message, code, param);
}

// Stryker disable all: [gate] accepts-missing-messages accepts-messages-object CHAT-3
/** What those defects make of messages that are not an array: one message, or none. */
function messagesNotAnArray(m: unknown): unknown[] {
  return m && typeof m === 'object' ? [m] : [];
}
// Stryker restore all

// Stryker disable all: [gate] params-ignored
function ignoredNumber(raw: Record<string, unknown>, name: string, check: (n: number) => boolean): number | undefined {
  const v = raw[name];
  return typeof v === 'number' && check(v) ? v : undefined;
}
// Stryker restore all

function checkedNumber(
  raw: Record<string, unknown>,
  name: string,
  check: (n: number) => boolean,
  expected: string,
): number | undefined {
  const v = raw[name];
  // Stryker disable next-line ConditionalExpression,EqualityOperator: [chat-8] params
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !check(v)) {
    throw badRequest(`Invalid value for '${name}': expected ${expected}.`, 'invalid_value', name);
  }
  return v;
}

/** Validates a parsed body; throws the 400 for the first problem. */
export function parseChatRequest(ctx: RequestContext, read: unknown): ChatRequest {
  const body = caseFolded(ctx, read);
  refuseCaseVariants(ctx, body);
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,BlockStatement: [equiv] unknown-param-500 params-500
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const raw = body as Record<string, unknown>;
    if (ctx.defect('unknown-param-500') && Object.keys(raw).some((k) => !KNOWN_PARAMS.has(k))) {
      throw serverError('Internal error: unexpected request parameter.');
    }
    if (ctx.defect('params-500') && ('temperature' in raw || 'stream_options' in raw)) {
      throw serverError('Internal error while applying request parameters.');
    }
  }

  fuzzOnlyDefects(ctx, body);
  refuseUnknownParams(ctx, body);
  const result = validate('chat-request', body);
  const first = result.errors.find((v) => !ignoredByDefect(ctx, v, body) && !legallyAccepted(ctx, v));
  if (first) throw violationError(first);
  const raw = body as Record<string, unknown>;

  // Normalise what the accepts-* defects let through.
  // Stryker disable next-line StringLiteral: [gate] accepts-missing-model accepts-model-number CHAT-2
  const model = typeof raw.model === 'string' ? raw.model : 'svc-auto';
  const messages = Array.isArray(raw.messages) ? raw.messages : messagesNotAnArray(raw.messages);

  // Stryker disable next-line BlockStatement: [roles] CHAT-4 CHAT-9
  messages.forEach((m, i) => {
    const role = (m as { role?: unknown } | null)?.role;
    if (typeof role !== 'string') return; // only reachable through accepts-message-without-role
    // Stryker disable next-line BlockStatement: [roles] CHAT-4 CHAT-9
    if (!KNOWN_ROLES.has(role)) {
      // Stryker disable next-line MethodExpression,StringLiteral: [msg-free] ERR-3; killed: fuzz ERR-3
      throw badRequest(`Invalid value for 'messages[${i}].role': "${role.slice(0, 40)}" is not a known role.`, 'invalid_value', `messages[${i}].role`);
    }
    if (ctx.defect('multi-turn-rejected') && role !== 'user') {
      throw badRequest(`Invalid value for 'messages[${i}].role': only "user" messages are supported.`, 'invalid_value', `messages[${i}].role`);
    }
  });

  // params-ignored: a server that reads none of the optional parameters (all ignored, never refused).
  const readNumber = ctx.variant('params-ignored') ? ignoredNumber : checkedNumber;
  // Stryker disable next-line all: [chat-8] params
  const optionalNumber: typeof checkedNumber = (...args) => noisyParamError(ctx, () => readNumber(...args));
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [chat-8] params
  const n = optionalNumber(raw, 'n', (v) => Number.isInteger(v) && v >= 1 && v <= MAX_CHOICES, `an integer from 1 to ${MAX_CHOICES}`) ?? 1;
  // Stryker disable ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [chat-8] params
  const maxTokens =
    optionalNumber(raw, 'max_tokens', (v) => Number.isInteger(v) && v >= 1, 'a positive integer') ??
    optionalNumber(raw, 'max_completion_tokens', (v) => Number.isInteger(v) && v >= 1, 'a positive integer');
  optionalNumber(raw, 'temperature', (v) => v >= 0 && v <= 2, 'a number from 0 to 2');
  optionalNumber(raw, 'top_p', (v) => v >= 0 && v <= 1, 'a number from 0 to 1');
  // Stryker restore ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral

  const streamOptions = raw.stream_options;
  // Stryker disable ConditionalExpression,LogicalOperator,BooleanLiteral,EqualityOperator: [usage] EV-9; killed: BRAIN-1
  const includeUsage =
    !!streamOptions && typeof streamOptions === 'object' && (streamOptions as { include_usage?: unknown }).include_usage === true;
  // Stryker restore ConditionalExpression,LogicalOperator,BooleanLiteral,EqualityOperator

  return {
    model,
    messages,
    stream: raw.stream === true,
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: [gate] stream-false-sse CHAT-1
    streamExplicitFalse: raw.stream === false,
    includeUsage,
    maxTokens,
    n,
    raw,
  };
}

// --- fuzz-only defects: only generated requests meet them ------------------------------
// Stryker disable all: [gate] fuzz-only unknown-params-400
// Crashes on what fixed probes never send (a parameter's type, value or size, a role, a
// kind of character, many messages, deep unknown fields), each switched on alone.

// Stryker disable next-line Regex: [gate] fuzz-rtl-stream-no-done EV-6
const RTL = /[\u0590-\u08ff\u200f\u202b\u202e\u2067]/;
// Stryker disable next-line Regex: [gate] fuzz-lone-surrogate-500 ERR-2
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Every text of the request's messages: string contents and the text of parts. */
function texts(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    const c = (m as { content?: unknown } | null)?.content;
    if (typeof c === 'string') out.push(c);
    if (Array.isArray(c)) for (const part of c) if (typeof (part as { text?: unknown })?.text === 'string') out.push((part as { text: string }).text);
  }
  return out;
}

function depth(v: unknown): number {
  if (!v || typeof v !== 'object') return 0;
  let d = 0;
  for (const x of Object.values(v as object)) d = Math.max(d, depth(x));
  return d + 1;
}

/**
 * unknown-params-400: refuses every top-level field that is not an OpenAI chat parameter,
 * as OpenAI itself does ("Unrecognized request argument supplied"). "Unknown" is measured
 * against the OpenAI API's own list (KNOWN_PARAMS), not against what this server reads:
 * clients send stream_options, n, stop, tools... and a server that refused those would not
 * be OpenAI-compatible; a field no OpenAI API defines (chatgate_unknown_field) may be refused.
 */
function refuseUnknownParams(ctx: RequestContext, body: unknown): void {
  if (!ctx.variant('unknown-params-400') || !body || typeof body !== 'object' || Array.isArray(body)) return;
  const unknown = Object.keys(body).find((k) => !KNOWN_PARAMS.has(k));
  if (unknown !== undefined) throw badRequest(`Unrecognized request argument supplied: ${unknown.slice(0, 60)}`, 'unknown_parameter', unknown.slice(0, 60));
}

/** Whether a stream for this request loses its [DONE] (fuzz-rtl-stream-no-done). */
export function rtlStreamDefect(ctx: RequestContext, req: ChatRequest): boolean {
  return ctx.defect('fuzz-rtl-stream-no-done') && texts(req.raw).some((t) => RTL.test(t));
}

function fuzzOnlyDefects(ctx: RequestContext, body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const raw = body as Record<string, unknown>;
  const messages = Array.isArray(raw.messages) ? raw.messages as Array<Record<string, unknown> | null> : [];
  const crash = () => { throw serverError('Internal error while preparing the request.'); };
  if (ctx.defect('fuzz-temperature-type-500') && raw.temperature !== undefined && raw.temperature !== null && typeof raw.temperature !== 'number') crash();
  if (ctx.defect('fuzz-max-tokens-huge-500') && [raw.max_tokens, raw.max_completion_tokens].some((v) => typeof v === 'number' && v >= 65_536)) crash();
  if (ctx.defect('fuzz-stop-array-500') && Array.isArray(raw.stop)) crash();
  if (ctx.defect('fuzz-deep-unknown-500') && Object.keys(raw).some((k) => !KNOWN_PARAMS.has(k) && depth(raw[k]) > 8)) crash();
  if (ctx.defect('fuzz-developer-role-500') && messages.some((m) => m?.role === 'developer')) crash();
  if (ctx.defect('fuzz-long-content-500') && messages.some((m) => typeof m?.content === 'string' && m.content.length > 4096)) crash();
  if (ctx.defect('fuzz-nul-500') && texts(raw).some((t) => t.includes('\u0000'))) crash();
  if (ctx.defect('fuzz-lone-surrogate-500') && texts(raw).some((t) => LONE_SURROGATE.test(t))) crash();
  if (ctx.defect('fuzz-many-messages-500') && messages.length > 32) crash();
  if (ctx.defect('fuzz-content-parts-500') && messages.some((m) => Array.isArray(m?.content))) crash();
  if (ctx.defect('fuzz-brain-tool-role-500') && ctx.path.startsWith('/v1/brains/') && messages.some((m) => m?.role === 'tool')) crash();
  if (ctx.defect('fuzz-temperature-string-500') && typeof raw.temperature === 'string') crash();
  if (ctx.defect('fuzz-top-p-max-500') && raw.top_p === 1) crash();
  if (ctx.defect('fuzz-stop-empty-500') && (raw.stop === '' || (Array.isArray(raw.stop) && raw.stop.includes('')))) crash();
  if (ctx.defect('fuzz-noisy-three-clauses') && messages.some((m) => m && typeof m === 'object' && 'name' in m)) crash();
  if (ctx.defect('fuzz-stop-length-500') && Array.isArray(raw.stop) && raw.stop.length === 3) crash();
  if (ctx.defect('fuzz-dollar-key-500') && messages.some((m) => hasDollarKey(m))) crash();
  if (ctx.defect('fuzz-messages-400-no-body') && (typeof raw.messages === 'number' || typeof raw.messages === 'boolean' || raw.messages === null)) {
    throw badRequest('Invalid messages.', 'invalid_type', 'messages').withForm('empty');
  }
}

/** fuzz-dollar-key-500: a key starting with "$" at any depth. */
function hasDollarKey(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  return Object.entries(v).some(([k, x]) => k.startsWith('$') || hasDollarKey(x));
}

/** fuzz-noisy-three-clauses: a parameter's value refused with 400 goes out as text/plain. */
function noisyParamError<T>(ctx: RequestContext, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw ctx.defect('fuzz-noisy-three-clauses') && err instanceof ApiError ? err.withForm('text') : err;
  }
}

/** fuzz-trailing-garbage-accepted: the shortest prefix ending in "}" that parses as a JSON object. */
function firstObject(text: string): unknown {
  for (let i = text.indexOf('}'); i !== -1; i = text.indexOf('}', i + 1)) {
    try {
      const v = JSON.parse(text.slice(0, i + 1));
      if (v && typeof v === 'object' && !Array.isArray(v)) return v;
    } catch { /* keep looking */ }
  }
  return undefined;
}
// Stryker restore all
