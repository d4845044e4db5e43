// The oracles of generated requests. Each says only what its clause says (test262
// style: the spec anchor decides, never our reference's habits). What is specific to
// generated requests is here: CHAT-2..CHAT-6 for the bodies they made invalid, CHAT-8
// for parameters, the EV clauses for each generated stream (the per-stream rules of
// lib/spec/rules/stream-rules.ts). ERR-1 and ERR-2 are the
// per-response rules of lib/spec/rules/response-rules.ts, applied here to the generated
// requests (reported by the fuzz tests, shrunk); the other per-response rules judge the
// generated requests run-wide from the exchange log. Refusing a parameter with 400 is
// always legal; so is honouring or ignoring it. A 429 that outlasts the client's retry
// budget and a 503 (overload) judge nothing but their error body.
import type { ClauseId } from '../lib/spec/clauses.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { exchangeErrorBodyProblems as errorBodyProblemsOf, summarise } from '../harness/exchange-log.ts';
import { checkResponse, JUDGED_BY_FUZZ_TESTS } from '../lib/spec/rules/response-rules.ts';
import * as ev from '../lib/spec/rules/stream-rules.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import { readStream } from '../lib/spec/rules/stream-reading.ts';
import { streamContentSeen } from '../lib/spec/rules/reply-content.ts';
import type { CaseKind, FuzzCase } from './generators.ts';

export type FuzzClause =
  | 'ERR-1' | 'ERR-2' | 'CHAT-2' | 'CHAT-3' | 'CHAT-4' | 'CHAT-5' | 'CHAT-6' | 'CHAT-8'
  | 'EV-1' | 'EV-2' | 'EV-3' | 'EV-4' | 'EV-5' | 'EV-6' | 'EV-10';

/** The clauses the fuzz phase judges, in report order (one clause test each). */
export const FUZZ_CLAUSES: FuzzClause[] = ['ERR-2', 'ERR-1', 'CHAT-2', 'CHAT-3', 'CHAT-4', 'CHAT-5', 'CHAT-6', 'CHAT-8', 'EV-1', 'EV-2', 'EV-3', 'EV-4', 'EV-5', 'EV-6', 'EV-10'];

export interface Breach {
  clause: FuzzClause;
  expected: string;
  seen: string;
}

/** CHAT-2..CHAT-6: the invalid kinds and the clause that rules them. */
export const INVALID_CLAUSE: Partial<Record<CaseKind, FuzzClause>> = {
  'no-model': 'CHAT-2', 'bad-messages': 'CHAT-3', 'bad-message': 'CHAT-4', 'bad-stream': 'CHAT-5', 'not-json': 'CHAT-6',
};

/** Whether the request asked for a stream (the SDKs decide how to read the answer the same way). */
export function wantsStream(c: FuzzCase): boolean {
  return !!c.body && typeof c.body === 'object' && (c.body as { stream?: unknown }).stream === true;
}

/**
 * Whether EV-* judge the answer: a stream was asked for and the answer is 200 (or none).
 * The spec does not say the brain route streams (BRAIN-6 reports it), so there a JSON
 * answer is legal and only an event stream the route chose to send is judged.
 */
function judgesStream(c: FuzzCase, ex: Exchange): boolean {
  if (!wantsStream(c) || (ex.status !== 200 && ex.status !== undefined)) return false;
  return c.route === 'chat' || ex.status === undefined || ex.mediaType === 'text/event-stream';
}


/** CHAT-8 speaks of requests with parameters or extra fields: a body with nothing beyond model/messages/stream is not its business. */
function hasExtras(c: FuzzCase): boolean {
  const b = c.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return false;
  return Object.keys(b).some((k) => !['model', 'messages', 'stream'].includes(k));
}

/** The clauses that had something to judge in this exchange (for "judged N responses" and inconclusive verdicts). */
export function judgedClauses(c: FuzzCase, ex: Exchange): FuzzClause[] {
  const s = ex.status;
  if (s === 429 || s === 503) return ['ERR-1'];
  const out: FuzzClause[] = ['ERR-2'];
  if (s !== undefined && s >= 400) out.push('ERR-1');
  const invalid = INVALID_CLAUSE[c.kind];
  if (invalid && c.route === 'chat') out.push(invalid);
  if (c.kind === 'valid' && c.route === 'chat' && hasExtras(c)) out.push('CHAT-8');
  if (!invalid && judgesStream(c, ex)) out.push('EV-1', 'EV-2', 'EV-3', 'EV-4', 'EV-5', 'EV-6', 'EV-10');
  return out;
}

const fmt = (ex: Exchange) => ex.status === undefined ? `no response (${ex.error?.message ?? 'unknown'})` : `HTTP ${ex.status}`;

/**
 * What an ordinary request already gets wrong (measured once per campaign): those
 * violations belong to the fixed probes of their own clauses (RES-*, EV-*, ERR-1), and the
 * fuzz phase reports only what its generated requests add.
 */
export interface Baseline {
  /** Schema violations of an ordinary completion, as "pointer-with-*|keyword". */
  completion: Set<string>;
  /** EV clauses an ordinary stream breaks. */
  stream: Set<FuzzClause>;
  /** An ordinary invalid request's 400 lacks a proper error body. */
  errorBodyBroken: boolean;
  /** The status an ordinary stream got when it was not 200 (-1: no answer): every stream fails, SVC-5's finding. */
  streamFailedWith?: number;
}

export const NO_BASELINE: Baseline = { completion: new Set(), stream: new Set(), errorBodyBroken: false };

export const violationKey = (pointer: string, keyword: string) => `${pointer.replace(/\/\d+(?=\/|$)/g, '/*')}|${keyword}`;

/** Measures the baseline from an ordinary completion, an ordinary stream and an ordinary invalid request. */
export function measureBaseline(plain: Exchange, stream: Exchange, invalid: Exchange): Baseline {
  const completion = new Set<string>();
  if (plain.status === 200 && plain.json !== undefined) for (const e of validate('chat-completion', plain.json).errors) completion.add(violationKey(e.pointer, e.keyword));
  const ordinary: FuzzCase = { kind: 'valid', route: 'chat', body: { stream: true }, label: 'baseline' };
  const streamSet = new Set<FuzzClause>(stream.status === 200 ? allStreamBreaches(ordinary, stream).map((b) => b.clause) : []);
  const errorBodyBroken = invalid.status !== undefined && invalid.status >= 400 && errorBodyProblemsOf(invalid).length > 0;
  return { completion, stream: streamSet, errorBodyBroken, ...(stream.status !== 200 ? { streamFailedWith: stream.status ?? -1 } : {}) };
}

/** Every clause this exchange breaks. Statuses 429 and 503 are not judged (throttled, overloaded). */
export function judge(c: FuzzCase, ex: Exchange, base: Baseline = NO_BASELINE): Breach[] {
  const s = ex.status;
  const errorBodyProblems = (e: Exchange) => (base.errorBodyBroken ? [] : errorBodyProblemsOf(e));
  // ERR-1 and ERR-2: the table's rules (ERR-1 left to the fixed probes when an ordinary invalid request already breaks it).
  const out: Breach[] = checkResponse(summarise(ex), JUDGED_BY_FUZZ_TESTS)
    .filter((v) => !(v.clause === 'ERR-1' && base.errorBodyBroken))
    .map((v) => ({ clause: v.clause as FuzzClause, expected: v.expected, seen: `HTTP ${s}: ${v.seen}` }));
  if (s === 429 || s === 503) return out;

  const invalid = INVALID_CLAUSE[c.kind];
  if (invalid && c.route === 'chat') {
    // "400 with an error body" (the brain route's body is not specified: not judged there).
    if (s !== 400) out.push({ clause: invalid, expected: 'HTTP 400 with an error body', seen: fmt(ex) });
    else if (errorBodyProblems(ex).length) out.push({ clause: invalid, expected: 'HTTP 400 with an error body', seen: `HTTP 400: ${errorBodyProblems(ex).join('; ')}` });
    return out;
  }
  if (invalid) return out;

  // A request that got no answer at all: a crash from the server's side.
  if (s === undefined && !wantsStream(c)) {
    out.push({ clause: c.kind === 'valid' && c.route === 'chat' && hasExtras(c) ? 'CHAT-8' : 'ERR-2', expected: 'an answer (never a crash)', seen: fmt(ex) });
    return out;
  }

  if (c.kind === 'valid' && c.route === 'chat' && hasExtras(c)) {
    // CHAT-8: honoured, ignored or refused with 400; never a 5xx. 413 is HTTP's own refusal of a body too large.
    // A generated stream that meets the failure an ordinary stream already met is no CHAT-8 finding.
    const everyStreamFails = wantsStream(c) && base.streamFailedWith !== undefined && (s ?? -1) === base.streamFailedWith;
    if (everyStreamFails) { /* the fixed probes report it (SVC-5, EV-1) */ } else if (s !== undefined && s !== 200 && s !== 400 && s !== 413) {
      out.push({ clause: 'CHAT-8', expected: 'HTTP 200 (honoured or ignored) or 400 (refused)', seen: fmt(ex) });
    } else if (s === 200 && !wantsStream(c)) {
      const problem = completionProblem(c, ex, base);
      if (problem) out.push({ clause: 'CHAT-8', expected: 'HTTP 200 with a chat completion, or a 400', seen: problem });
    }
  }

  if (judgesStream(c, ex)) {
    const ev = streamBreach(c, ex, base);
    if (ev) out.push(ev);
  }
  return out;
}

function completionProblem(c: FuzzCase, ex: Exchange, base: Baseline): string | undefined {
  if (ex.error) return `HTTP 200 cut short: ${ex.error.message}`;
  if (ex.json === undefined) return `HTTP 200 with a body that is not JSON (${ex.headers['content-type'] ?? 'no Content-Type'}): ${(ex.text ?? '').slice(0, 80)}`;
  const errors = validate('chat-completion', ex.json).errors
    // message.content is RES-MSG-1's, judged on every reply by the per-response table (lib/spec/rules/reply-content.ts).
    .filter((e) => !/^\/choices\/\d+\/message\/content$/.test(e.pointer))
    .filter((e) => !base.completion.has(violationKey(e.pointer, e.keyword)));
  return errors.length ? `HTTP 200 with ${errors.slice(0, 3).map((e) => `${e.message} [${e.clause}]`).join('; ')}` : undefined;
}

/**
 * The first EV clause a stream breaks, in the order a client meets them: no event stream
 * (EV-1), never finished (EV-10), not SSE (EV-2), not chunks (EV-3), no [DONE] (EV-6),
 * finish reasons (EV-5), empty reply (EV-4). Later ones are consequences: named in the
 * message, not reported on their own clause.
 */
export function streamBreach(c: FuzzCase, ex: Exchange, base: Baseline = NO_BASELINE): Breach | undefined {
  const found = allStreamBreaches(c, ex).filter((b) => !base.stream.has(b.clause));
  if (!found.length) return undefined;
  const [first, ...rest] = found;
  return rest.length ? { ...first!, seen: `${first!.seen} (then also: ${rest.map((b) => b.clause).join(', ')})` } : first;
}

function allStreamBreaches(c: FuzzCase, ex: Exchange): Breach[] {
  const found: Breach[] = [];
  if (ex.status === undefined) return [{ clause: 'EV-10', expected: 'the stream to finish', seen: fmt(ex) }];
  if (ex.mediaType !== 'text/event-stream') return [{ clause: 'EV-1', expected: 'Content-Type text/event-stream', seen: `Content-Type ${ex.headers['content-type'] ?? '(none)'}` }];
  if (ex.error) found.push({ clause: 'EV-10', expected: 'the stream to finish and close', seen: ex.error.message });
  const r = readStream(ex);
  const breach = (v: ev.StreamViolation | undefined) => { if (v) found.push({ clause: v.clause, expected: v.expected, seen: v.seen }); };
  breach(ev.framing(ex.stream?.problems ?? [], r));
  breach(ev.chunkShapes(r, (json) => validate('chat-completion-chunk', json).errors.map((e) => e.message))[0]);
  breach(ev.done(r));
  // "stop" on a normal completion: with max_tokens/stop/tools the end may be "length" or "tool_calls"; only the count and the order are judged.
  breach(ev.finishes(r)[0]);
  // EV-4 by the one rule (a token cap is no exception: it leaves a string content at least).
  const empty = streamContentSeen(r, c.body);
  if (empty) found.push({ clause: 'EV-4', expected: 'non-empty delta.content for choice 0', seen: empty });
  return found;
}
