// Clauses judged over every response the run saw, not by one test: the runner calls
// this after the suites with the exchanges the workers logged (harness/exchange-log.ts:
// fixed probes, client libraries, the fuzz phase, retried 429s) and the preflight's.
// Each per-response rule of the table (lib/spec/rules/response-rules.ts) gives one record on
// its clause. Only exchanges under TARGET_URL's base path are judged (a probe outside
// it, such as VER-2's /v2/models, answers for its own INFO clause only). The fuzz
// phase's requests are judged here too, except by ERR-1 and ERR-2, which the fuzz tests
// report on them, shrunk (suites/fuzz.test.ts). No evidence is no verdict: a rule with
// nothing to judge (no error response for ERR-1/ERR-3, no response at all) is
// `inconclusive`, never a pass. A failure names the request that met it first, lists a
// few more and counts the rest.
import { CLAUSES, type ClauseId } from '../lib/spec/clauses.ts';
import type { TestRecord, Verdict } from '../lib/run/verdicts.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';
import { RESPONSE_RULES, type ResponseRule } from '../lib/spec/rules/response-rules.ts';

export const RUN_WIDE_FILE = 'runner/run-wide-checks.ts';

const SOURCE_LABEL: Record<NonNullable<ExchangeSummary['source']>, string> = { client: ' (client library)', fuzz: ' (fuzz phase)', preflight: ' (preflight)' };
const where = (e: ExchangeSummary) => `${e.method} ${new URL(e.url).pathname} -> ${e.status ?? 'no response'}${e.source ? SOURCE_LABEL[e.source] : ''}`;

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

function list(offenders: ExchangeSummary[], detail: (e: ExchangeSummary, i: number) => string): string {
  const shown = offenders.slice(0, 5).map((e, i) => `${where(e)}${e.test ? ` [${e.test}]` : ''}: ${detail(e, i)}`);
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

const ERR_5_TITLE = 'param key and type/code values per status';

/** The ids of every record the run-wide checks can give (an EXPECTATIONS file may name them). */
export function runWideTestIds(): string[] {
  return [...RESPONSE_RULES.map((r) => `run-wide/${r.clause.toLowerCase()}`), 'run-wide/err-5'];
}

/** Each run-wide record's id with its title-based id of results.json version 1 (EXPECTATIONS may still name that). */
export function runWideTests(): Array<{ id: string; legacyId: string }> {
  return [...RESPONSE_RULES.map((r) => ({ clause: r.clause, title: r.title })), { clause: 'ERR-5' as ClauseId, title: ERR_5_TITLE }]
    .map(({ clause, title }) => ({ id: `run-wide/${clause.toLowerCase()}`, legacyId: `run-wide/${clause} ${title}` }));
}

/** The run-wide checks over the exchanges of the run; `baseUrl` is TARGET_URL (only exchanges under it are judged). */
export function runWideChecks(logged: ExchangeSummary[], baseUrl?: string): TestRecord[] {
  const all = logged.filter((e) => underBase(e.url, baseUrl));
  const outside = logged.length - all.length;
  const answered = all.filter((e) => e.status !== undefined);
  const count = (source: ExchangeSummary['source']) => answered.filter((e) => e.source === source).length;
  const parts = [count('client') && `${count('client')} to client libraries`, count('fuzz') && `${count('fuzz')} to the fuzz phase`, count('preflight') && 'the preflight'].filter(Boolean);
  const n = `${answered.length} responses${parts.length ? `: ${parts.join(', ')}` : ''}${outside ? `; ${outside} outside the base URL not judged` : ''}`;
  const out: TestRecord[] = [];
  for (const rule of RESPONSE_RULES) {
    const r = judgeRule(rule, all, n);
    if (r) out.push(r);
    if (rule.clause === 'ERR-4') out.push(err5(all, n));
  }
  return out;
}

/** One rule over the run's exchanges: its record (undefined for a probed rule without a breach). */
function judgeRule(rule: ResponseRule, all: ExchangeSummary[], n: string): TestRecord | undefined {
  const fuzzOwn = !!rule.fuzzReports;
  const mine = fuzzOwn ? all.filter((e) => e.source !== 'fuzz') : all;
  const judged = mine.filter((e) => rule.judges(e));
  const offenders: Array<{ e: ExchangeSummary; seen: string }> = [];
  for (const e of judged) {
    const seen = rule.check(e);
    if (seen !== undefined) offenders.push({ e, seen });
  }
  const byFuzz = fuzzOwn && mine.length < all.length ? `; the fuzz phase's ${all.length - mine.length} requests are judged by its own ${rule.clause} test` : '';
  if (rule.probed) {
    if (!offenders.length) return undefined;
  } else if (judged.length === 0) {
    return record(rule.clause, rule.title, 'inconclusive', `no evidence: ${rule.evidence} in ${n}${byFuzz}`);
  }
  if (!offenders.length) {
    return record(rule.clause, rule.title, 'pass', `none breaks it: ${judged.length} ${rule.judgedNoun} judged, in ${n}${byFuzz}`);
  }
  return record(rule.clause, rule.title, broken(rule.clause),
    `expected ${rule.expected}, got ${offenders.length} of ${judged.length} ${rule.judgedNoun} breaking it: ${list(offenders.map((o) => o.e), (_, i) => offenders[i]!.seen)}${byFuzz}`,
    offenders.map((o) => o.e),
    { expected: rule.expected, seen: `${offenders.length} of ${judged.length} ${rule.judgedNoun}; the first: ${where(offenders[0]!.e)}${offenders[0]!.e.test ? ` [${offenders[0]!.e.test}]` : ''}: ${offenders[0]!.seen}` });
}

/** ERR-5 is INFO: what the run's error bodies carry, by status (no rule, no verdict on an exchange). */
function err5(all: ExchangeSummary[], n: string): TestRecord {
  const objects = all.filter((e) => e.status !== undefined && e.status >= 400 && e.hasErrorObject);
  if (objects.length === 0) return record('ERR-5', ERR_5_TITLE, 'inconclusive', `no evidence: no error object in any failing response in ${n}`);
  const byStatus = new Map<number, Set<string>>();
  let withParam = 0;
  for (const e of objects) {
    if (e.errorHasParam) withParam++;
    const set = byStatus.get(e.status!) ?? new Set();
    set.add(`${String(e.errorType)}/${String(e.errorCode)}`);
    byStatus.set(e.status!, set);
  }
  const table = [...byStatus].sort(([a], [b]) => a - b).map(([s, v]) => `${s}: ${[...v].join(', ')}`).join('; ');
  return record('ERR-5', ERR_5_TITLE, 'info', `${withParam} of ${objects.length} error bodies carry param; type/code by status: ${table}`);
}

/**
 * A probed rule's run-wide breach beside its probe's own failure is one failure: it
 * becomes a note on the probe's record (how many more exchanges of the run broke the
 * clause, and the first), not a second record.
 */
export function foldIntoProbes(records: TestRecord[], runWide: TestRecord[]): TestRecord[] {
  const probed = new Set(RESPONSE_RULES.filter((r) => r.probed).map((r) => r.clause as string));
  return runWide.filter((w) => {
    if (!probed.has(w.clause) || (w.verdict !== 'fail' && w.verdict !== 'warn')) return true;
    const probe = records.find((t) => t.clause === w.clause && (t.verdict === 'fail' || t.verdict === 'warn'));
    if (!probe) return true;
    probe.notes.push(`across the run's traffic, ${w.clause}: ${w.seen ?? w.message}`);
    return false;
  });
}
