// What "error body" means everywhere in the catalog, in one place for the suite, the
// load harness and the k6 bundles: status >= 400, Content-Type application/json
// (parameters allowed), and {"error": {message, type, code}} with string members
// (schemas/error.schema.json). And what ERR-3 asks of any error object a response
// carries: message, type and code non-empty strings.
//
// Judged from a Content-Type header and the body text, with the schema check passed
// in (ajv in Node: lib/spec/schema-validator.ts errorSchemaProblems; the standalone
// validators inside a k6 bundle): this module imports nothing, so esbuild can bundle
// it for k6 (ES2017, no Node APIs).

/** Problems a schema validator finds with a parsed body; empty when it is valid. */
export type ShapeProblems = (json: unknown) => string[];

/** Problems with an error answer's body; empty when it is a proper error body. */
export function errorBodyProblems(contentType: string | undefined, text: string, shape: ShapeProblems): string[] {
  const problems: string[] = [];
  if (contentType === undefined || contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    problems.push(`Content-Type is ${contentType === undefined ? 'missing' : JSON.stringify(contentType)}, expected application/json`);
  }
  if (text.trim() === '') return problems.concat(['the body is empty']);
  const json = parseJson(text);
  if (json === undefined) return problems.concat([`the body is not JSON: ${excerpt(text, 120)}`]);
  return problems.concat(shape(json));
}

/** The `error` object of a body, whatever its members hold (ERR-3, ERR-5 judge them). */
export interface ErrorObject {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  hasParam: boolean;
}

/** The `error` object of a parsed body, or undefined when the body has none. */
export function errorObjectOf(json: unknown): ErrorObject | undefined {
  const err = json !== null && typeof json === 'object' ? (json as { error?: unknown }).error : undefined;
  if (err === null || typeof err !== 'object' || Array.isArray(err)) return undefined;
  const e = err as Record<string, unknown>;
  return { message: e.message, type: e.type, code: e.code, hasParam: Object.prototype.hasOwnProperty.call(e, 'param') };
}

/** ERR-3: which of message, type, code is not a non-empty string (a missing or null code included). */
export function emptyErrorMembers(e: ErrorObject): string[] {
  const out: string[] = [];
  for (const k of ['message', 'type', 'code'] as const) {
    const v = e[k];
    if (typeof v !== 'string' || v.trim() === '') out.push(`${k} ${v === undefined ? 'missing' : JSON.stringify(v)}`);
  }
  return out;
}

/** Parses a JSON body; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (_e) {
    return undefined;
  }
}

function excerpt(text: string, max: number): string {
  const s = JSON.stringify(text);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
