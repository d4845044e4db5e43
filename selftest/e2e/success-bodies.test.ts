// Issue 28: a success without its body fails wherever it is seen, not when a fixed test
// happens to hit one. A reference that answers 1 in 20 plain chat replies under
// concurrency with an empty 200 fails SVC-1 in 10 of 10 runs (the burst probe in
// suites/svc.test.ts, the success-body rule on every exchange); each failure names the
// empty 200 and carries a curl. Runs the svc section only, SVC-1 selected (~5 s a run).
import { describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';

const RUNS = 10;
const slot = limiter(2);

describe('empty 200s under concurrency', () => {
  it(`fail SVC-1 in ${RUNS} of ${RUNS} runs`, async () => {
    const runs = await Promise.all(Array.from({ length: RUNS }, () => slot(() => runSuite(
      { REFERENCE_DEFECT: 'empty-200-under-concurrency', CLAUSES: 'SVC-1', TIMEOUT_MS: '4000', RATE_LIMIT_PROBE_MAX: '0', FUZZ_RUNS: '0' },
      { args: ['svc'] },
    ))));
    const caught = runs.map((run) => {
      const failed = (run.results?.tests ?? []).filter((t) => t.clause === 'SVC-1' && t.verdict === 'fail');
      const errors = (run.results?.tests ?? []).filter((t) => t.verdict === 'error');
      expect(errors.map((t) => `${t.title}: ${t.message}`), 'harness errors').toEqual([]);
      return failed.some((t) => /empty body/.test(t.seen ?? '') && /^curl /.test(t.curl ?? '')) && run.exitCode === 1;
    });
    expect(caught.filter(Boolean).length, 'runs that failed SVC-1 on an empty 200 with its curl').toBe(RUNS);
  }, HANG_GUARD_MS);
});
