// Harness and environment errors are `error`, never a verdict on the target: a test
// that throws a TypeError (at MUST, SHOULD and INFO level), a test that ends having
// judged nothing, a client library that fails to load and a suite file that crashes
// on import each show `error`, apart from `fail` in every report, and the run exits 1.
// The broken tests come in through the self-test seam CHATGATE_SELFTEST_SUITES
// (docs/RUNNER.md); the file filter keeps the run to them. No request reaches the
// target, so the run-wide checks show the evidence rule: all inconclusive.
// Cost: one suite run of 18 tests, about 5 s.
import { describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

describe('harness errors', () => {
  it('a broken test, a test that judges nothing, a client that fails to load and a crashing suite file are `error` and exit 1', async () => {
    const run = await runSuite({ CHATGATE_SELFTEST_SUITES: 'selftest/fixtures/harness-errors', RATE_LIMIT_PROBE_MAX: '0' }, { args: ['harness-errors'] });
    expect(run.exitCode, run.stderr.slice(0, 500)).toBe(1);
    const tests = run.results!.tests;
    const verdict = (title: RegExp) => tests.filter((t) => title.test(t.title)).map((t) => t.verdict);
    expect(verdict(/a MUST test that throws a TypeError/)).toEqual(['error']);
    expect(verdict(/a SHOULD test that throws a TypeError/)).toEqual(['error']);
    expect(verdict(/an INFO test that throws a TypeError/)).toEqual(['error']);
    expect(verdict(/ends having judged nothing/)).toEqual(['error']);
    expect(verdict(/makes one passing check/)).toEqual(['pass']);
    expect(verdict(/suite file failed to load/)).toEqual(['error']);
    const client = tests.filter((t) => t.matrix?.client === 'no-such-client@0');
    expect(client.length).toBe(6);
    for (const t of client) expect(`${t.verdict}: ${t.message}`).toMatch(/^error: no-such-client@0 could not be loaded/);
    expect(run.results!.summary.error).toBe(11);
    expect(run.results!.summary.fail).toBe(0);
    for (const t of tests.filter((x) => x.verdict === 'error')) expect(t.expected, t.title).toBeUndefined();
    // Every report shows them apart from failures, and says what to do.
    const advice = 'a harness or environment error, not a verdict on the target';
    expect(run.stdout).toContain('Harness errors (11)');
    expect(run.stdout).toContain(advice);
    expect(run.stdout).toContain('rerun, or report it with reports/latest/results.json');
    expect(run.stdout).toMatch(/verdict: FAIL \(11 harness errors\)/);
    const junit = run.report('junit.xml');
    expect(junit).toMatch(/<testsuites [^>]*failures="0" errors="11"/);
    expect(junit.match(/<error type="harness-error"/g)?.length).toBe(11);
    expect(junit).not.toContain('<failure');
    expect(run.report('summary.md')).toContain('### Harness errors (11)');
    const html = run.report('index.html');
    expect(html).toContain('data-filter="error"');
    expect(html).toContain('--error:');
    expect(html).toContain(advice);
    // No request reached the target: the run-wide checks have no evidence, and say so.
    for (const t of tests.filter((x) => x.id.startsWith('run-wide/'))) expect(`${t.clause} ${t.verdict}`).toBe(`${t.clause} inconclusive`);
  }, HANG_GUARD_MS);
});
