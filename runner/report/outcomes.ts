// What every human-readable report shows for a test and a clause (Autobahn-style
// verdict classes): the verdict, refined by the expectations file (a known failure
// is "expected fail", a known failure that passed is "unexpected pass"), and for a
// clause without tests, whether none exists or the selection left it out.
import { CLAUSES, SECTIONS, type ClauseId, type SectionId } from '../../lib/spec/clauses.ts';
import { selectionMatches } from '../../lib/run/selection.ts';
import { failsTheRun, type Results, type TestRecord, type Verdict } from '../../lib/run/verdicts.ts';

// error: a harness or environment error (never a verdict on the target), shown apart from fail.
export type Outcome = 'error' | 'fail' | 'unexpected-pass' | 'flaky' | 'warn' | 'expected-fail' | 'inconclusive' | 'skip' | 'info' | 'pass';
export type ClauseOutcome = Outcome | 'no-test' | 'not-selected';

/** Worst first: a clause (or a matrix cell) shows the worst outcome among its tests. */
export const OUTCOMES: Outcome[] = ['error', 'fail', 'unexpected-pass', 'flaky', 'warn', 'expected-fail', 'inconclusive', 'skip', 'info', 'pass'];

export const LABEL: Record<ClauseOutcome, string> = {
  error: 'error', fail: 'fail', 'unexpected-pass': 'unexpected pass', flaky: 'flaky', warn: 'warn', 'expected-fail': 'expected fail',
  inconclusive: 'inconclusive', skip: 'skip', info: 'info', pass: 'pass', 'no-test': 'no test', 'not-selected': 'not selected',
};

export function outcome(t: TestRecord): Outcome {
  if (t.expectation?.outcome === 'expected-fail') return 'expected-fail';
  if (t.expectation?.outcome === 'unexpected-pass') return 'unexpected-pass';
  return t.verdict;
}

export function worst(tests: TestRecord[]): Outcome | undefined {
  return OUTCOMES.find((o) => tests.some((t) => outcome(t) === o));
}

/** Does a test with this outcome make the run fail? The runner's own rule (lib/run/verdicts.ts failsTheRun), applied to an outcome. */
export function isFailing(o: Outcome, results: Pick<Results, 'strict' | 'expectations'>): boolean {
  const expectation = o === 'expected-fail' || o === 'unexpected-pass' ? { entry: '', reason: '', outcome: o } : undefined;
  const verdict: Verdict = o === 'expected-fail' ? 'fail' : o === 'unexpected-pass' ? 'pass' : o;
  return failsTheRun({ verdict, expectation }, { strict: results.strict, expectations: results.expectations });
}

export interface ClauseRow {
  id: string;
  level: string;
  section: string;
  requirement: string;
  tests: TestRecord[];
  outcome: ClauseOutcome;
  /** Outcome -> number of tests. */
  counts: Partial<Record<Outcome, number>>;
}

/** Every clause of the registry, in registry order, then any clause the registry lacks (a load error's "unknown"). */
export function clauseRows(results: Results): ClauseRow[] {
  const byId = new Map<string, TestRecord[]>();
  for (const id of Object.keys(CLAUSES)) byId.set(id, []);
  for (const t of results.tests) byId.set(t.clause, [...(byId.get(t.clause) ?? []), t]);
  return [...byId].map(([id, tests]) => {
    const def = CLAUSES[id as ClauseId] as (typeof CLAUSES)[ClauseId] | undefined;
    const counts: Partial<Record<Outcome, number>> = {};
    for (const t of tests) counts[outcome(t)] = (counts[outcome(t)] ?? 0) + 1;
    const selected = !def || selectionMatches(results.mode?.clauses, id);
    return {
      id, level: def?.level ?? '', section: def?.section ?? 'other', requirement: def?.requirement ?? tests[0]?.requirement ?? '',
      tests, counts, outcome: worst(tests) ?? (selected ? 'no-test' : 'not-selected'),
    };
  });
}

export function sectionTitle(section: string): string {
  return SECTIONS[section as SectionId] ?? 'Other';
}

/** Section -> outcome counts over its tests, plus its clauses without a test. */
export function sectionTable(rows: ClauseRow[]): Array<{ section: string; title: string; counts: Partial<Record<Outcome, number>>; noTest: number; clauses: number }> {
  const out = new Map<string, { section: string; title: string; counts: Partial<Record<Outcome, number>>; noTest: number; clauses: number }>();
  for (const r of rows) {
    const s = out.get(r.section) ?? { section: r.section, title: sectionTitle(r.section), counts: {}, noTest: 0, clauses: 0 };
    s.clauses++;
    if (r.outcome === 'no-test') s.noTest++;
    for (const [o, n] of Object.entries(r.counts)) s.counts[o as Outcome] = (s.counts[o as Outcome] ?? 0) + n;
    out.set(r.section, s);
  }
  return [...out.values()];
}

/** Outcome -> number of tests over the whole run. */
export function outcomeCounts(tests: TestRecord[]): Record<Outcome, number> {
  const c = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const t of tests) c[outcome(t)]++;
  return c;
}

/** The tests that make the run fail, in report order. */
export function failingTests(results: Results): TestRecord[] {
  return results.tests.filter((t) => failsTheRun(t, { strict: results.strict, expectations: results.expectations }));
}

/** Tests whose details a reader needs: anything but a plain pass or info. */
export function needsDetails(t: TestRecord): boolean {
  return !['pass', 'info', 'unexpected-pass'].includes(outcome(t));
}

export interface Matrix {
  clients: string[];
  operations: string[];
  cell(client: string, operation: string): TestRecord[];
}

/** The client x operation matrix of the client-compatibility tests, or undefined when no test carries a cell. */
export function clientMatrix(results: Results): Matrix | undefined {
  const cells = results.tests.filter((t) => t.matrix);
  if (cells.length === 0) return undefined;
  const clients = [...new Set(cells.map((t) => t.matrix!.client))];
  const operations = [...new Set(cells.map((t) => t.matrix!.operation))];
  return {
    clients, operations,
    cell: (client, operation) => cells.filter((t) => t.matrix!.client === client && t.matrix!.operation === operation),
  };
}

/** One line: what the mode of the run means for its exit code. */
export function modeLine(results: Results): string {
  const m = results.mode;
  const parts = [results.strict ? 'strict (SHOULD warnings and flaky tests fail the run)' : 'normal (only MUST/COMPAT failures fail the run)'];
  if (m?.clauses) parts.push(`CLAUSES=${m.clauses}`);
  if (m?.testNamePattern) parts.push(`-t ${m.testNamePattern}`);
  if (m?.files?.length) parts.push(`files ${m.files.join(' ')}`);
  if (m?.retryFailed) parts.push(`RETRY_FAILED=${m.retryFailed}`);
  if (m?.expectations) parts.push(`EXPECTATIONS=${m.expectations}${m.updateExpectations ? ' (--update-expectations)' : ''}`);
  return parts.join('; ');
}

/** The first line of a message, shortened: for tables and one-line reasons. */
export function oneLine(text: string | undefined, max = 160): string {
  const line = (text ?? '').split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The reason a test is shown: the known-failure reason, the message, or the expectation. */
export function reasonOf(t: TestRecord): string {
  if (t.expectation?.outcome === 'unexpected-pass') return `passed, but ${t.expectation.entry} is listed as a known failure (${t.expectation.reason})`;
  const base = t.expected ? `expected ${t.expected}, got ${t.seen}` : t.message ?? '';
  return t.verdict === 'flaky' ? `passed on retry; failed first: ${base}` : base;
}
