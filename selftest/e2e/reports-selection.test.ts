// Selection through the runner: CLAUSES runs exactly the tests of the selected
// clauses (the others are "not selected", never "skip"), and vitest's own filters
// (-t, file names) work through npm test. The run history: a second run against
// the same target says what is newly failing since the previous one.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { runChatgate } from './reports-run.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const clausesOf = (run: Awaited<ReturnType<typeof runChatgate>>) => [...new Set(run.results!.tests.map((t) => t.clause))].sort();

describe('selection', () => {
  it('CLAUSES=AUTH-1,EV-1* runs exactly those clauses, and the reports show the others as not selected', async () => {
    const run = await runChatgate({ CLAUSES: 'AUTH-1,EV-1*' });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(clausesOf(run)).toEqual(['AUTH-1', 'EV-1', 'EV-10', 'EV-11', 'EV-12', 'EV-13']);
    expect(run.results!.tests.filter((t) => t.verdict === 'skip')).toEqual([]);
    // (no header, the key in x-api-key, api-key, ?api_key=, ?key=) x three endpoints, and x
    // the two chat routes again with stream: true.
    expect(run.tests('AUTH-1')).toHaveLength(25);
    const others = Object.keys(CLAUSES).filter((id) => !/^(AUTH-1|EV-1\d*)$/.test(id)).length; // EV-1* also selects EV-10..EV-13
    expect(run.stdout).toContain(`(${others} clauses not selected)`);
    expect(run.stdout).toContain('mode: normal (only MUST/COMPAT failures fail the run); CLAUSES=AUTH-1,EV-1*');
    expect(run.report('summary.md')).toMatch(/\| `AUTH-2` \| MUST \| · not selected \| 0 \|/);
    expect(run.report('index.html').match(/data-outcome="not-selected"/g)).toHaveLength(others);
  }, HANG_GUARD_MS);

  it("vitest's -t and file filters work through the runner, run-wide checks follow -t", async () => {
    const run = await runChatgate({}, ['-t', 'an empty key', 'auth']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.results!.tests.map((t) => t.id)).toEqual(['brain-route', 'brain-route-stream', 'chat', 'chat-stream', 'models'].map((e) => `auth/malformed/empty-bearer/${e}`));
    // A streaming twin's title is its probe's with " (stream: true)" at the end (forms as metadata).
    expect(run.results!.tests.map((t) => t.title)).toEqual(['POST /brains/{id}/chat', 'POST /brains/{id}/chat', 'POST /chat/completions', 'POST /chat/completions', 'GET /models']
      .map((e, i) => `AUTH-3 Bearer with an empty key on ${e} gets 401 with an error body${i % 2 === 1 && i < 4 ? ' (stream: true)' : ''}`));
    expect(run.results!.resultsVersion).toBe(2);
    expect(run.results!.mode).toMatchObject({ testNamePattern: 'an empty key', files: ['auth'] });
    const none = await runChatgate({}, ['no-such-suite-file']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('chatgate: no test matched file filters no-such-suite-file');
  }, HANG_GUARD_MS);

  it('an unknown option is a configuration error', async () => {
    const run = await runChatgate({}, ['--bail']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toMatch(/^chatgate: configuration error: arguments: Unknown option '--bail'.*npm test -- --help lists them$/);
  }, HANG_GUARD_MS);
});

describe('run history', () => {
  it('a second run against the same target says what is newly failing since the previous one', async () => {
    const reportsDir = mkdtempSync(join(tmpdir(), 'chatgate-history-e2e-'));
    // The same address twice: first conformant, then with a defect (a staging regression).
    const first = await startReferenceServer({ port: 0 });
    const port = Number(new URL(first.url).port);
    const env = (ref: typeof first) => ({
      TARGET_URL: ref.url, API_KEY: ref.keys.main, LIMITED_API_KEY: ref.keys.limited, BRAIN_ID: ref.brainId,
      CLAUSES: 'RES-CC-1,RES-CC-2', REPORTS_DIR: reportsDir,
    });
    const before = await runChatgate(env(first), ['resources']).finally(() => first.close());
    expect(before.exitCode, before.stderr).toBe(0);
    expect(before.stdout).toContain('since the previous run against this target: no previous run kept');

    const second = await startReferenceServer({ port, defect: 'cc-id-no-prefix' });
    const after = await runChatgate(env(second), ['resources']).finally(() => second.close());
    expect(after.exitCode).toBe(1);
    expect(after.results!.comparison).toMatchObject({
      previousStartedAt: before.results!.startedAt,
      newlyFailing: [{ clause: 'RES-CC-1' }], newlyPassing: [],
    });
    const line = `since the previous run against this target (${before.results!.startedAt}): newly failing RES-CC-1, newly passing none`;
    expect(after.stdout).toContain(line);
    expect(after.report('summary.md')).toContain(`S${line.slice(1)}`);
    expect(after.report('index.html')).toMatch(/newly failing <b class="bad"><a href="#clause-RES-CC-1">RES-CC-1<\/a><\/b>/);
    expect(readdirSync(join(reportsDir, 'runs'))).toHaveLength(2);
  }, HANG_GUARD_MS);
});
