// Clauses judged over every response the run saw, not by one test: the runner
// calls this after the suites, with the exchange summaries the workers logged
// (harness/exchange-log.ts). A failure lists the offending responses and
// reproduces the first one.
import { CLAUSES, type ClauseId } from '../lib/clauses.ts';
import type { TestRecord, Verdict } from '../lib/verdicts.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';

const where = (e: ExchangeSummary) => `${e.method} ${new URL(e.url).pathname} -> ${e.status ?? 'no response'}`;

function record(clauseId: ClauseId, title: string, verdict: Verdict, message: string, offenders: ExchangeSummary[] = [], extra: Partial<TestRecord> = {}): TestRecord {
  const def = CLAUSES[clauseId];
  const first = offenders[0];
  return {
    id: `run-wide/${clauseId} ${title}`, clause: clauseId, level: def.level, verdict, title: `${clauseId} ${title}`,
    requirement: def.requirement, message, notes: [], file: 'suites/run-wide-checks.ts',
    ...(first ? { curl: first.curl, response: { status: first.status, bodyExcerpt: first.bodyExcerpt } } : {}),
    ...extra,
  };
}

function list(offenders: ExchangeSummary[], detail: (e: ExchangeSummary) => string): string {
  const shown = offenders.slice(0, 5).map((e) => `${where(e)}${e.test ? ` [${e.test}]` : ''}: ${detail(e)}`);
  return shown.join('; ') + (offenders.length > 5 ? `; and ${offenders.length - 5} more` : '');
}

export function runWideChecks(all: ExchangeSummary[]): TestRecord[] {
  const answered = all.filter((e) => e.status !== undefined);
  const failing = answered.filter((e) => e.status! >= 400);
  const out: TestRecord[] = [];
  const n = `${answered.length} responses`;

  const noBody = failing.filter((e) => (e.errorBodyProblems ?? []).length > 0);
  out.push(noBody.length === 0
    ? record('ERR-1', 'every response with status >= 400 carries an error body', 'pass', `${failing.length} failing responses of ${n}, all with an error body`)
    : record('ERR-1', 'every response with status >= 400 carries an error body', 'fail',
      `expected an error body on every status >= 400, got ${noBody.length} of ${failing.length} without: ${list(noBody, (e) => e.errorBodyProblems!.join(', '))}`, noBody,
      { expected: 'an error body on every status >= 400', seen: `${noBody.length} without` }));

  const fiveXX = answered.filter((e) => e.status! >= 500 && e.status !== 503);
  out.push(fiveXX.length === 0
    ? record('ERR-2', 'no request gets a 5xx other than 503', 'pass', `no 5xx other than 503 in ${n}`)
    : record('ERR-2', 'no request gets a 5xx other than 503', 'fail',
      `expected no 5xx other than 503, got ${fiveXX.length}: ${list(fiveXX, (e) => e.bodyExcerpt?.slice(0, 80) ?? '')}`, fiveXX,
      { expected: 'no 5xx other than 503', seen: `${fiveXX.length} responses` }));

  const thin = failing.filter((e) => (e.errorBodyProblems ?? []).length === 0
    && [e.errorMessage, e.errorType, e.errorCode].some((v) => typeof v !== 'string' || v.trim() === ''));
  out.push(thin.length === 0
    ? record('ERR-3', 'error message, type and code are non-empty', 'pass', `checked ${failing.length - noBody.length} error bodies`)
    : record('ERR-3', 'error message, type and code are non-empty', 'warn',
      `expected non-empty message, type and code, got ${thin.length} with an empty one: ${list(thin, (e) => JSON.stringify({ message: e.errorMessage, type: e.errorType, code: e.errorCode }))}`, thin));

  const overload = answered.filter((e) => e.status === 503);
  const bad503 = overload.filter((e) => (e.errorBodyProblems ?? []).length > 0);
  out.push(overload.length === 0
    ? record('ERR-4', 'a 503 carries an error body', 'inconclusive', `no 503 seen in ${n}`)
    : bad503.length === 0
      ? record('ERR-4', 'a 503 carries an error body', 'pass', `${overload.length} responses with 503, all with an error body`)
      : record('ERR-4', 'a 503 carries an error body', 'fail',
        `expected an error body on 503, got ${bad503.length} of ${overload.length} without: ${list(bad503, (e) => e.errorBodyProblems!.join(', '))}`, bad503));

  const byStatus = new Map<number, Set<string>>();
  let withParam = 0; let parsed = 0;
  for (const e of failing) {
    if (e.errorType === undefined && e.errorCode === undefined) continue;
    parsed++;
    if (e.errorHasParam) withParam++;
    const set = byStatus.get(e.status!) ?? new Set();
    set.add(`${String(e.errorType)}/${String(e.errorCode)}`);
    byStatus.set(e.status!, set);
  }
  const table = [...byStatus].sort(([a], [b]) => a - b).map(([s, v]) => `${s}: ${[...v].join(', ')}`).join('; ');
  out.push(record('ERR-5', 'param key and type/code values per status', 'info',
    `${withParam} of ${parsed} error bodies carry param; type/code by status: ${table || 'none seen'}`));

  const echoes = all.filter((e) => e.keyEchoes.length > 0);
  out.push(echoes.length === 0
    ? record('AUTH-9', 'no response body or header echoes a full API key', 'pass', `no key in ${all.length} responses`)
    : record('AUTH-9', 'no response body or header echoes a full API key', 'fail',
      `expected no full key in any response, got ${echoes.length} responses echoing one: ${list(echoes, (e) => e.keyEchoes.join(', '))}`, echoes,
      { expected: 'no full key in any response', seen: `${echoes.length} responses` }));
  return out;
}
