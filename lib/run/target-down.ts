// A target that dies mid-run: after answering, it gets no request to the end of the run
// (refused connections, and resets of the requests it held). Read from the run's exchange log after the tests (every worker's
// requests, in time order), so the verdict does not depend on which worker met it first.
// The requests in flight when it went away are the finding (their tests keep their
// verdicts; with none failing, one record on SVC-1, or EV-10 for a stream); every later
// test that met only the dead target is `error` ("target unreachable since ..."), never a
// clause failure: a dead target answers nothing about its clauses.
import type { ExchangeSummary } from '../spec/rules/exchange-summary.ts';
import type { TargetDown, TestRecord } from './verdicts.ts';
import { CLAUSES } from '../spec/clauses.ts';

/** What results.json says of a target that stopped answering. */
export type { TargetDown };

/** Fewer refused connections than this after the last answer is no outage. */
export const MIN_FAILURES = 3;
const CONNECTION_LOST = /refused|reset|ECONNRESET|EPIPE|socket hang ?up|other side closed|closed before|terminated|UND_ERR_SOCKET/i;
const REFUSED = /refused/i;

const pathOf = (url: string) => { try { return new URL(url).pathname; } catch { return url; } };

const sentOf = (e: ExchangeSummary) => e.sentAt ?? e.at ?? 0;

/** The outage, if the run's traffic ends with one; undefined otherwise. */
export function findTargetDown(exchanges: readonly ExchangeSummary[]): TargetDown | undefined {
  const answered = exchanges.filter((e) => e.status !== undefined);
  if (answered.length === 0) return undefined;
  // The last request that got an answer was sent before the target went away; answers read after it may be logged later.
  const lastAnswer = answered.reduce((a, b) => (sentOf(b) >= sentOf(a) ? b : a));
  const lastSent = sentOf(lastAnswer);
  const tail = exchanges.filter((e) => e.status === undefined && (e.at ?? 0) >= lastSent).sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
  const after = exchanges.filter((e) => e.status === undefined && sentOf(e) > lastSent);
  if (tail.length === 0 || !tail.every((e) => CONNECTION_LOST.test(e.transportError ?? '')) || !after.every((e) => tail.includes(e))) return undefined;
  // Refused: nothing listens any more. A server that resets every request is alive and misbehaving (each clause's failure).
  if (tail.filter((e) => REFUSED.test(e.transportError!)).length < MIN_FAILURES) return undefined;
  // Several senders met it: one probe's own dropped connections are its clause's business.
  if (new Set(tail.map((e) => `${e.source ?? ''}:${e.test ?? ''}`)).size < 2) return undefined;
  const first = tail[0]!.at ?? 0;
  // Refused: the request never reached a server, unless a first attempt on a kept-alive connection was cut before the
  // resend was refused. Any such loss of a request sent before the first failure: it was in flight.
  const cut = (e: ExchangeSummary) => !REFUSED.test(e.transportError!) || (!!e.reuseRetry && !REFUSED.test(e.reuseRetry.error));
  const inFlight = tail.filter((e) => cut(e) && (e === tail[0] || sentOf(e) < first));
  return {
    since: new Date(first).toISOString(),
    lastAnswer: { method: lastAnswer.method, path: pathOf(lastAnswer.url), status: lastAnswer.status!, ...(lastAnswer.test ? { test: lastAnswer.test } : {}), curl: lastAnswer.curl },
    failedRequests: tail.length,
    refused: tail.filter((e) => REFUSED.test(e.transportError!)).length,
    inFlight: inFlight.map((e) => ({ method: e.method, path: pathOf(e.url), ...(e.test ? { test: e.test } : {}), error: e.transportError!, ...(e.requestedStream ? { stream: true as const } : {}) })),
    unreachableTests: 0,
  };
}

/** The exchanges the outage cut (no answer, from its start on): no evidence for the run-wide checks. */
export function cutByOutage(d: TargetDown | undefined, e: ExchangeSummary): boolean {
  return !!d && e.status === undefined && (e.at ?? 0) >= Date.parse(d.since);
}

/** "target unreachable since <time> (<s> into the run)": the error records' words. */
export function unreachableSince(d: TargetDown, startedAt?: string): string {
  const into = startedAt ? ` (${((Date.parse(d.since) - Date.parse(startedAt)) / 1000).toFixed(1)} s into the run)` : '';
  return `target unreachable since ${d.since}${into}`;
}

/** The one line the console, summary.md and the error records give. */
export function targetDownLine(d: TargetDown, startedAt?: string): string {
  const whose = d.lastAnswer.test ? ` of "${d.lastAnswer.test}"` : '';
  return `${unreachableSince(d, startedAt)}: after ${d.lastAnswer.method} ${d.lastAnswer.path}${whose} (HTTP ${d.lastAnswer.status}), `
    + `all ${d.failedRequests} later requests got no answer (${d.refused} refused); ${d.inFlight.length} in flight at that moment; `
    + `the last answered request: ${d.lastAnswer.curl}`;
}

/**
 * The records of a run whose target went away: each test that met the dead target and
 * no request in flight at the moment it went away becomes `error`; the in-flight
 * requests keep their tests' verdicts, and when none of those failed, one record on
 * SVC-1 (EV-10 when one was a stream) says the target stopped answering.
 */
export function markUnreachable(records: TestRecord[], d: TargetDown, exchanges: readonly ExchangeSummary[], startedAt?: string): TestRecord[] {
  const since = Date.parse(d.since);
  const lost = new Map<string, { inFlight: boolean }>();
  for (const e of exchanges) {
    if (!e.test || e.status !== undefined || (e.at ?? 0) < since) continue;
    const inFlight = d.inFlight.some((f) => f.test === e.test && f.path === pathOf(e.url) && f.error === e.transportError);
    const was = lost.get(e.test);
    lost.set(e.test, { inFlight: (was?.inFlight ?? false) || inFlight });
  }
  let unreachable = 0;
  for (const r of records) {
    // A test may judge exchanges another sent (shared exchanges): its own answer's refusal says the same.
    const l = lost.get(r.title) ?? (REFUSED.test(r.response?.transportError ?? '') ? { inFlight: false } : undefined);
    if (l?.inFlight) r.notes.push(`a request of this test was in flight when the target went away (${unreachableSince(d, startedAt)})`);
    if (!l || l.inFlight || r.verdict === 'pass' || r.verdict === 'info' || r.verdict === 'skip') continue;
    r.notes.push(`before the target went away: ${r.verdict}${r.message ? `: ${r.message}` : ''}`);
    r.verdict = 'error';
    r.message = `${unreachableSince(d, startedAt)}: no verdict on ${r.clause} (the test met only the unreachable target)`;
    delete r.expected;
    delete r.seen;
    unreachable++;
  }
  d.unreachableTests = unreachable;
  const inFlightTests = new Set(d.inFlight.map((f) => f.test));
  const found = records.some((r) => inFlightTests.has(r.title) && (r.verdict === 'fail' || r.verdict === 'warn'));
  if (d.inFlight.length === 0 || found) return [];
  const clause = d.inFlight.some((f) => f.stream) ? 'EV-10' : 'SVC-1';
  const first = d.inFlight[0]!;
  return [{
    id: 'run-wide/target-down', clause, level: CLAUSES[clause].level, verdict: 'fail', title: `${clause} the target answered every request of the run until it went away`,
    requirement: CLAUSES[clause].requirement, message: targetDownLine(d, startedAt),
    expected: 'an answer to every request in flight', seen: `${d.inFlight.length} request(s) in flight cut when the target went away; the first: ${first.method} ${first.path} (${first.error})${first.test ? ` from "${first.test}"` : ''}`,
    curl: d.lastAnswer.curl, notes: [],
  }];
}
