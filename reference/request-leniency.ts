// How a request body is read beyond the plain strict reading: the defects of lenient
// parsers (almost-JSON, keys matched in any letter case) and the legal variants that
// read differently (an empty messages array, a byte order mark, keys that resemble known
// ones refused).
import type { SchemaViolation } from '../lib/spec/schema-validator.ts';
import type { RequestContext } from './request-context.ts';
import { badRequest } from './errors.ts';

// Stryker disable all: [gate] the defects and variants of how a body is read
/**
 * almost-json-accepted: what lenient parsers (Python's json.loads, JSON5, some Go and Java
 * configurations) accept and RFC 8259 forbids: NaN and Infinity literals, single-quoted
 * strings, trailing commas, comments. Rewrites the text into JSON (strings kept whole);
 * undefined when even that does not parse.
 */
export function parseAlmostJson(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      // A string: copied to its closing quote; a single-quoted one becomes a JSON string.
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== c) { s += text[j] === '\\' ? text[j++]! + (text[j] ?? '') : text[j]; j++; }
      out += c === '"' ? `"${s}"` : JSON.stringify(s.replace(/\\'/g, "'").replace(/\\"/g, '"'));
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else if (c === ',' && /^\s*[}\]]/.test(text.slice(i + 1))) {
      // A trailing comma: dropped.
    } else {
      const word = /^-?(NaN|Infinity)/.exec(text.slice(i));
      // Non-finite numbers: JSON has none, so they arrive as null (Python would keep a float nan).
      if (word) { out += 'null'; i += word[0].length - 1; } else out += c;
    }
  }
  try { return JSON.parse(out); } catch { return undefined; }
}

/** json-bom-tolerated: RFC 8259 §8.1 lets a parser ignore a leading byte order mark. */
export function withoutBom(ctx: RequestContext, raw: string): string {
  return ctx.variant('json-bom-tolerated') && raw.startsWith('\ufeff') ? raw.slice(1) : raw;
}

/** json-bom-tolerated: its refusal of a body that is not JSON names where parsing stopped. */
export function notJsonError(ctx: RequestContext, raw: string) {
  if (!ctx.variant('json-bom-tolerated')) return undefined;
  let at = 0;
  try { JSON.parse(raw); } catch (e) { at = Number(/position (\d+)/.exec(String(e))?.[1] ?? 0); }
  return badRequest(`We could not parse the JSON body of your request (at byte ${at}).`, 'json_invalid');
}

const TOP_FIELDS = ['model', 'messages', 'stream', 'stream_options'];
const MESSAGE_FIELDS = ['role', 'content', 'name', 'tool_calls', 'tool_call_id'];

/** A copy of `o` where a key that equals a known field only when letters are folded stands for that field (Go's encoding/json). */
function foldKeys(o: Record<string, unknown>, known: string[]): Record<string, unknown> {
  const out = { ...o };
  for (const field of known) {
    if (field in out) continue;
    const other = Object.keys(out).find((k) => k.toLowerCase() === field);
    if (other !== undefined) { out[field] = out[other]; delete out[other]; }
  }
  return out;
}

/** keys-case-insensitive: "Model", "MESSAGES", "Role" are read as model, messages, role when those are absent. */
export function caseFolded(ctx: RequestContext, body: unknown): unknown {
  if (!ctx.defect('keys-case-insensitive') || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const top = foldKeys(body as Record<string, unknown>, TOP_FIELDS);
  if (Array.isArray(top.messages)) top.messages = top.messages.map((m) => (m && typeof m === 'object' && !Array.isArray(m) ? foldKeys(m as Record<string, unknown>, MESSAGE_FIELDS) : m));
  return top;
}

/** case-variant-keys-refused: a key that resembles a known field in another letter case is refused, naming the field. */
export function refuseCaseVariants(ctx: RequestContext, body: unknown): void {
  if (!ctx.variant('case-variant-keys-refused') || !body || typeof body !== 'object' || Array.isArray(body)) return;
  const raw = body as Record<string, unknown>;
  const objects: Array<[Record<string, unknown>, string[], string]> = [[raw, TOP_FIELDS, '']];
  if (Array.isArray(raw.messages)) raw.messages.forEach((m, i) => { if (m && typeof m === 'object') objects.push([m as Record<string, unknown>, MESSAGE_FIELDS, `messages[${i}].`]); });
  for (const [o, known, prefix] of objects) {
    const odd = Object.keys(o).find((k) => !known.includes(k) && known.includes(k.toLowerCase()));
    if (odd !== undefined) throw badRequest(`Unrecognized request argument supplied: ${prefix}${odd} (did you mean '${prefix}${odd.toLowerCase()}'?)`, 'unknown_parameter', `${prefix}${odd}`);
  }
}

/** empty-messages-accepted: an empty messages array is served (CHAT-3 rules only a missing or non-array one). */
export function legallyAccepted(ctx: RequestContext, v: SchemaViolation): boolean {
  return ctx.variant('empty-messages-accepted') && v.pointer === '/messages' && v.keyword === 'minItems';
}
// Stryker restore all
