// EXPECTATIONS through the runner: a known failure does not fail the run and is
// shown as "expected fail"; a known failure that passes is an "unexpected pass" and
// fails the run, until --update-expectations rewrites the file; an id that names
// nothing is one line, exit 2, before any request.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChatgate } from './reports-run.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const dir = mkdtempSync(join(tmpdir(), 'chatgate-expect-e2e-'));
const write = (name: string, text: string) => { const p = join(dir, name); writeFileSync(p, text); return p; };
const RES = ['resources'];
const RES_CC_1 = 'resources/completion-id';
/** The same test's title-based id (results.json before resultsVersion 2): still accepted, deprecated. */
const RES_CC_1_OLD = 'resources/RES-CC-1 id is "chatcmpl-" followed by a suffix';

// Counts requests: a configuration error must come before any.
let requests = 0;
const server = createServer((_req, res) => { requests++; res.end('{}'); });
let target: Record<string, string> = {};
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  target = { TARGET_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, API_KEY: 'sk-test-expectations-123456' };
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('EXPECTATIONS', () => {
  it('a known failure (by test id, JSON) is an expected fail and the run passes', async () => {
    const file = write('known.json', JSON.stringify({ [RES_CC_1]: 'https://tracker.example/API-91 ids lack the prefix' }));
    const run = await runChatgate({ REFERENCE_DEFECT: 'cc-id-no-prefix', CLAUSES: 'RES-CC-1,RES-CC-2', EXPECTATIONS: file }, RES);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const [t] = run.tests('RES-CC-1');
    expect(t!.verdict).toBe('fail');
    expect(t!.expectation).toEqual({ entry: RES_CC_1, reason: 'https://tracker.example/API-91 ids lack the prefix', outcome: 'expected-fail' });
    expect(run.results!.expectations).toMatchObject({ expectedFail: 1, unexpectedPass: [], updated: false });
    expect(run.stdout).toMatch(/EXPECTED FAIL\s+RES-CC-1/);
    expect(run.stdout).toContain('1 failed (1 expected)');
    expect(run.report('summary.md')).toContain('**RES-CC-1** (expected fail): known: https://tracker.example/API-91');
    expect(run.report('junit.xml')).toContain('<skipped message="expected fail (https://tracker.example/API-91');
    expect(run.report('index.html')).toMatch(/data-outcome="expected-fail" data-count="1"/);
  }, HANG_GUARD_MS);

  it('an old title-based test id is still accepted, with a deprecation warning naming the stable id', async () => {
    const file = write('old-id.json', JSON.stringify({ [RES_CC_1_OLD]: 'https://tracker.example/API-91' }));
    const run = await runChatgate({ REFERENCE_DEFECT: 'cc-id-no-prefix', CLAUSES: 'RES-CC-1', EXPECTATIONS: file }, RES);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toContain(`chatgate: warning: EXPECTATIONS: ${file}: ${JSON.stringify(RES_CC_1_OLD)} is a title-based test id (deprecated`);
    expect(run.stderr).toContain(`use its stable id "${RES_CC_1}"`);
    expect(run.tests('RES-CC-1')[0]).toMatchObject({ id: RES_CC_1, verdict: 'fail', expectation: { entry: RES_CC_1_OLD, outcome: 'expected-fail' } });
  }, HANG_GUARD_MS);

  const yaml = `# known failures (chatgate self-test)\nRES-CC-1: https://tracker.example/API-91 # fixed in the reference\nLIM-2: https://tracker.example/API-88\n`;

  it('a known failure (by clause, YAML) that passes is an unexpected pass and fails the run', async () => {
    const file = write('pass.yaml', yaml);
    const run = await runChatgate({ CLAUSES: 'RES-CC-1', EXPECTATIONS: file }, RES);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.tests('RES-CC-1')[0]).toMatchObject({ verdict: 'pass', expectation: { outcome: 'unexpected-pass', entry: 'RES-CC-1' } });
    expect(run.results!.expectations).toMatchObject({ unexpectedPass: ['RES-CC-1'], notRun: ['LIM-2'], updated: false });
    expect(run.stdout).toMatch(/UNEXPECTED PASS\s+RES-CC-1/);
    expect(run.stdout).toContain(`Unexpected passes (1): RES-CC-1 - listed as known failures but passed; remove them from ${file}, or run with --update-expectations`);
    expect(run.stdout).toContain('verdict: FAIL (1 unexpected pass)');
    expect(run.report('summary.md')).toContain('**RES-CC-1** (MUST, unexpected pass)');
    expect(run.report('junit.xml')).toContain('<failure type="unexpected-pass"');
    expect(readFileSync(file, 'utf8')).toBe(yaml);
  }, HANG_GUARD_MS);

  it('--update-expectations removes the entries that pass, keeps the others and the comments, and the run passes', async () => {
    const file = write('update.yaml', yaml);
    const run = await runChatgate({ CLAUSES: 'RES-CC-1', EXPECTATIONS: file }, ['--update-expectations', ...RES]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.results!.expectations).toMatchObject({ unexpectedPass: ['RES-CC-1'], updated: true });
    expect(run.stdout).toContain(`expectations: removed RES-CC-1 from ${file} (they pass now)`);
    expect(readFileSync(file, 'utf8')).toBe('# known failures (chatgate self-test)\nLIM-2: https://tracker.example/API-88\n');
  }, HANG_GUARD_MS);

  const refused: Array<[string, string, string, RegExp]> = [
    ['an unknown clause id', 'unknown-clause.yaml', 'NOPE-1: https://tracker.example/1\n', /EXPECTATIONS: .*unknown-clause\.yaml: "NOPE-1" is no clause id/],
    ['an unknown test id', 'unknown-test.yaml', '"auth/AUTH-1 no such test": https://tracker.example/2\n', /EXPECTATIONS: .*unknown-test\.yaml: "auth\/AUTH-1 no such test" is no test of the suite/],
    ['an entry without a reason', 'no-reason.yaml', 'AUTH-1:\n', /EXPECTATIONS: .*"AUTH-1" has no reason/],
  ];
  for (const [what, name, text, message] of refused) {
    it(`${what}: one line, exit 2, no request`, async () => {
      const before = requests;
      const run = await runChatgate({ ...target, EXPECTATIONS: write(name, text) });
      expect(run.exitCode).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^chatgate: configuration error: /);
      expect(lines[0]).toMatch(message);
      expect(requests).toBe(before);
      expect(run.results).toBeUndefined();
    }, HANG_GUARD_MS);
  }

  it('--update-expectations without EXPECTATIONS is a configuration error', async () => {
    const run = await runChatgate({ ...target }, ['--update-expectations']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe('chatgate: configuration error: --update-expectations: needs EXPECTATIONS=<file> to update');
  }, HANG_GUARD_MS);
});
