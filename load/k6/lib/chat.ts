// Chat requests and the per-response judgement the scripts share: status, media
// type and schema of every answer, so a run under load catches wrong shapes, not
// only slow ones. Check names are stable: summaries and self-tests key on them.
import { check } from 'k6';
import { request, type Response } from 'k6/http';
import exec from 'k6/execution';
import { extraHeaders, redact } from './config.ts';
import { extraBodyFromEnv, nextRequest, workloadSpec } from './workload.ts';
import { withExtraBody } from '../../workload/extra-body.ts';
import { bodyShapeFailures, completionTokens, recordStatus } from './metrics.ts';
import { checkShape, parseJson, type ShapeName } from './shape.ts';
import { errorBodyProblems } from '../../../lib/spec/error-body.ts';
import { Distribution } from './distributions.ts';

/** http_req_duration of 200 answers in mergeable form (lib/distributions.ts): the {status:200} threshold's samples. */
const reqDist = new Distribution('req_ms');

export const CHECK = {
  status: 'status is 2xx or 429',
  jsonType: 'completion: Content-Type is JSON',
  completionShape: 'completion: body is a chat completion (schema)',
  errorShape: 'error status: body is an error object (schema)',
} as const;

export type Tags = Record<string, string>;

/** Header lookup without caring how k6 canonicalised the name (Retry-After-Ms...). */
export function header(res: Response, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const k of Object.keys(res.headers)) if (k.toLowerCase() === wanted) return res.headers[k];
  return undefined;
}

export function bodyText(res: Response): string {
  return typeof res.body === 'string' ? res.body : '';
}

/** The workload (lib/workload.ts), read at init so a bad value stops the run before any request. */
export const WORKLOAD = workloadSpec();
/** EXTRA_BODY, read at init like the workload. */
export const EXTRA_BODY = extraBodyFromEnv();

/**
 * A chat request body. By default the workload's (lib/workload.ts): PROMPT or synthetic
 * prompts of PROMPT_TOKENS, a SHARED_PREFIX_TOKENS system prompt, max_tokens from
 * OUTPUT_TOKENS or MAX_TOKENS. `fixed` (the rate-limit probe): PROMPT naming the VU by
 * exec.vu.idInTest, unique across every runner of a distributed test (__VU restarts at
 * 1 on each runner), so a response cache cannot turn the load test into a cache test.
 */
export function chatBody(model: string | undefined, opts: { stream?: boolean; extra?: Record<string, unknown>; fixed?: boolean } = {}): Record<string, unknown> {
  const r = opts.fixed
    ? { messages: [{ role: 'user', content: `${WORKLOAD.prompt} (chatgate k6: vu ${exec.vu.idInTest}, iteration ${exec.vu.iterationInScenario})` }], maxTokens: WORKLOAD.maxTokens }
    : nextRequest(WORKLOAD);
  const body: Record<string, unknown> = { messages: r.messages };
  if (model !== undefined) body.model = model;
  if (opts.stream) body.stream = true;
  if (r.maxTokens !== undefined) body.max_tokens = r.maxTokens;
  withExtraBody(body, EXTRA_BODY);
  if (opts.extra) for (const k of Object.keys(opts.extra)) body[k] = opts.extra[k];
  return body;
}

export function postJson(url: string, body: unknown, key: string, tags: Tags, timeoutMs: number): Response {
  return request('POST', url, JSON.stringify(body), {
    headers: { ...extraHeaders(), Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    tags,
    timeout: timeoutMs,
    responseType: 'text',
  });
}

let logged = 0;
/** The first few problems of each VU go to the log (redacted: a target may echo the key). */
export function logProblem(text: string): void {
  if (logged >= 3) return;
  logged++;
  console.warn(redact(`chatgate k6: ${text}`));
}

/** Judges a body against a schema and feeds chatgate_body_shape_failures (0 or 1). */
export function recordShape(name: ShapeName, data: unknown, status: number, tags: Tags): boolean {
  const r = checkShape(name, data);
  bodyShapeFailures.add(r.ok ? 0 : 1, { ...tags, schema: name, clause: r.ok ? 'none' : r.clause });
  if (!r.ok) {
    const what = data === undefined ? 'body is not JSON (or empty)' : r.problems.join('; ');
    logProblem(`HTTP ${status} ${tags.name ?? ''}: ${name} shape broken (${r.clause}): ${what}`);
  }
  return r.ok;
}

/**
 * Every failing status must carry the error envelope (ERR-1, ERR-4 for 503, LIM-1 for
 * 429), judged by the rule the suite and the load harness use (lib/spec/error-body.ts).
 */
export function judgeErrorBody(res: Response, tags: Tags): boolean {
  const text = bodyText(res);
  const shapeOk = recordShape('error', parseJson(text), res.status, tags);
  const problems = errorBodyProblems(header(res, 'content-type'), text, (json) => checkShape('error', json).problems);
  if (shapeOk && problems.length > 0) logProblem(`HTTP ${res.status} ${tags.name ?? ''}: not an error body: ${problems.join('; ')}`);
  const ok = problems.length === 0;
  check(ok, { [CHECK.errorShape]: (v) => v }, tags);
  return ok;
}

export function isJsonType(res: Response): boolean {
  const ct = (header(res, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return ct === 'application/json' || (ct.indexOf('application/') === 0 && ct.slice(-5) === '+json');
}

/** A non-streaming chat answer: 2xx with a chat completion, or an error envelope. */
export function judgeCompletion(res: Response, tags: Tags): void {
  recordStatus(res.status, tags);
  if (res.status === 200) reqDist.add(res.timings.duration);
  check(res, { [CHECK.status]: (r) => (r.status >= 200 && r.status < 300) || r.status === 429 }, tags);
  if (res.status >= 200 && res.status < 300) {
    const data = parseJson(bodyText(res));
    check(res, { [CHECK.jsonType]: (r) => isJsonType(r) }, tags);
    const ok = recordShape('chat-completion', data, res.status, tags);
    check(ok, { [CHECK.completionShape]: (v) => v }, tags);
    if (ok) completionTokens.add((data as { usage: { completion_tokens: number } }).usage.completion_tokens, tags);
  } else if (res.status >= 400) {
    judgeErrorBody(res, tags);
  } else if (res.status === 0) {
    logProblem(`no response from ${tags.name ?? 'the target'}: ${res.error}`);
  }
}
