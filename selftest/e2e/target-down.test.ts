// A target that goes away mid-run (reference defect target-dies-mid-run: after 40
// requests it stops listening and drops every connection) is reported as such: one
// console line (when, after which request, its curl), the requests in flight at that
// moment the only failures, every later test `error` ("target unreachable since ..."),
// never a clause failure, in results.json, JUnit and summary.md; exit 1, as any harness
// or environment error (docs/RUNNER.md). Cost: one run of two suite files, about 10 s.
import { describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

describe('a target that goes away mid-run', () => {
  it('says so in one line; in-flight requests are the finding, later tests errors', async () => {
    const run = await runSuite({ REFERENCE_DEFECT: 'target-dies-mid-run', TIMEOUT_MS: '4000', RATE_LIMIT_PROBE_MAX: '0' }, { args: ['models', 'auth'] });
    expect(run.exitCode, run.stderr.slice(0, 500)).toBe(1);
    const r = run.results!;
    const down = r.targetDown!;
    expect(down, 'results.json targetDown').toBeDefined();
    const lines = run.stdout.split('\n').filter((l) => l.startsWith('target unreachable since'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^target unreachable since \S+ \([\d.]+ s into the run\): after (GET|POST) \/v1\/\S+ .*\(HTTP \d+\), all \d+ later requests got no answer \(\d+ refused\); \d+ in flight at that moment; the last answered request: curl .*'http:\/\/127\.0\.0\.1:\d+\/v1\//);
    // No key of the run (the embedded reference's keys): the last answered request may be a probe with a
    // malformed or unknown key ("Bearer " and nothing after it, seen in CI), which is no secret.
    expect(lines[0]).not.toMatch(/sk-ref-[0-9a-f]{8,}/);
    expect(down.refused).toBeGreaterThanOrEqual(3);
    const errors = r.tests.filter((t) => t.verdict === 'error');
    expect(errors.length).toBe(down.unreachableTests);
    expect(errors.length).toBeGreaterThan(10);
    for (const t of errors) expect(t.message, t.title).toMatch(/^target unreachable since \S+ \([\d.]+ s into the run\): no verdict on /);
    // The only failures: requests in flight when it went away (cut, not refused), or the one record that stands for them.
    const failing = r.tests.filter((t) => t.verdict === 'fail' || t.verdict === 'warn');
    expect(failing.length).toBeGreaterThan(0);
    expect(down.inFlight.length).toBeGreaterThan(0);
    const inFlight = new Set(down.inFlight.map((f) => f.test));
    const notCut = failing.filter((t) => t.id !== 'run-wide/target-down' && !inFlight.has(t.title) && !/^no response: connection reset/.test(t.seen ?? ''));
    expect(notCut.map((t) => `${t.title}: ${t.message}`)).toEqual([]);
    expect(run.report('junit.xml')).toMatch(/<error[^>]*>[^<]*target unreachable since/);
    expect(run.report('summary.md')).toContain('target unreachable since');
  }, HANG_GUARD_MS);
});
