// The report of a run, derived once: clause rows, totals, the client x operation
// matrix, the failing tests and clauses, and the run's one-line statements (mode,
// verdict, throttling, comparison with the previous run). Every writer (console,
// summary.md, junit.xml, index.html) renders this model, so the formats cannot disagree.
import { isHarnessError, type Results, type TestRecord } from '../../lib/run/verdicts.ts';
import { comparisonLine } from './history.ts';
import { throttleLine } from './throttle.ts';
import { targetDownLine } from '../../lib/run/target-down.ts';
import {
  OUTCOMES, clauseRows, clientMatrix, failingTests, isFailing, modeLine, outcome, outcomeCounts, sectionTable, worst,
  type ClauseRow, type Outcome,
} from './outcomes.ts';

export type SectionRow = ReturnType<typeof sectionTable>[number];

/** One cell of the client x operation matrix: its tests and their worst outcome (undefined: no test). */
export interface MatrixCell {
  tests: TestRecord[];
  worst: Outcome | undefined;
}

export interface MatrixModel {
  clients: string[];
  operations: string[];
  cell(client: string, operation: string): MatrixCell;
}

export interface ReportModel {
  /** The run as recorded (results.json writes it whole). */
  results: Results;
  /** Every clause of the registry in registry order, then any clause the registry lacks. */
  rows: ClauseRow[];
  /** Outcome counts per spec section. */
  sections: SectionRow[];
  /** Outcome -> number of tests over the run. */
  counts: Record<Outcome, number>;
  /** The outcomes the totals show: every one that occurred, and pass and fail always. */
  totalsShown: Outcome[];
  /** Clauses the selection kept that no test checks. */
  noTest: number;
  /** Undefined when no test fills a cell. */
  matrix: MatrixModel | undefined;
  /** The tests that make the run fail, in report order. */
  failing: TestRecord[];
  /** Harness and environment errors, apart: never a verdict on the target. */
  harnessErrors: TestRecord[];
  /** The failures shown with requirement, expected, seen and curl: failing tests but unexpected passes and harness errors. */
  failures: TestRecord[];
  /** Clauses with a failing test that is no harness error: the first such test and how many. */
  failingClauses: Array<{ row: ClauseRow; first: TestRecord; count: number }>;
  /** Other clauses with a known failure, a flaky test or a warning that does not fail the run: the first such test. */
  notFailing: Array<{ row: ClauseRow; first: TestRecord }>;
  /** The run's one-line statements, worded once for every writer. */
  lines: {
    mode: string;
    verdict: string;
    /** Undefined when the run was never held back for a 429. */
    throttle: string | undefined;
    /** Undefined unless the target stopped answering mid-run. */
    targetDown: string | undefined;
    comparison: string;
  };
}

const NOT_FAILING = ['expected-fail', 'flaky', 'warn'];

export function reportModel(results: Results): ReportModel {
  const rows = clauseRows(results);
  const counts = outcomeCounts(results.tests);
  const failing = failingTests(results);
  const failingTargets = failing.filter((t) => !isHarnessError(t));
  const failingClauses = rows.filter((r) => r.tests.some((t) => failingTargets.includes(t))).map((row) => ({
    row, first: row.tests.find((x) => failingTargets.includes(x))!, count: row.tests.filter((x) => failingTargets.includes(x)).length,
  }));
  const failingRows = new Set(failingClauses.map((c) => c.row));
  const notFailing = rows
    .filter((r) => !failingRows.has(r) && r.tests.some((t) => NOT_FAILING.includes(outcome(t)) && !isFailing(outcome(t), results)))
    .map((row) => ({ row, first: row.tests.find((x) => NOT_FAILING.includes(outcome(x)))! }));
  return {
    results, rows, counts, failing, failingClauses, notFailing,
    sections: sectionTable(rows),
    totalsShown: OUTCOMES.filter((o) => counts[o] > 0 || o === 'pass' || o === 'fail'),
    noTest: rows.filter((r) => r.outcome === 'no-test').length,
    matrix: matrixModel(results),
    harnessErrors: results.tests.filter(isHarnessError),
    failures: failing.filter((t) => outcome(t) !== 'unexpected-pass' && !isHarnessError(t)),
    lines: {
      mode: modeLine(results),
      verdict: verdictLine(results, failing),
      throttle: throttleLine(results),
      targetDown: results.targetDown ? targetDownLine(results.targetDown, results.startedAt) : undefined,
      comparison: comparisonLine(results.comparison),
    },
  };
}

function matrixModel(results: Results): MatrixModel | undefined {
  const m = clientMatrix(results);
  if (!m) return undefined;
  const cells = new Map<string, MatrixCell>();
  for (const c of m.clients) {
    for (const o of m.operations) {
      const tests = m.cell(c, o);
      cells.set(JSON.stringify([c, o]), { tests, worst: worst(tests) });
    }
  }
  return { clients: m.clients, operations: m.operations, cell: (c, o) => cells.get(JSON.stringify([c, o]))! };
}

/** "verdict: PASS", "verdict: FAIL (2 failing tests, 1 harness error)", or INCOMPLETE with why. */
export function verdictLine(results: Results, failingTestsOfRun: TestRecord[] = failingTests(results)): string {
  if (results.incomplete) return `verdict: INCOMPLETE (${results.incomplete.detail})`;
  if (results.exitCode === 0) return 'verdict: PASS';
  const failing = failingTestsOfRun.filter((t) => outcome(t) !== 'unexpected-pass');
  const errors = failing.filter(isHarnessError).length;
  const tests = failing.length - errors;
  const passes = results.expectations?.updated ? 0 : results.expectations?.unexpectedPass.length ?? 0;
  const parts = [tests && `${tests} failing test${tests === 1 ? '' : 's'}`, errors && `${errors} harness error${errors === 1 ? '' : 's'}`, passes && `${passes} unexpected pass${passes === 1 ? '' : 'es'}`].filter(Boolean);
  return `verdict: FAIL (${parts.join(', ')})`;
}
