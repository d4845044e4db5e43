// The per-response rules: each a small named function of one exchange (as the exchange
// log summarises it, ./exchange-summary.ts) that returns nothing, or what its clause
// expected and what this exchange showed (Schemathesis-style checks). One table lists
// them with their clause. Every exchange of the run passes through it once, whoever sent
// it: the fixed probes, the client libraries (on the wire), the fuzz phase's generated
// requests, the 429s the raw client waited out, and the preflight. The run-wide records
// (runner/run-wide-checks.ts) report each rule once, on its clause; the fuzz phase
// (fuzz/oracles.ts) applies the same functions to its generated requests. Which rule
// judges which traffic is data here (`fuzzReports`), not an import between those two.
import type { ClauseId } from '../clauses.ts';
import { emptyErrorMembers } from '../error-body.ts';
import { reuseRetryEvidence } from './connection-reuse.ts';
import { describeSnapshots } from '../cumulative-deltas.ts';
import { isServerError } from './status.ts';
import type { ExchangeSummary } from './exchange-summary.ts';
import { SUCCESS_BODY_RULES } from './success-body.ts';

/** What one exchange shows against its rule's clause. */
export interface ResponseViolation {
  clause: ClauseId;
  expected: string;
  seen: string;
}

export interface ResponseRule {
  clause: ClauseId;
  /** The run-wide record's title after the clause id (EXPECTATIONS files name `run-wide/<clause> <title>`: keep it stable). */
  title: string;
  /** What the clause asks of every exchange it judges. */
  expected: string;
  /** The exchanges that are evidence for the rule, in words ("response with status >= 400"). */
  evidence: string;
  /** The noun for a count of judged exchanges ("failing responses", "streams"). */
  judgedNoun: string;
  /** Whether this exchange is evidence for the rule (a rule with no evidence is no verdict). */
  judges(e: ExchangeSummary): boolean;
  /** What is wrong with this exchange, in words; undefined when it keeps the clause. Only called where judges() holds. */
  check(e: ExchangeSummary): string | undefined;
  /**
   * A fixed probe in suites/ owns the clause: the run-wide record appears only when the
   * rest of the run's traffic breaks it (without a breach it would only blur the probe's
   * verdict), and folds into the probe's record when the probe failed too.
   */
  probed?: true;
  /** The fuzz phase's own clause tests report this rule's breaches on generated requests (shrunk); the run-wide record judges the rest. */
  fuzzReports?: true;
}

const answered = (e: ExchangeSummary) => e.status !== undefined;
const bodyProblems = (e: ExchangeSummary) => (e.errorBodyProblems ?? []).join(', ') || undefined;
const errorMembers = (e: ExchangeSummary) => emptyErrorMembers({ message: e.errorMessage, type: e.errorType, code: e.errorCode, hasParam: false });

/** The table: each per-response rule with its clause, in report order. */
export const RESPONSE_RULES: readonly ResponseRule[] = [
  {
    clause: 'ERR-1', title: 'every response with status >= 400 carries an error body',
    expected: 'an error body on every status >= 400', evidence: 'no response with status >= 400', judgedNoun: 'failing responses',
    judges: (e) => answered(e) && e.status! >= 400,
    check: bodyProblems,
    fuzzReports: true,
  },
  {
    clause: 'ERR-2', title: 'no request gets a 5xx other than 503',
    expected: 'no 5xx other than 503', evidence: 'no response at all', judgedNoun: 'responses',
    judges: answered,
    check: (e) => (isServerError(e.status!) ? (e.bodyExcerpt?.slice(0, 80) ?? '') || `HTTP ${e.status}` : undefined),
    fuzzReports: true,
  },
  // Every error object the run saw, whether or not its body passed ERR-1 (a null or
  // missing code breaks both clauses, and each says so).
  {
    clause: 'ERR-3', title: 'error message, type and code are non-empty',
    expected: 'error.message, error.type and error.code non-empty strings', evidence: 'no error object in any failing response', judgedNoun: 'error objects',
    judges: (e) => answered(e) && e.status! >= 400 && !!e.hasErrorObject,
    check: (e) => errorMembers(e).join(', ') || undefined,
  },
  {
    clause: 'ERR-4', title: 'a 503 carries an error body',
    expected: 'an error body on 503', evidence: 'no 503 seen', judgedNoun: 'responses with 503',
    judges: (e) => e.status === 503,
    check: bodyProblems,
  },
  {
    clause: 'AUTH-9', title: 'no response body or header echoes a full API key',
    expected: 'no full key in any response', evidence: 'no response at all', judgedNoun: 'responses',
    judges: answered,
    check: (e) => (e.keyEchoes.length ? e.keyEchoes.join(', ') : undefined),
  },
  // SVC-8 from the run's own traffic: a request the raw client had to send again because a
  // connection left open was closed under it (lib/spec/rules/connection-reuse.ts). The probe in
  // suites/svc.test.ts judges the clause; this adds what the run met elsewhere.
  {
    clause: 'SVC-8', title: 'no request of the run met a connection closed silently after a response',
    expected: 'a connection left open (no Connection: close) accepts the next request', evidence: 'no request sent on a reused connection', judgedNoun: 'requests',
    judges: () => true,
    check: (e) => (e.reuseRetry ? reuseRetryEvidence([e])[0] : undefined),
    probed: true,
  },
  // EV-12 on every stream the run read (lib/spec/cumulative-deltas.ts is the one rule; the
  // probe in suites/events.test.ts judges the clause on its own stream).
  {
    clause: 'EV-12', title: 'no stream of the run sends cumulative snapshots as deltas',
    expected: 'each delta.content new text only (not the reply so far again)', evidence: 'no stream with content deltas', judgedNoun: 'streams',
    judges: (e) => (e.contentDeltas ?? 0) > 0,
    check: (e) => (e.snapshots ? describeSnapshots(e.snapshots) : undefined),
    probed: true,
  },
  ...SUCCESS_BODY_RULES,
  // The reply's text on every 2xx chat answer, whatever the request (./reply-content.ts):
  // a token cap, the parameter probes and the fuzz phase's bodies included.
  {
    clause: 'RES-MSG-1', title: 'every chat completion of the run carries message.content as a string',
    expected: 'message.content a string in every 2xx chat completion ("" under a cap is one; tool calls or a refusal may stand in)', evidence: 'no 2xx chat completion', judgedNoun: 'completions',
    judges: (e) => e.content?.clause === 'RES-MSG-1',
    check: (e) => e.content?.seen,
    probed: true,
  },
  // The fuzz phase's streams are its own EV-4 test's.
  {
    clause: 'EV-4', title: 'every stream of the run carries its reply',
    expected: 'non-empty delta.content for choice 0 (a token cap that ends the reply leaves a string content at least)', evidence: 'no 2xx chat stream', judgedNoun: 'streams',
    judges: (e) => e.content?.clause === 'EV-4' && e.source !== 'fuzz',
    check: (e) => e.content?.seen,
    probed: true,
  },
];

/** The rules whose breaches on generated requests the fuzz phase reports itself. */
export const JUDGED_BY_FUZZ_TESTS: readonly ClauseId[] = RESPONSE_RULES.filter((r) => r.fuzzReports).map((r) => r.clause);

/** The violations of one exchange, by the rules of `clauses` (default: every rule). */
export function checkResponse(e: ExchangeSummary, clauses?: readonly ClauseId[]): ResponseViolation[] {
  const out: ResponseViolation[] = [];
  for (const rule of RESPONSE_RULES) {
    if (clauses && !clauses.includes(rule.clause)) continue;
    if (!rule.judges(e)) continue;
    const seen = rule.check(e);
    if (seen !== undefined) out.push({ clause: rule.clause, expected: rule.expected, seen });
  }
  return out;
}
