// What "error body" means everywhere in the catalog: status >= 400, Content-Type
// application/json (parameters allowed), and {"error": {message, type, code}} with
// string members. Used by per-test checks and by the run-wide ERR-1 check alike.
import type { Exchange } from './http-client.ts';
import { describe, validate } from './schema-validator.ts';

/** Problems with an exchange's error body; empty when it is a proper one. */
export function errorBodyProblems(ex: Exchange): string[] {
  if (ex.error && ex.status === undefined) return [`no response (${ex.error.message})`];
  const problems: string[] = [];
  if (ex.mediaType !== 'application/json') {
    problems.push(`Content-Type is ${ex.headers['content-type'] === undefined ? 'missing' : JSON.stringify(ex.headers['content-type'])}, expected application/json`);
  }
  const text = ex.text ?? '';
  if (text.trim() === '') return [...problems, 'the body is empty'];
  let body: unknown = ex.json;
  if (body === undefined) {
    try { body = JSON.parse(text); } catch { return [...problems, `the body is not JSON: ${describe(text, 120)}`]; }
  }
  for (const v of validate('error', body).errors) problems.push(v.message);
  return problems;
}

/** type/code/param of an error body, for ERR-3 and ERR-5. */
export function errorFields(ex: Exchange): { message?: unknown; type?: unknown; code?: unknown; hasParam: boolean } | undefined {
  const err = (ex.json as { error?: Record<string, unknown> } | undefined)?.error;
  if (!err || typeof err !== 'object') return undefined;
  return { message: err.message, type: err.type, code: err.code, hasParam: Object.prototype.hasOwnProperty.call(err, 'param') };
}
