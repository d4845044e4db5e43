// One conformance test = one clause.
// `clause('auth/missing-key/models', 'AUTH-1', 'no key on GET /models', async (t) => ...)`
// registers a vitest test titled "AUTH-1 no key on GET /models" whose stable id
// (results.json, EXPECTATIONS, history) is "auth/missing-key/models": the id is the
// test's metadata, written at the test (as test262 does), so titles are free to
// change. Ids are "<suite file>/<what it probes>[/<case>]", lower case (TEST_ID);
// selftest/unit/test-ids.test.ts holds every test to one unique id. It turns its outcome
// into a verdict by the clause's level (Autobahn-style verdicts beyond pass/fail):
//   a broken MUST/COMPAT clause -> fail; SHOULD -> warn; INFO tests report what they saw;
//   t.inconclusive() -> inconclusive; t.skip() -> skip (never a pass).
// Anything else thrown (a TypeError in a test, a client library that does not load) is
// an `error` at any level: a defect of the harness or the environment, never a verdict
// on the target. A test starts `inconclusive` and must earn its pass with at least one
// judged check: a check counts what it judged (a status compared, a schema validated, a
// condition on the answer), and reaching the server is no judgement, so responded() (and
// the JSON parse in json()) count nothing. A test that reached the target but judged
// nothing in what it answered ends `inconclusive`, saying so; one that ends having made
// no request and no check at all is an `error` (a defect of the test, docs/RUNNER.md).
// A probe declares its streaming form (`stream: 'twin'`: the harness registers the
// same probe with stream: true, id "<id>-stream", title "<title> (stream: true)"; or
// `stream: { none: why }`, shown by --list-tests), as test262 declares flags.
// Likewise `spellings: true` registers the probe once per route spelling a router may take
// for the route (harness/route-spellings.ts), id "<id>/spelled-<spelling>".
// A failure carries the requirement, what was expected, what was seen, the response
// and a curl command that reproduces it (h2spec / Schemathesis style).
import { test } from 'vitest';
import { CLAUSES, type ClauseId, type Level } from '../lib/spec/clauses.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { describe as show, validate, type SchemaName } from '../lib/spec/schema-validator.ts';
import { redact, redactDeep } from '../lib/run/redact.ts';
import { NOT_FINISHED, type TestRecord, type Verdict } from '../lib/run/verdicts.ts';
import { TEST_ID } from '../lib/run/test-ids.ts';

export { idPart } from '../lib/run/test-ids.ts';
import { config, currentTest } from './target.ts';
import { runContext } from '../lib/run/run-context.ts';
import { THROTTLE_ALLOWANCE_MS, THROTTLED } from '../lib/run/back-off.ts';
import { exchangeContext, exchangeErrorBodyProblems } from './exchange-log.ts';
import { ROUTE_SPELLINGS, type RouteSpelling } from './route-spellings.ts';

declare module '@vitest/runner' {
  interface TaskMeta {
    /** Why a probe has no streaming form (clause()'s `stream: { none }`), for --list-tests. */
    chatgateNoStreamForm?: string;
  }
}

export class Violation extends Error {
  readonly seen: string;
  constructor(readonly expected: string, seen: string, readonly exchange?: Exchange) {
    // A test may describe what it saw with JSON.stringify(undefined): still a string here.
    super(`expected ${expected}, got ${String(seen)}`);
    this.seen = String(seen);
  }
}
class Inconclusive extends Error {}
class Skip extends Error {}
/** A defect of the harness or the environment found by the harness itself (the message says what). */
export class HarnessError extends Error {}

export interface ClauseContext {
  readonly clause: ClauseId;
  /** true in the streaming twin of a probe declared with `stream: 'twin'` (send the request with stream: true). */
  readonly stream: boolean;
  /** The route spelling of this form of a probe declared with `spellings` (undefined: the exact spelling). */
  readonly spelling?: RouteSpelling;
  /** The path as this form spells it (the path itself in the exact form). */
  spell(path: string): string;
  readonly level: Level;
  /** Judged checks made so far (a pass needs at least one); reaching the server is not one. */
  readonly checks: number;
  /** Responses the test reached through responded() and the helpers that call it (no judgement on their own). */
  readonly reached: number;
  /** Fails the clause: what the spec asks for, what the target did. */
  fail(expected: string, seen: string, ex?: Exchange): never;
  /** Fails unless `ok`. */
  check(ok: boolean, expected: string, seen: string | (() => string), ex?: Exchange): void;
  /** The exchange got a response at all (a transport failure becomes a verdict that says so); not a judged check on its own. */
  responded(ex: Exchange): void;
  /** Status is one of `expected` (one judged check). */
  status(ex: Exchange, ...expected: number[]): void;
  /** Media type (without parameters) is `type`. */
  mediaType(ex: Exchange, type: string): void;
  /** Status is one of `statuses` and the body is a proper error body. */
  errorBody(ex: Exchange, ...statuses: number[]): void;
  /** The response body parsed as JSON (a body that is not JSON fails; a parse is not a judged check on its own). */
  json(ex: Exchange): unknown;
  /** Validates `value` against a schema; only violations of `onlyClause` (default: this test's clause) fail here. */
  schema(name: SchemaName, value: unknown, ex?: Exchange, onlyClause?: string): void;
  /** Records an observation (INFO clauses report these as their verdict's message). */
  observe(text: string): void;
  /** Adds a note shown with the verdict (e.g. throttling met on the way). */
  note(text: string): void;
  /** Attaches an exchange to the report without judging it. */
  use(ex: Exchange): void;
  /** A curl line for requests made outside the raw client (SDK calls), shown if the test does not pass. */
  reproduce(curl: string): void;
  /**
   * A request made outside the raw client (a client library's) got a 429 past its
   * back-off budget: the test's verdict cannot rest on it (inconclusive, "throttled").
   */
  throttledOut(what: string): void;
  inconclusive(reason: string): never;
  skip(reason: string): never;
}

export interface ClauseOptions {
  /** A test that checks a SHOULD part of a stricter clause (e.g. MOD-1's entry object). */
  level?: Level;
  /** A test that sends several requests one after another may need more than one request timeout. */
  requests?: number;
  /** Client-compatibility tests: their cell in the client x operation matrix of the reports. */
  matrix?: { client: string; operation: string };
  /**
   * The probe's streaming form. 'twin': the harness registers it a second time with
   * `t.stream` true, id `<id>-stream` (or `twinId`) and title `<title> (stream: true)`;
   * `{ none }`: why it has none (shown by --list-tests).
   */
  stream?: 'twin' | { twinId: string } | { none: string };
  /**
   * The route's other spellings (harness/route-spellings.ts): the harness registers the
   * probe once more per spelling, id `<id>/spelled-<spelling>`, title `<title> (route
   * spelled ...)`, with `t.spelling` set (plain form only: the streaming twin keeps the exact route).
   */
  spellings?: true;
}

type TestFn = (t: ClauseContext) => Promise<void>;

export function clause(testId: string, id: ClauseId, title: string, fn: TestFn, opts?: ClauseOptions): void;
/** Without a stable id (a test not yet given one): its id falls back to the title-based one, and selftest/unit/test-ids.test.ts fails. */
export function clause(id: ClauseId, title: string, fn: TestFn, opts?: ClauseOptions): void;
export function clause(...args: [string, ClauseId, string, TestFn, ClauseOptions?] | [ClauseId, string, TestFn, ClauseOptions?]): void {
  const [testId, id, title, fn, opts = {}] = typeof args[2] === 'string'
    ? args as [string, ClauseId, string, TestFn, ClauseOptions?]
    : [undefined, ...(args as [ClauseId, string, TestFn, ClauseOptions?])];
  const form = opts.stream;
  register(testId, id, title, fn, opts, false);
  if (form !== undefined && !(typeof form === 'object' && 'none' in form)) {
    if (testId === undefined) throw new Error(`${id} ${title}: a streaming twin needs the probe's stable id`);
    // The twin: the same probe with stream: true, right after it in the file's order.
    register(typeof form === 'object' && 'twinId' in form ? form.twinId : `${testId}-stream`, id, `${title} (stream: true)`, fn, opts, true);
  }
  if (!opts.spellings) return;
  if (testId === undefined) throw new Error(`${id} ${title}: route spellings need the probe's stable id`);
  for (const sp of ROUTE_SPELLINGS) register(`${testId}/spelled-${sp.id}`, id, `${title} (route spelled ${sp.title})`, fn, opts, false, sp);
}

/** Why a test has no streaming form, in its metadata from collection on (--list-tests shows it). */
export function noStreamFormOf(opts: ClauseOptions): string | undefined {
  return typeof opts.stream === 'object' && 'none' in opts.stream ? opts.stream.none : undefined;
}

function register(testId: string | undefined, id: ClauseId, title: string, fn: TestFn, opts: ClauseOptions, stream: boolean, spelling?: RouteSpelling): void {
  if (testId !== undefined && !TEST_ID.test(testId)) throw new Error(`test id "${testId}" of ${id} ${title}: ids are "<suite file>/<slug>", lower case (TEST_ID)`);
  const def = CLAUSES[id];
  const level = opts.level ?? def.level;
  const fullTitle = `${id} ${title}`;
  // Room for the requests themselves plus the governor's turns and 429 back-off (lib/run/back-off.ts).
  const timeout = (config.timeoutMs + THROTTLE_ALLOWANCE_MS) * (opts.requests ?? 1) + 5_000;
  // The id rides in the task's metadata from collection on, so the runner knows it without running the test.
  // A mutation run (mutation/setup.ts) runs tests one at a time: Stryker counts the code that
  // runs between a test's beforeEach and afterEach as that test's, which concurrent tests interleave.
  const noStreamForm = noStreamFormOf(opts);
  const meta = { ...(testId ? { chatgateId: testId } : {}), ...(noStreamForm ? { chatgateNoStreamForm: noStreamForm } : {}) };
  (runContext().mode.mutation ? test : test.concurrent)(fullTitle, { timeout, meta }, async (ctx) => {
    const rec: TestRecord = {
      id: testId ?? '', clause: id, level, verdict: 'inconclusive', message: NOT_FINISHED, title: fullTitle,
      requirement: def.requirement, notes: [], ...(opts.matrix ? { matrix: opts.matrix } : {}),
    };
    ctx.task.meta.chatgate = rec;
    const store = { exchanges: [] as Exchange[] };
    const observations: string[] = [];
    let attached: Exchange | undefined;
    let fallbackCurl: string | undefined;
    const throttledOut: string[] = [];
    const t = makeContext(id, level, stream, observations, rec, (ex) => { attached = ex; }, (c) => { fallbackCurl = c; }, (w) => { throttledOut.push(w); }, spelling);
    // A 429 met by a test that does not judge rate limits is never its verdict: once a
    // request's back-off budget is spent on 429s, the test is inconclusive.
    const throttledNote = (exs: Exchange[]) => {
      const out = [...throttledOut, ...exs.filter((ex) => ex.throttledOut).map((ex) => `${ex.request.method} ${new URL(ex.request.url).pathname}`)];
      if (!out.length) return undefined;
      return `${THROTTLED}: ${out.length} request${out.length === 1 ? '' : 's'} (${[...new Set(out)].slice(0, 3).join(', ')}) still answered 429 after the back-off budget; no verdict on ${id}`;
    };
    const finish = (verdict: Verdict, message?: string) => {
      rec.verdict = verdict;
      rec.checks = t.checks;
      if (message !== undefined) rec.message = redact(message); else delete rec.message;
      const used = [...store.exchanges, ...(attached ? [attached] : [])];
      const retried = used.reduce((n, ex) => n + ex.retries.length, 0);
      const waited = used.reduce((n, ex) => n + (ex.throttleWaitMs ?? 0), 0);
      if (retried) rec.notes.push(`rate-limited on the way: ${retried} x 429, retried after the advertised wait`);
      if (waited >= 1000) rec.notes.push(`waited ${(waited / 1000).toFixed(1)} s for the run's governor (pacing for the target's rate limit)`);
      if (observations.length) rec.observations = observations.map(redact);
      const ex = attached ?? store.exchanges.at(-1);
      if (!ex && fallbackCurl && verdict !== 'pass') rec.curl = fallbackCurl;
      if (ex && verdict !== 'pass') {
        rec.curl = ex.curl;
        rec.response = redactDeep({
          status: ex.status, headers: ex.headers, transportError: ex.error?.message,
          bodyExcerpt: (ex.text ?? '').slice(0, 2000),
        });
      }
    };
    try {
      await currentTest.run(store, () => exchangeContext.run(fullTitle, () => fn(t)));
      const throttled = throttledNote(store.exchanges);
      if (throttled) { finish('inconclusive', throttled); return; }
      const unjudged = unjudgedOutcome(t.checks, t.reached);
      if (unjudged === 'error') throw new HarnessError('the test ended having judged nothing (no check made): a defect of the test');
      if (unjudged) { finish('inconclusive', unjudged); return; }
      finish(level === 'INFO' ? 'info' : 'pass', level === 'INFO' ? observations.join('; ') : undefined);
    } catch (err) {
      if (err instanceof Skip) { finish('skip', err.message); ctx.skip(err.message); return; }
      if (err instanceof Inconclusive) { finish('inconclusive', err.message); return; }
      if (!(err instanceof Violation)) {
        // An exception reading a 429 past the budget as an answer is that 429's doing, not a verdict either.
        const throttled = throttledNote(store.exchanges);
        if (throttled) { finish('inconclusive', throttled); return; }
        // Not a judgement of the target: an error of the harness or the environment, at any level.
        const message = err instanceof HarnessError ? err.message : `harness error: ${(err as Error)?.stack ?? String(err)}`;
        finish('error', message);
        throw new Error(redact(`${fullTitle}\n  ${message}`));
      }
      // A failure judged on a real answer stands; one on a 429 past the budget (or on no
      // exchange in particular, in a test that met one) is no verdict.
      const throttled = err.exchange && !err.exchange.throttledOut ? undefined
        : err.exchange ? throttledNote([err.exchange]) : throttledNote(store.exchanges);
      if (throttled) { finish('inconclusive', throttled); return; }
      rec.expected = redact(err.expected);
      rec.seen = redact(err.seen);
      if (err.exchange) attached = err.exchange;
      const message = err.message;
      if (level === 'SHOULD') {
        finish('warn', message);
        // A mutation run counts a warning as a kill, as STRICT=1 fails the run on one.
        if (!runContext().mode.mutation) return;
        throw new Error(redact(`${fullTitle}\n  requirement (SHOULD): ${def.requirement}\n  ${message}`));
      }
      if (level === 'INFO') { finish('info', [...observations, message].join('; ')); return; }
      finish('fail', message);
      throw new Error(redact(`${fullTitle}\n  requirement: ${def.requirement}\n  ${message}`));
    }
  });
}

function makeContext(id: ClauseId, level: Level, stream: boolean, observations: string[], rec: TestRecord, attach: (ex: Exchange) => void, reproduce: (curl: string) => void, throttledOut: (what: string) => void, spelling?: RouteSpelling): ClauseContext {
  let checks = 0;
  const reached = new Set<Exchange>(); // each response once, however many helpers read it
  const t: ClauseContext = {
    clause: id,
    level,
    stream,
    spelling,
    spell: (path) => (spelling ? spelling.spell(path) : path),
    get checks() { return checks; },
    get reached() { return reached.size; },
    fail(expected, seen, ex) { checks++; throw new Violation(expected, seen, ex); },
    check(ok, expected, seen, ex) { checks++; if (!ok) t.fail(expected, typeof seen === 'function' ? seen() : seen, ex); },
    responded(ex) {
      if (ex.throttledOut) throw new Inconclusive(`${THROTTLED}: ${ex.request.method} ${new URL(ex.request.url).pathname} still answered 429 after the back-off budget; no verdict on ${id}`);
      reached.add(ex);
      if (ex.status === undefined) t.fail('a response', `no response: ${ex.error?.message ?? 'unknown failure'}`, ex);
    },
    status(ex, ...expected) {
      t.responded(ex);
      const loc = ex.status! >= 300 && ex.status! < 400 && ex.headers.location ? ` redirecting to ${ex.headers.location} (not followed)` : '';
      t.check(expected.includes(ex.status!), `HTTP ${expected.join(' or ')}`, () => `HTTP ${ex.status}${loc}${bodyHint(ex)}`, ex);
    },
    mediaType(ex, type) {
      t.responded(ex);
      t.check(ex.mediaType === type, `Content-Type ${type}`, `Content-Type ${ex.headers['content-type'] === undefined ? '(none)' : ex.headers['content-type']}`, ex);
    },
    errorBody(ex, ...statuses) {
      if (statuses.length) t.status(ex, ...statuses);
      const problems = exchangeErrorBodyProblems(ex);
      t.check(problems.length === 0, 'an error body {"error": {"message", "type", "code"}} as application/json', problems.join('; '), ex);
    },
    json(ex) {
      t.responded(ex);
      if (ex.error) t.fail('a complete body', ex.error.message, ex);
      if (ex.json === undefined) t.fail('a JSON body', ex.jsonError ? `invalid JSON (${ex.jsonError}): ${show(ex.text, 120)}` : `${show(ex.text, 120)} as ${ex.headers['content-type'] ?? 'no content type'}`, ex);
      return ex.json;
    },
    schema(name, value, ex, onlyClause = id) {
      checks++;
      const errors = validate(name, value).errors.filter((e) => e.clause === onlyClause);
      if (errors.length) t.fail(`a ${name.replace(/-/g, ' ')} valid for ${onlyClause}`, errors.map((e) => e.message).join('; '), ex);
    },
    // What an INFO clause reports is its judgement: an observation counts as a check there.
    observe(text) { observations.push(text); if (level === 'INFO') checks++; },
    note(text) { rec.notes.push(redact(text)); },
    use(ex) { attach(ex); },
    reproduce(curl) { reproduce(redact(curl)); },
    throttledOut(what) { throttledOut(redact(what)); },
    inconclusive(reason) { throw new Inconclusive(reason); },
    skip(reason) { throw new Skip(reason); },
  };
  return t;
}

/**
 * What a test that ended without a failure, inconclusive or skip is, when it made no
 * judged check: undefined (it judged something: its verdict stands), an inconclusive
 * reason (it reached the target, so the answer was there, but it judged nothing in it),
 * or 'error' (no request, no check: the test itself is broken).
 */
export function unjudgedOutcome(checks: number, reached: number): string | 'error' | undefined {
  if (checks > 0) return undefined;
  if (reached === 0) return 'error';
  return `the target answered (${reached} response${reached === 1 ? '' : 's'} reached) but the test judged nothing in what it answered: reaching the server is no pass`;
}

function bodyHint(ex: Exchange): string {
  if (ex.error) return ` (${ex.error.message})`;
  const text = (ex.text ?? '').trim();
  return text ? `: ${show(text, 160)}` : ' with an empty body';
}
