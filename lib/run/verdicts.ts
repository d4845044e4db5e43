// The verdict vocabulary and the results contract (reports/latest/results.json).
// Other tools read this shape: add fields, never rename or remove one.
import type { Level } from '../spec/clauses.ts';

// flaky: failed, then passed when RETRY_FAILED reran it (fails the run only in strict mode).
// error: a defect of the harness or the environment (a TypeError in a test, a client
// library that does not load, a test that timed out or ended having judged nothing),
// never a verdict on the target; it fails the run at any clause level.
export const VERDICTS = ['pass', 'fail', 'warn', 'info', 'skip', 'inconclusive', 'flaky', 'error'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * The version of the results.json contract. 1 (no field): test ids were
 * "<suite file>/<title>". 2: test ids are the stable ids given at each test
 * ("auth/missing-key/models"), independent of titles; the field itself is new.
 */
export const RESULTS_VERSION = 2;

export interface TestRecord {
  /** Stable id given at the test: "<suite file>/<slug>..." (harness/clause-test.ts TEST_ID); unchanged when the title changes. */
  id: string;
  clause: string;
  level: Level;
  verdict: Verdict;
  title: string;
  requirement: string;
  message?: string;
  expected?: string;
  seen?: string;
  /** Reproduces the request that failed, key shown as ***. */
  curl?: string;
  response?: { status?: number; headers?: Record<string, string>; transportError?: string; bodyExcerpt?: string };
  notes: string[];
  /** Judged checks the test made (harness/clause-test.ts): a pass has at least one; reaching the server is not one. */
  checks?: number;
  observations?: string[];
  durationMs?: number;
  file?: string;
  /** Client-compatibility tests: the cell of the client x operation matrix this test fills. */
  matrix?: { client: string; operation: string };
  /** Set when an entry of the EXPECTATIONS file names this test or its clause. */
  expectation?: TestExpectation;
  /** With RETRY_FAILED: the verdict of each attempt, first run first. */
  attempts?: Array<{ verdict: Verdict; message?: string }>;
}

export interface TestExpectation {
  /** The entry of the expectations file: a clause id or a test id. */
  entry: string;
  reason: string;
  /** expected-fail: failed as the file says; unexpected-pass: the file says it fails, it passed; unconfirmed: neither (skip, inconclusive). */
  outcome: 'expected-fail' | 'unexpected-pass' | 'unconfirmed';
}

/** How the run was asked to judge and what it selected (reports show it). */
export interface RunMode {
  strict: boolean;
  /** CLAUSES as given. */
  clauses?: string;
  /** vitest's own filters passed through the runner: -t <pattern>, file name filters. */
  testNamePattern?: string;
  files?: string[];
  /** RETRY_FAILED: how many times an unexpected failure is rerun. */
  retryFailed: number;
  /** EXPECTATIONS as given. */
  expectations?: string;
  updateExpectations: boolean;
  /** The fuzz phase's knobs as used: the seed is always recorded, drawn or given. */
  fuzz?: { runs: number; seed: number; timeMs: number; concurrency: number; maxBodyBytes: number; replay?: string };
}

export interface ExpectationsSummary {
  file: string;
  /** Tests that failed as the file says: they do not fail the run. */
  expectedFail: number;
  /** Entries the file says fail, whose clause or test passed: they fail the run unless updated. */
  unexpectedPass: string[];
  /** Entries whose tests neither failed nor passed (skip, inconclusive), or did not run (selection). */
  unconfirmed: string[];
  notRun: string[];
  /** --update-expectations removed the unexpected passes from the file. */
  updated: boolean;
}

/** Since the previous run against the same target (reports/runs/): tests whose verdict moved between pass/info and fail/warn. */
export interface RunComparison {
  previousStartedAt: string;
  newlyFailing: Array<{ id: string; clause: string }>;
  newlyPassing: Array<{ id: string; clause: string }>;
}

export interface Results {
  /** RESULTS_VERSION of the writer; absent in version 1. */
  resultsVersion?: number;
  target: string;
  startedAt: string;
  durationMs: number;
  strict: boolean;
  summary: Record<Verdict, number>;
  /** As the runner exits: 0 pass, 1 conformance failure, 3 the runner crashed, 130/143 interrupted. */
  exitCode: number;
  tests: TestRecord[];
  chatgate: { version: string; node: string; /** Peak resident memory of the runner process (tests run in its threads). */ maxRssMiB?: number };
  mode?: RunMode;
  expectations?: ExpectationsSummary;
  /** Absent when no earlier run against this target is kept. */
  comparison?: RunComparison;
  /** How the run paced itself for the target's rate limit (lib/run/governor.ts); absent when nothing was paced. */
  throttle?: ThrottleSummary;
  /** Set when the target stopped answering mid-run (lib/run/target-down.ts): later tests are `error`. */
  targetDown?: TargetDown;
  /** Set when the run did not finish: interrupted (SIGINT/SIGTERM) or the runner crashed. `tests` holds what completed. */
  incomplete?: { reason: 'interrupted' | 'crashed'; detail: string };
}

/** The run's governor figures, and the tests a 429 left without a verdict. */
export interface ThrottleSummary {
  /** 429 answers to paced requests (the rate-limit probes' own are not counted). */
  answered429: number;
  /** Wall time during which at least one request waited for its turn, ms. */
  heldMs: number;
  /** Sum over requests of the time each waited for its turn, ms. */
  waitedMs: number;
  /** Fewest requests in flight the governor allowed, and the widest spacing of starts (ms). */
  lowestConcurrency: number;
  widestIntervalMs: number;
  /** Tests left inconclusive because a request still met 429 after its back-off budget. */
  throttledOutTests: number;
}

export function summarise(tests: TestRecord[]): Record<Verdict, number> {
  const s = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const t of tests) s[t.verdict]++;
  return s;
}

/** What decides whether a test fails the run: strict mode, and whether --update-expectations removed the unexpected passes. */
export interface FailRule { strict: boolean; expectations?: { updated: boolean } }

/**
 * The one rule for "does this test fail the run", used by the runner (exit code,
 * reruns) and every report writer: an `error` always (an expectation cannot excuse a
 * harness error); an unexpected `fail`; a known failure that passed, unless the
 * expectations file was updated; in strict mode an unexpected `warn` or `flaky`.
 * `strict` alone (a boolean) is accepted for callers without expectations.
 */
export function failsTheRun(t: Pick<TestRecord, 'verdict' | 'expectation'>, rule: FailRule | boolean): boolean {
  const { strict, expectations } = typeof rule === 'boolean' ? { strict: rule, expectations: undefined } : rule;
  if (t.verdict === 'error') return true;
  if (t.expectation?.outcome === 'expected-fail') return false;
  if (t.expectation?.outcome === 'unexpected-pass') return !expectations?.updated;
  return t.verdict === 'fail' || (strict && (t.verdict === 'warn' || t.verdict === 'flaky'));
}

// The other predicates every reader of verdicts uses (console, reports, expectations,
// history, reruns, the exit code), so that "failing" means one thing everywhere.

/** The harness or the environment failed: no verdict on the target (shown apart from failures). */
export function isHarnessError(t: Pick<TestRecord, 'verdict'>): boolean {
  return t.verdict === 'error';
}

/** Counts as failing (history's "newly failing", a known failure confirmed): the target broke a clause (fail, warn, flaky) or the run could not judge it (error). */
export function countsAsFailing(t: Pick<TestRecord, 'verdict'>): boolean {
  return t.verdict === 'fail' || t.verdict === 'warn' || t.verdict === 'flaky' || t.verdict === 'error';
}

/** Counts as passing: a judged pass, or an INFO clause that reported what it saw. Skip and inconclusive are neither. */
export function countsAsPassing(t: Pick<TestRecord, 'verdict'>): boolean {
  return t.verdict === 'pass' || t.verdict === 'info';
}

/** Whether the run fails (exit code 1): any test that fails the run, or a known failure that passed and was not removed. */
export function runFails(tests: Array<Pick<TestRecord, 'verdict' | 'expectation'>>, rule: FailRule & { expectations?: Pick<ExpectationsSummary, 'updated' | 'unexpectedPass'> }): boolean {
  return tests.some((t) => failsTheRun(t, rule)) || (!!rule.expectations?.unexpectedPass.length && !rule.expectations.updated);
}

/** The message of a test's starting verdict (`inconclusive`): a record still carrying it when the run ends is an `error`. */
export const NOT_FINISHED = 'the test did not finish';

/** What a person is told about an `error` verdict (console, reports): it is not a verdict on the target. */
export function harnessErrorAdvice(message: string | undefined): string {
  return `a harness or environment error, not a verdict on the target: ${message ?? '(no message)'}; rerun, or report it with reports/latest/results.json`;
}

declare module '@vitest/runner' {
  interface TaskMeta {
    chatgate?: TestRecord;
    /** The test's stable id, set where clause() registers it (known at collection). */
    chatgateId?: string;
  }
}

/** A target that stopped answering mid-run, as lib/run/target-down.ts finds it from the run's exchanges. */
export interface TargetDown {
  /** When the first request after the last answer failed (ISO time). */
  since: string;
  /** The last request the target answered: what, whose, and how to send it again. */
  lastAnswer: { method: string; path: string; status: number; test?: string; curl: string };
  /** Requests that got no answer after it; `refused` of them found no listener at all. */
  failedRequests: number;
  refused: number;
  /** Requests sent before the target went away and cut by it: the finding. */
  inFlight: Array<{ method: string; path: string; test?: string; error: string; stream?: true }>;
  /** Tests turned into `error` (they met only the dead target). */
  unreachableTests: number;
}
