// Tells distinct failures apart: a signature is (clause, status, the fields that made the
// difference). The difference is read off the shrunk body: what is left in it beyond the
// smallest ordinary request (a known model, one user message of plain text) is what the
// failure needs. Paths are generalised (messages[3] -> messages[]) and values classed
// (a string with a NUL, an integer >= 65536, nesting 12 deep), so two raw failures of one
// bug share a signature and one bug is reported once.
import type { FuzzCase } from './generators.ts';

const KNOWN_TOP = new Set([
  'model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'n', 'stop', 'max_tokens', 'max_completion_tokens',
  'presence_penalty', 'frequency_penalty', 'logit_bias', 'seed', 'user', 'response_format', 'tools', 'tool_choice',
  'parallel_tool_calls', 'logprobs', 'top_logprobs', 'functions', 'function_call', 'metadata', 'store',
]);

/** Character classes that decide how a parser treats a string. */
function stringClass(s: string): string[] {
  const out: string[] = [];
  if (s.includes('\u0000')) out.push('NUL');
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)) out.push('lone-surrogate');
  if (/[\u0590-\u08ff\u200f\u202b\u202e\u2067]/.test(s)) out.push('right-to-left');
  if (/[\u0300-\u036f]/.test(s)) out.push('combining');
  if (/\p{Extended_Pictographic}/u.test(s)) out.push('emoji');
  if (/[\u0001-\u0008\u000b-\u001f\u007f\u2028\u2029\ufeff]/.test(s)) out.push('control');
  if (s.length > 1000) out.push(`length>${Math.pow(2, Math.floor(Math.log2(s.length)))}`);
  return out;
}

function numberClass(n: number): string {
  if (!Number.isInteger(n)) return n < 0 ? 'negative-fraction' : 'fraction';
  if (n < 0) return 'negative-integer';
  if (n >= 65_536) return 'integer>=65536';
  return 'integer';
}

function depthOf(v: unknown): number {
  if (!v || typeof v !== 'object') return 0;
  let d = 0;
  for (const x of Object.values(v as object)) d = Math.max(d, depthOf(x));
  return d + 1;
}

/** Features of a body: "path:class" strings. */
export function features(body: unknown): string[] {
  const out = new Set<string>();
  const visit = (v: unknown, path: string, depth: number) => {
    if (depth > 8) { out.add(`${path}:depth>=${Math.pow(2, Math.floor(Math.log2(depthOf(v) + depth)))}`); return; }
    if (v === null) { out.add(`${path}:null`); return; }
    if (Array.isArray(v)) {
      if (depth <= 3) out.add(`${path}:array`);
      if (path === 'messages' && v.length > 1) out.add(`messages:count>${Math.pow(2, Math.floor(Math.log2(v.length - 1)))}`);
      if (v.length > 100) out.add(`${path}:items>${Math.pow(2, Math.floor(Math.log2(v.length)))}`);
      v.slice(0, 100).forEach((x) => visit(x, `${path}[]`, depth + 1));
      return;
    }
    switch (typeof v) {
      case 'object':
        if (path !== '' && depth <= 3) out.add(`${path}:object`);
        // Unknown top-level fields are one family whatever their name.
        for (const [k, x] of Object.entries(v as object)) visit(x, path ? `${path}.${k}` : KNOWN_TOP.has(k) ? k : '(unknown field)', depth + 1);
        return;
      case 'string': {
        const cls = stringClass(v);
        // Roles and part types are vocabulary: their value is the feature.
        if (/(^|\.)role$|\.type$/.test(path)) out.add(`${path}=${JSON.stringify(v.slice(0, 20))}`);
        else out.add(`${path}:string`);
        // The text of a content part is message text like string content: one family.
        for (const c of cls) out.add(`${path.replace(/\.content\[\]\.text$/, '.content')}:${c}`);
        return;
      }
      case 'number': out.add(`${path}:${numberClass(v)}`); return;
      case 'boolean': out.add(`${path}:${v}`); return;
    }
  };
  visit(body, '', 0);
  // What a body lacks can be what makes the difference too.
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (!('model' in b)) out.add('model:missing');
    if (!('messages' in b)) out.add('messages:missing');
    if (Array.isArray(b.messages) && b.messages.some((m) => m && typeof m === 'object' && !('role' in m))) out.add('messages[].role:missing');
  }
  return [...out].sort();
}

/** What any ordinary request has; never part of a difference. */
const ORDINARY = new Set([
  'model:string', 'messages:array', 'messages[]:object', 'messages[].role="user"', 'messages[].content:string',
  'stream:true', 'stream:false',
]);

/** The fields that made the difference: a shrunk body's features beyond the ordinary. */
export function difference(c: FuzzCase): string[] {
  if (c.body === undefined) return [];
  return features(c.body).filter((f) => !ORDINARY.has(f) && !(c.route === 'brain' && f === 'model:missing'));
}

export function signature(clause: string, status: number | undefined, c: FuzzCase, diff: string[]): string {
  const stream = (c.body as { stream?: unknown } | undefined)?.stream === true ? ' stream' : '';
  return `${clause} ${status ?? 'no-response'} ${c.route === 'brain' ? 'brain-route' : 'chat'}${stream} ${c.kind}${c.raw !== undefined ? ` ${c.label}` : ''} [${diff.join(', ') || 'ordinary request'}]`;
}

/** Whether a raw failure shows everything a shrunk failure needed (then it is the same bug, most likely). */
export function covers(rawFeatures: Set<string>, diff: string[]): boolean {
  return diff.every((f) => rawFeatures.has(f) || (f.includes('>') && [...rawFeatures].some((r) => sameFamily(r, f))));
}

/** "length>2048" covers "length>4096" etc.: the same class at another size bucket. */
function sameFamily(a: string, b: string): boolean {
  const cut = (s: string) => s.replace(/>=?\d+$/, '');
  const num = (s: string) => Number(/(\d+)$/.exec(s)?.[1] ?? NaN);
  return cut(a) === cut(b) && num(a) >= num(b);
}
