// Clauses judged over every response the run saw, not by one test: the runner
// calls this after the suites, with the exchange summaries the workers logged
// (harness/exchange-log.ts): our raw client's and the client libraries' alike.
// Only exchanges under TARGET_URL's base path are judged (a probe outside it, such as
// VER-2's /v2/models, answers for its own INFO clause only). No evidence is no
// verdict: a check with nothing to judge (no error response for ERR-1/ERR-3, no
// response at all) is `inconclusive`, never a pass. A failure lists the offending
// responses and reproduces the first one.
import { CLAUSES, type ClauseId } from '../lib/clauses.ts';
import type { TestRecord, Verdict } from '../lib/verdicts.ts';
import { emptyErrorMembers } from '../lib/error-body.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';
import { reuseRetryEvidence } from '../lib/connection-reuse.ts';

export const RUN_WIDE_FILE = 'runner/run-wide-checks.ts';

const where = (e: ExchangeSummary) => `${e.method} ${new URL(e.url).pathname} -> ${e.status ?? 'no response'}${e.source === 'client' ? ' (client library)' : ''}`;

function record(clauseId: ClauseId, title: string, verdict: Verdict, message: string, offenders: ExchangeSummary[] = [], extra: Partial<TestRecord> = {}): TestRecord {
  const def = CLAUSES[clauseId];
  const first = offenders[0];
  return {
    id: `run-wide/${clauseId.toLowerCase()}`, clause: clauseId, level: def.level, verdict, title: `${clauseId} ${title}`,
    requirement: def.requirement, message, notes: [], file: RUN_WIDE_FILE,
    ...(first ? { curl: first.curl, response: { status: first.status, bodyExcerpt: first.bodyExcerpt } } : {}),
    ...extra,
  };
}

/** A broken clause's verdict by its level: MUST/COMPAT fail, SHOULD warns. */
const broken = (clauseId: ClauseId): Verdict => (CLAUSES[clauseId].level === 'SHOULD' ? 'warn' : 'fail');

function list(offenders: ExchangeSummary[], detail: (e: ExchangeSummary) => string): string {
  const shown = offenders.slice(0, 5).map((e) => `${where(e)}${e.test ? ` [${e.test}]` : ''}: ${detail(e)}`);
  return shown.join('; ') + (offenders.length > 5 ? `; and ${offenders.length - 5} more` : '');
}

/** Whether `url` is under the base URL (same origin, path below the base path). */
export function underBase(url: string, baseUrl: string | undefined): boolean {
  if (!baseUrl) return true;
  try {
    const u = new URL(url);
    const b = new URL(baseUrl);
    const base = b.pathname.replace(/\/+$/, '');
    return u.origin === b.origin && (u.pathname === base || u.pathname.startsWith(`${base}/`));
  } catch {
    return false;
  }
}

const TITLES = {
  'ERR-1': 'every response with status >= 400 carries an error body',
  'ERR-2': 'no request gets a 5xx other than 503',
  'ERR-3': 'error message, type and code are non-empty',
  'ERR-4': 'a 503 carries an error body',
  'ERR-5': 'param key and type/code values per status',
  'AUTH-9': 'no response body or header echoes a full API key',
  'SVC-8': 'no request of the run met a connection closed silently after a response',
} as const;

/** The ids of every record the run-wide checks can give (an EXPECTATIONS file may name them). */
export function runWideTestIds(): string[] {
  return Object.keys(TITLES).map((clauseId) => `run-wide/${clauseId.toLowerCase()}`);
}

/** The run-wide checks over the exchanges of the run; `baseUrl` is TARGET_URL (only exchanges under it are judged). */
export function runWideChecks(logged: ExchangeSummary[], baseUrl?: string): TestRecord[] {
  const all = logged.filter((e) => underBase(e.url, baseUrl));
  const outside = logged.length - all.length;
  const answered = all.filter((e) => e.status !== undefined);
  const failing = answered.filter((e) => e.status! >= 400);
  const clients = answered.filter((e) => e.source === 'client').length;
  const out: TestRecord[] = [];
  const n = `${answered.length} responses (${clients} to client libraries)${outside ? `; ${outside} outside the base URL not judged` : ''}`;
  const none = (clauseId: keyof typeof TITLES, what: string) => record(clauseId, TITLES[clauseId], 'inconclusive', `no evidence: ${what} in ${n}`);

  const noBody = failing.filter((e) => (e.errorBodyProblems ?? []).length > 0);
  out.push(failing.length === 0 ? none('ERR-1', 'no response with status >= 400')
    : noBody.length === 0
      ? record('ERR-1', TITLES['ERR-1'], 'pass', `${failing.length} failing responses of ${n}, all with an error body`)
      : record('ERR-1', TITLES['ERR-1'], broken('ERR-1'),
        `expected an error body on every status >= 400, got ${noBody.length} of ${failing.length} without: ${list(noBody, (e) => e.errorBodyProblems!.join(', '))}`, noBody,
        { expected: 'an error body on every status >= 400', seen: `${noBody.length} without` }));

  const fiveXX = answered.filter((e) => e.status! >= 500 && e.status !== 503);
  out.push(answered.length === 0 ? none('ERR-2', 'no response at all')
    : fiveXX.length === 0
      ? record('ERR-2', TITLES['ERR-2'], 'pass', `no 5xx other than 503 in ${n}`)
      : record('ERR-2', TITLES['ERR-2'], broken('ERR-2'),
        `expected no 5xx other than 503, got ${fiveXX.length}: ${list(fiveXX, (e) => e.bodyExcerpt?.slice(0, 80) ?? '')}`, fiveXX,
        { expected: 'no 5xx other than 503', seen: `${fiveXX.length} responses` }));

  // Every error object the run saw, whether or not its body passed ERR-1 (a null or
  // missing code breaks both clauses, and each says so).
  const objects = failing.filter((e) => e.hasErrorObject);
  const thin = objects.filter((e) => emptyErrorMembers({ message: e.errorMessage, type: e.errorType, code: e.errorCode, hasParam: false }).length > 0);
  out.push(objects.length === 0 ? none('ERR-3', 'no error object in any failing response')
    : thin.length === 0
      ? record('ERR-3', TITLES['ERR-3'], 'pass', `${objects.length} error objects, all with a non-empty message, type and code`)
      : record('ERR-3', TITLES['ERR-3'], broken('ERR-3'),
        `expected non-empty message, type and code, got ${thin.length} of ${objects.length} error objects with an empty or missing one: ${list(thin, (e) => emptyErrorMembers({ message: e.errorMessage, type: e.errorType, code: e.errorCode, hasParam: false }).join(', '))}`, thin,
        { expected: 'error.message, error.type and error.code non-empty strings', seen: `${thin.length} of ${objects.length} error objects with an empty or missing one` }));

  const overload = answered.filter((e) => e.status === 503);
  const bad503 = overload.filter((e) => (e.errorBodyProblems ?? []).length > 0);
  out.push(overload.length === 0 ? none('ERR-4', 'no 503 seen')
    : bad503.length === 0
      ? record('ERR-4', TITLES['ERR-4'], 'pass', `${overload.length} responses with 503, all with an error body`)
      : record('ERR-4', TITLES['ERR-4'], broken('ERR-4'),
        `expected an error body on 503, got ${bad503.length} of ${overload.length} without: ${list(bad503, (e) => e.errorBodyProblems!.join(', '))}`, bad503,
        { expected: 'an error body on 503', seen: `${bad503.length} of ${overload.length} without` }));

  const byStatus = new Map<number, Set<string>>();
  let withParam = 0;
  for (const e of objects) {
    if (e.errorHasParam) withParam++;
    const set = byStatus.get(e.status!) ?? new Set();
    set.add(`${String(e.errorType)}/${String(e.errorCode)}`);
    byStatus.set(e.status!, set);
  }
  const table = [...byStatus].sort(([a], [b]) => a - b).map(([s, v]) => `${s}: ${[...v].join(', ')}`).join('; ');
  out.push(objects.length === 0 ? none('ERR-5', 'no error object in any failing response')
    : record('ERR-5', TITLES['ERR-5'], 'info', `${withParam} of ${objects.length} error bodies carry param; type/code by status: ${table}`));

  const echoes = all.filter((e) => e.keyEchoes.length > 0);
  out.push(answered.length === 0 ? none('AUTH-9', 'no response at all')
    : echoes.length === 0
      ? record('AUTH-9', TITLES['AUTH-9'], 'pass', `no key in ${n}`)
      : record('AUTH-9', TITLES['AUTH-9'], broken('AUTH-9'),
        `expected no full key in any response, got ${echoes.length} responses echoing one: ${list(echoes, (e) => e.keyEchoes.join(', '))}`, echoes,
        { expected: 'no full key in any response', seen: `${echoes.length} responses` }));

  // SVC-8 from the run's own traffic: requests the raw client had to send again because a
  // connection left open was closed under them (lib/connection-reuse.ts). Reported only
  // when such an event happened: without one this says nothing either way (the probe in
  // suites/svc.test.ts judges the clause), and an inconclusive twin beside the probe's
  // pass would only blur the clause's line.
  const reuse = reuseRetryEvidence(all);
  if (reuse.length) {
    out.push(record('SVC-8', TITLES['SVC-8'], broken('SVC-8'),
      `expected a connection left open to accept the next request, got ${reuse.length} requests that failed on one and were sent again: ${reuse.slice(0, 5).join('; ')}${reuse.length > 5 ? `; and ${reuse.length - 5} more` : ''}`, [],
      { expected: 'a connection left open (no Connection: close) accepts the next request', seen: `${reuse.length} requests re-sent on a new connection` }));
  }
  return out;
}
