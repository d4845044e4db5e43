// The judging phases of npm test, after the tests ran: the run-wide checks over every
// exchange of the run, then the known failures (EXPECTATIONS) and the run's exit code.
import { runFails, type Results, type TestRecord } from '../lib/run/verdicts.ts';
import { selectionMatches } from '../lib/run/selection.ts';
import { applyExpectations, removeEntries } from '../lib/run/expectations.ts';
import { THROTTLED } from '../lib/run/back-off.ts';
import { foldIntoProbes, runWideChecks } from './run-wide-checks.ts';
import { resultsOf, state } from './run-state.ts';
import { cutByOutage, findTargetDown, markUnreachable } from '../lib/run/target-down.ts';
import type { Plan } from './configure.ts';
import type { Target } from './start-target.ts';
import type { SuiteRun } from './run-tests.ts';

/**
 * The suite's records with the run-wide checks (selected like the tests) and the suite
 * files that failed to load; undefined when no suite test ran: the run-wide clauses
 * judge the responses of the tests that ran, so without any they judge nothing.
 */
export function withRunWideChecks({ config, args }: Plan, target: Target, run: SuiteRun): TestRecord[] | undefined {
  const { collector, exchanges } = run;
  if (collector.records.length === 0 && collector.moduleErrors.length === 0) return undefined;
  // A target that went away mid-run: the later tests are errors, the requests in flight the finding.
  const down = findTargetDown(exchanges);
  const outage = down ? markUnreachable(collector.records, down, exchanges, state.startedAt) : [];
  if (down) run.targetDown = down;
  const nameFilter = args.testNamePattern === undefined ? undefined : new RegExp(args.testNamePattern);
  const runWide = foldIntoProbes(collector.records, runWideChecks(down ? exchanges.filter((e) => !cutByOutage(down, e)) : exchanges, target.ref.url)
    .filter((r) => selectionMatches(config.clauses, r.clause) && (!nameFilter || nameFilter.test(r.title))));
  const tests = [...collector.records, ...runWide, ...outage].sort((a, b) => a.id.localeCompare(b.id));
  for (const e of collector.moduleErrors) {
    tests.push({ id: `load-error/${tests.length}`, clause: 'unknown', level: 'MUST', verdict: 'error', title: 'suite file failed to load', requirement: '', message: e, notes: [] });
  }
  return tests;
}

/** A selection that left no suite test: exit 2, saying which selection. */
export function noTestSelected({ config, args }: Plan): number {
  const selection = [config.clauses && `CLAUSES=${config.clauses}`, args.testNamePattern && `-t ${args.testNamePattern}`, args.files.length && `file filters ${args.files.join(' ')}`];
  process.stderr.write(`chatgate: no test matched ${selection.filter(Boolean).join(', ') || 'the selection'}\n`);
  return 2;
}

/** The known failures applied (and, with --update-expectations, the ones that passed removed), the exit code, the throttling. */
export function judge({ config, args, expectations }: Plan, tests: TestRecord[], { paced, targetDown }: SuiteRun): Results {
  const known = expectations ? applyExpectations(expectations, tests) : undefined;
  if (known && args.updateExpectations && known.unexpectedPass.length) {
    removeEntries(expectations!, known.unexpectedPass);
    known.updated = true;
  }
  if (known) known.file = config.expectationsFile!;
  const failed = runFails(tests, { strict: config.strict, expectations: known });
  const results: Results = { ...resultsOf(tests, failed ? 1 : 0), ...(known ? { expectations: known } : {}), ...(targetDown ? { targetDown } : {}) };
  const throttledOutTests = tests.filter((t) => t.verdict === 'inconclusive' && t.message?.startsWith(THROTTLED)).length;
  if (paced.answered429 > 0 || paced.heldMs >= 1000 || throttledOutTests > 0) {
    results.throttle = {
      answered429: paced.answered429, heldMs: Math.round(paced.heldMs), waitedMs: Math.round(paced.waitedMs),
      lowestConcurrency: paced.lowestConcurrency, widestIntervalMs: paced.widestIntervalMs, throttledOutTests,
    };
  }
  return results;
}
