// Harness and environment errors are `error`, never a verdict on the target: a test
// that throws a TypeError (at MUST, SHOULD and INFO level), a test that ends having
// judged nothing, a client library that fails to load and a suite file that crashes
// on import each show `error`, apart from `fail` in every report, and the run exits 1.
// The broken tests come in through the self-test seam CHATGATE_SELFTEST_SUITES
// (docs/RUNNER.md); the file filter keeps the run to them. No request reaches the
// target, so the run-wide checks show the evidence rule: all inconclusive.
// Then client-library cells whose own code fails (the wire, the guarded fetch, the
// driver) are `error` while the library's own outcome still judges; a crash of the
// runner is exit 3 with reports; SIGTERM is exit 143 with the reports of what completed.
// Cost: four short runs, the first of 18 tests, about 5 s each.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Results } from '../../lib/run/verdicts.ts';
import { ROOT, runSuite } from '../support/run-suite.ts';
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

describe('harness errors in client-library tests', () => {
  it('an exception of our own wire, guarded fetch or driver is `error`, not a fail or inconclusive of SVC-4; the library\'s own outcome still judges', async () => {
    const run = await runSuite({ CHATGATE_SELFTEST_SUITES: 'selftest/fixtures/client-faults', RATE_LIMIT_PROBE_MAX: '0', FUZZ_RUNS: '0' }, { args: ['client-faults'] });
    expect(run.exitCode, run.stderr.slice(0, 500)).toBe(1);
    const cells = Object.fromEntries(run.results!.tests.filter((t) => t.matrix).map((t) => [t.id, `${t.verdict}: ${t.message ?? ''}`]));
    expect(Object.keys(cells).sort()).toEqual([
      'clients/driver-fault@0/completion', 'clients/driver-fault@0/error-401', 'clients/guarded-fetch-fault@0/completion',
      'clients/wire-fault@0/completion', 'clients/wire-fault@0/error-401',
    ]);
    expect(cells['clients/wire-fault@0/completion']).toMatch(/^error: harness error in the fetch wire-fault@0 was given .*TypeError.*harness\/clients\/fetch\.ts/);
    expect(cells['clients/wire-fault@0/error-401']).toMatch(/^error: harness error in the fetch wire-fault@0 was given/);
    expect(cells['clients/guarded-fetch-fault@0/completion']).toMatch(/^error: harness error in the fetch guarded-fetch-fault@0 was given .*AbortSignal/);
    expect(cells['clients/driver-fault@0/completion']).toMatch(/^error: harness error in the driver-fault@0 driver .*TypeError.*client-faults\.suite\.ts/);
    // The control: the library raised its own AuthenticationError, so the cell judges the client.
    expect(cells['clients/driver-fault@0/error-401']).toMatch(/^pass/);
    expect(run.results!.summary.fail).toBe(0);
    expect(run.stdout).toMatch(/verdict: FAIL \(4 harness errors\)/);
  }, HANG_GUARD_MS);
});

describe('the runner itself', () => {
  it('a crash of the runner exits 3 and still writes reports that say what happened, with the tests that completed', async () => {
    const run = await runSuite({ CHATGATE_SELFTEST_CRASH: '1', RATE_LIMIT_PROBE_MAX: '0', FUZZ_RUNS: '0' }, { args: ['versioning'] });
    expect(run.exitCode, run.stderr.slice(0, 500)).toBe(3);
    expect(run.stderr).toContain('chatgate: the runner crashed (a defect of chatgate, not a verdict on the target)');
    const r = run.results!;
    expect(r.exitCode).toBe(3);
    expect(r.incomplete).toMatchObject({ reason: 'crashed' });
    expect(r.incomplete!.detail).toContain('CHATGATE_SELFTEST_CRASH=1');
    expect(r.tests.find((t) => t.id === 'runner/crash')).toMatchObject({ verdict: 'error' });
    expect(r.tests.filter((t) => t.id.startsWith('versioning/')).map((t) => t.verdict).sort()).toEqual(['info', 'pass']);
    expect(run.stdout).toContain('verdict: INCOMPLETE (the runner crashed');
    expect(run.report('summary.md')).toContain('INCOMPLETE');
    expect(run.report('junit.xml')).toContain('<error type="harness-error"');
    expect(run.report('index.html')).toContain('>INCOMPLETE<');
  }, HANG_GUARD_MS);

  it('SIGTERM writes the reports of the tests that completed, marked incomplete, and exits 143', async () => {
    const reportsDir = mkdtempSync(join(tmpdir(), 'chatgate-interrupt-'));
    const mark = join(reportsDir, 'waiting');
    const child = spawn(process.execPath, [join(ROOT, 'bin/chatgate.mjs'), 'interrupt'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CHATGATE_SELFTEST_SUITES: 'selftest/fixtures/interrupt', CHATGATE_SELFTEST_PROGRESS: '1', INTERRUPT_FIXTURE_MARK: mark, RATE_LIMIT_PROBE_MAX: '0', FUZZ_RUNS: '0', REPORTS_DIR: reportsDir },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    // The slow test is running and the runner holds the quick one's verdict (bounded by the guard below):
    // vitest batches a worker's reports, so a fixed wait was not always enough on a loaded machine.
    while (!(existsSync(mark) && out.includes('chatgate: 1 tests done\n')) && child.exitCode === null) await sleep(100);
    expect(existsSync(mark), out.slice(0, 500)).toBe(true);
    expect(out).toContain('chatgate: 1 tests done\n');
    child.kill('SIGTERM');
    expect(await closed, out.slice(-800)).toBe(143);
    expect(out).toContain('chatgate: interrupted by SIGTERM');
    const r = JSON.parse(readFileSync(join(reportsDir, 'latest', 'results.json'), 'utf8')) as Results;
    expect(r.exitCode).toBe(143);
    expect(r.incomplete).toMatchObject({ reason: 'interrupted' });
    expect(r.incomplete!.detail).toMatch(/^interrupted by SIGTERM after 1 completed test;/);
    expect(r.tests.map((t) => `${t.id} ${t.verdict}`)).toEqual(['selftest/interrupt/quick pass']);
    expect(readFileSync(join(reportsDir, 'latest', 'summary.md'), 'utf8')).toContain('verdict: INCOMPLETE (interrupted by SIGTERM');
    // An incomplete run is no baseline for the next run's comparison.
    expect(existsSync(join(reportsDir, 'runs'))).toBe(false);
  }, HANG_GUARD_MS);
});
