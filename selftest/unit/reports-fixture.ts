// A synthetic results document with one test of every outcome the reports know
// (fail, unexpected pass, flaky, warn, expected fail, inconclusive, skip, info,
// pass), client x operation cells, a comparison with a previous run and a key
// inside a failure's response: the writers' unit tests and the Chromium test read it.
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { summarise, type Results, type TestRecord } from '../../lib/run/verdicts.ts';

export const FIXTURE_KEY = 'sk-fixture-0123456789abcdef';

function test(clause: keyof typeof CLAUSES, title: string, extra: Partial<TestRecord>): TestRecord {
  return {
    id: `fixture/${clause} ${title}`, clause, level: CLAUSES[clause].level, verdict: 'pass', title: `${clause} ${title}`,
    requirement: CLAUSES[clause].requirement, notes: [], file: 'suites/fixture.test.ts', durationMs: 12, ...extra,
  };
}

export function fixtureResults(opts: { strict?: boolean; matrix?: boolean } = {}): Results {
  const tests: TestRecord[] = [
    test('AUTH-1', 'no key on GET /models gets 401', {
      verdict: 'fail', message: 'expected HTTP 401, got HTTP 200', expected: 'HTTP 401', seen: 'HTTP 200 <html>',
      curl: `curl -sS -i 'http://127.0.0.1:1/v1/models' -H 'Authorization: Bearer ***'`,
      response: { status: 200, headers: { 'content-type': 'application/json', 'x-debug-key': FIXTURE_KEY, authorization: 'Bearer whatever' }, bodyExcerpt: `{"echo":"${FIXTURE_KEY}"}` },
    }),
    test('AUTH-2', 'an unknown key gets 401', { verdict: 'pass' }),
    test('RES-CC-1', 'id is "chatcmpl-" followed by a suffix', {
      verdict: 'flaky', message: 'expected a chat completion valid for RES-CC-1, got /id must match pattern', notes: ['flaky: fail on attempt 1, passed on attempt 2'],
      attempts: [{ verdict: 'fail', message: 'expected ...' }, { verdict: 'pass' }],
    }),
    test('EV-7', 'all chunks share one id', { verdict: 'warn', message: 'expected one id, got 3 ids' }),
    test('ERR-1', 'every response with status >= 400 carries an error body', {
      verdict: 'fail', message: 'expected an error body, got text/plain',
      expectation: { entry: 'ERR-1', reason: 'https://tracker.example/API-42 plain-text 401', outcome: 'expected-fail' },
    }),
    test('LIM-2', 'a 429 says when to retry', {
      verdict: 'pass', expectation: { entry: 'LIM-2', reason: 'https://tracker.example/API-51', outcome: 'unexpected-pass' },
    }),
    test('ERR-4', 'a 503 carries an error body', { verdict: 'inconclusive', message: 'no 503 seen in 90 responses' }),
    test('AUTH-6', 'a key without brains:invoke gets 403', { verdict: 'skip', message: 'LIMITED_API_KEY is not set' }),
    test('VER-2', 'whether GET /v2/models answers', { verdict: 'info', message: 'GET /v2/models answered HTTP 404' }),
  ];
  if (opts.matrix !== false) {
    tests.push(
      test('SVC-4b', 'openai@4 completion', { verdict: 'pass', matrix: { client: 'openai@4', operation: 'completion' } }),
      test('SVC-4b', 'openai@4 stream', { verdict: 'warn', message: 'no finish reason', matrix: { client: 'openai@4', operation: 'stream' } }),
      test('SVC-4b', 'langchain@1 completion', { verdict: 'pass', matrix: { client: 'langchain@1', operation: 'completion' } }),
    );
  }
  const strict = opts.strict ?? false;
  return {
    target: 'https://staging.example/v1', startedAt: '2026-11-21T10:00:00.000Z', durationMs: 12345, strict,
    summary: summarise(tests), exitCode: 1, tests,
    chatgate: { version: '0.1.0', node: 'v20.20.2' },
    mode: { strict, clauses: undefined, retryFailed: 1, expectations: 'known.yaml', updateExpectations: false },
    expectations: { file: 'known.yaml', expectedFail: 1, unexpectedPass: ['LIM-2'], unconfirmed: [], notRun: [], updated: false },
    comparison: {
      previousStartedAt: '2026-11-20T10:00:00.000Z',
      newlyFailing: [{ id: tests[0]!.id, clause: 'AUTH-1' }],
      newlyPassing: [{ id: tests[1]!.id, clause: 'AUTH-2' }],
    },
  };
}
