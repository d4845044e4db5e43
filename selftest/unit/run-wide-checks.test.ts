// The run-wide checks (runner/run-wide-checks.ts): only exchanges under the base URL
// are judged, no evidence is `inconclusive`, ERR-3 judges every error object (also the
// ones whose body broke ERR-1), and client-library exchanges count like our own.
import { describe, expect, it } from 'vitest';
import { runWideChecks, underBase } from '../../runner/run-wide-checks.ts';
import type { ExchangeSummary } from '../../harness/exchange-log.ts';

const BASE = 'http://127.0.0.1:8080/v1';
const ok = (path = '/models', extra: Partial<ExchangeSummary> = {}): ExchangeSummary => ({
  seq: 1, method: 'GET', url: `http://127.0.0.1:8080${path}`, status: 200, keyEchoes: [], curl: 'curl ...', ...extra,
});
const failing = (status: number, extra: Partial<ExchangeSummary> = {}, path = '/v1/chat/completions'): ExchangeSummary => ok(path, {
  status, errorBodyProblems: [], hasErrorObject: true, errorMessage: 'm', errorType: 't', errorCode: 'c', errorHasParam: false, ...extra,
});
const verdicts = (all: ExchangeSummary[]) => Object.fromEntries(runWideChecks(all, BASE).map((r) => [r.clause, r.verdict]));

describe('run-wide checks', () => {
  it('judge only exchanges under the base path of TARGET_URL (VER-2 probes /v2/models)', () => {
    expect(underBase('http://127.0.0.1:8080/v1/models', BASE)).toBe(true);
    expect(underBase('http://127.0.0.1:8080/v1', BASE)).toBe(true);
    expect(underBase('http://127.0.0.1:8080/v2/models', BASE)).toBe(false);
    expect(underBase('http://127.0.0.1:8080/v10/models', BASE)).toBe(false);
    expect(underBase('http://127.0.0.1:9090/v1/models', BASE)).toBe(false);
    const v2 = failing(404, { errorBodyProblems: ['the body is not JSON: "Not Found"'], hasErrorObject: false }, '/v2/models');
    const all = [ok('/v1/models'), failing(400), v2];
    expect(verdicts(all)['ERR-1']).toBe('pass');
    expect(runWideChecks(all, BASE).find((r) => r.clause === 'ERR-1')!.message).toMatch(/1 outside the base URL not judged/);
    // Without the filter it would have failed: the check itself is live.
    expect(Object.fromEntries(runWideChecks(all).map((r) => [r.clause, r.verdict]))['ERR-1']).toBe('fail');
  });

  it('give no pass on no evidence', () => {
    expect(verdicts([])).toEqual({ 'ERR-1': 'inconclusive', 'ERR-2': 'inconclusive', 'ERR-3': 'inconclusive', 'ERR-4': 'inconclusive', 'ERR-5': 'inconclusive', 'AUTH-9': 'inconclusive' });
    // Responses, but no failing one: ERR-1/ERR-3/ERR-4/ERR-5 have nothing to judge.
    expect(verdicts([ok('/v1/models')])).toEqual({ 'ERR-1': 'inconclusive', 'ERR-2': 'pass', 'ERR-3': 'inconclusive', 'ERR-4': 'inconclusive', 'ERR-5': 'inconclusive', 'AUTH-9': 'pass' });
    // Only transport failures: no response at all.
    expect(verdicts([ok('/v1/models', { status: undefined, transportError: 'connection reset' })])['ERR-2']).toBe('inconclusive');
  });

  it('ERR-3 judges every error object, also one whose body broke ERR-1 (a null or missing code)', () => {
    const nullCode = failing(400, { errorCode: null, errorBodyProblems: ['/error/code must be string (seen null)'] });
    const noCode = failing(404, { errorCode: undefined, errorBodyProblems: ['/error/code is missing'] });
    const r = runWideChecks([nullCode, noCode, failing(401)], BASE);
    const err3 = r.find((x) => x.clause === 'ERR-3')!;
    expect(err3.verdict).toBe('warn'); // ERR-3 is a SHOULD
    expect(err3.message).toMatch(/2 of 3 error objects/);
    expect(err3.message).toMatch(/code null/);
    expect(err3.message).toMatch(/code missing/);
    expect(r.find((x) => x.clause === 'ERR-1')!.verdict).toBe('fail');
    // A body without an error object at all is ERR-1's alone.
    expect(verdicts([failing(500, { hasErrorObject: false, errorBodyProblems: ['the body is empty'] })])['ERR-3']).toBe('inconclusive');
  });

  it('count client-library exchanges like our own (ERR-2, AUTH-9)', () => {
    const r = runWideChecks([ok('/v1/models'), failing(500, { source: 'client' }), ok('/v1/chat/completions', { source: 'client', keyEchoes: ['API_KEY'] })], BASE);
    const err2 = r.find((x) => x.clause === 'ERR-2')!;
    expect(err2.verdict).toBe('fail');
    expect(err2.message).toMatch(/-> 500 \(client library\)/);
    expect(r.find((x) => x.clause === 'AUTH-9')!.verdict).toBe('fail');
  });

  it('SVC-8 from the run\'s own traffic: a request re-sent after a connection left open failed at once warns; one idle past the advertised Keep-Alive does not', () => {
    const resent = ok('/v1/chat/completions', { reuseRetry: { error: 'connection reset before any response', firstSeq: 1, idleMs: 3 } });
    const r = runWideChecks([ok('/v1/models'), resent], BASE).find((x) => x.clause === 'SVC-8')!;
    expect(r.verdict).toBe('warn');
    expect(r.message).toMatch(/connection reset before any response on a connection left open 3 ms after its previous response/);
    const idle = ok('/v1/chat/completions', { reuseRetry: { error: 'connection reset before any response', firstSeq: 1, idleMs: 1500, keepAliveTimeoutMs: 1000 } });
    expect(verdicts([ok('/v1/models'), idle])['SVC-8']).toBeUndefined();
  });
});
