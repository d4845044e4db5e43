// RETRY_FAILED and STRICT through the runner. The reference defect flaky-cc-id gives
// a wrong completion id to every other non-stream completion: run alone
// (CLAUSES=RES-CC-1, one completion per attempt), RES-CC-1 fails on its first
// attempt and passes on the rerun, deterministically. A rerun test that passes is
// "flaky" in every report and fails the run only in strict mode; a test that keeps
// failing stays "fail"; only failing tests are rerun. Also: the step summary.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runChatgate } from './reports-run.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

// Only the file that holds RES-CC-*: a run then loads one suite file, not all of them.
const RES = ['resources'];

describe('RETRY_FAILED: flaky tests', () => {
  it('without retries, the flaky defect fails RES-CC-1 (the first completion is wrong)', async () => {
    const run = await runChatgate({ REFERENCE_DEFECT: 'flaky-cc-id', CLAUSES: 'RES-CC-1' }, RES);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.tests('RES-CC-1').map((t) => t.verdict)).toEqual(['fail']);
    expect(run.tests('RES-CC-1')[0]!.attempts).toBeUndefined();
  }, HANG_GUARD_MS);

  it('a test that passes on a rerun is flaky, shown in every report, and the run passes; the step summary is written', async () => {
    const stepSummary = join(mkdtempSync(join(tmpdir(), 'chatgate-step-')), 'summary.md');
    const run = await runChatgate({ REFERENCE_DEFECT: 'flaky-cc-id', CLAUSES: 'RES-CC-1', RETRY_FAILED: '2', GITHUB_STEP_SUMMARY: stepSummary }, RES);
    expect(run.exitCode, run.stderr).toBe(0);
    const [t] = run.tests('RES-CC-1');
    expect(t!.verdict).toBe('flaky');
    expect(t!.attempts!.map((a) => a.verdict)).toEqual(['fail', 'pass']);
    expect(t!.seen, 'the first failure is kept').toContain('cmpl-x');
    expect(run.results!.summary.flaky).toBe(1);
    expect(run.results!.mode).toMatchObject({ strict: false, retryFailed: 2, clauses: 'RES-CC-1' });
    expect(run.stderr).toContain('rerunning 1 failed test (attempt 2)');
    expect(run.stdout).toMatch(/FLAKY\s+RES-CC-1/);
    expect(run.stdout).toContain('1 flaky');
    expect(run.stdout).toContain('verdict: PASS');
    expect(run.report('summary.md')).toContain('**RES-CC-1** (flaky)');
    expect(run.report('junit.xml')).toContain('<system-out>FLAKY:');
    expect(run.report('index.html')).toMatch(/data-outcome="flaky" data-count="1"/);
    // GitHub Actions: the summary is appended to $GITHUB_STEP_SUMMARY, as written to summary.md.
    expect(readFileSync(stepSummary, 'utf8')).toBe(`${run.report('summary.md')}\n`);
  }, HANG_GUARD_MS);

  it('in strict mode a flaky test fails the run, and every report says strict mode ran', async () => {
    const run = await runChatgate({ REFERENCE_DEFECT: 'flaky-cc-id', CLAUSES: 'RES-CC-1', RETRY_FAILED: '1', STRICT: '1' }, RES);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.tests('RES-CC-1')[0]!.verdict).toBe('flaky');
    expect(run.results!.strict).toBe(true);
    expect(run.results!.mode!.strict).toBe(true);
    expect(run.stdout).toContain('mode: strict (SHOULD warnings and flaky tests fail the run)');
    expect(run.stdout).toContain('verdict: FAIL (1 failing test)');
    expect(run.report('summary.md')).toContain('**Mode:** strict');
    expect(run.report('index.html')).toContain('data-mode="strict"');
    expect(run.report('junit.xml')).toContain('<failure type="flaky"');
  }, HANG_GUARD_MS);

  it('a test that keeps failing stays fail after every retry, and passing tests are not rerun', async () => {
    const run = await runChatgate({ REFERENCE_DEFECT: 'cc-id-no-prefix', CLAUSES: 'RES-CC-1,RES-CC-2', RETRY_FAILED: '2' }, RES);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.tests('RES-CC-1')[0]!.verdict).toBe('fail');
    expect(run.tests('RES-CC-1')[0]!.attempts!.map((a) => a.verdict)).toEqual(['fail', 'fail', 'fail']);
    expect(run.tests('RES-CC-2')[0]!.verdict).toBe('pass');
    expect(run.tests('RES-CC-2')[0]!.attempts).toBeUndefined();
    expect(run.stderr).toContain('rerunning 1 failed test (attempt 3)');
    expect(run.results!.summary.flaky).toBe(0);
  }, HANG_GUARD_MS);

  it('a bad RETRY_FAILED is a configuration error', async () => {
    const run = await runChatgate({ RETRY_FAILED: 'twice' });
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe('chatgate: configuration error: RETRY_FAILED: "twice" is not a whole number from 0 to 10; set how many times a failing test is rerun');
  }, HANG_GUARD_MS);
});
