// lib/run/target-down.ts: a target that stops answering mid-run is found from the run's
// exchanges; later tests become errors, the requests in flight stay the finding.
import { describe, expect, it } from 'vitest';
import { findTargetDown, markUnreachable, targetDownLine } from '../../lib/run/target-down.ts';
import type { ExchangeSummary } from '../../lib/spec/rules/exchange-summary.ts';
import type { TestRecord } from '../../lib/run/verdicts.ts';

const URL = 'http://127.0.0.1:9/v1/chat/completions';
let at = 1_000_000;
const ex = (test: string, extra: Partial<ExchangeSummary>): ExchangeSummary => ({ seq: 0, at: at += 10, test, method: 'POST', url: URL, keyEchoes: [], curl: `curl ${test}`, ...extra });
const ok = (test: string) => ex(test, { status: 200 });
const refused = (test: string) => ex(test, { transportError: 'connection refused' });
const reset = (test: string, sentAt: number, extra: Partial<ExchangeSummary> = {}) => ex(test, { transportError: 'connection reset before any response', sentAt, ...extra });
const rec = (title: string, verdict: TestRecord['verdict'], seen = 'no response: connection refused'): TestRecord =>
  ({ id: title, clause: 'AUTH-1', level: 'MUST', verdict, title, requirement: '', message: seen, expected: 'a response', seen, notes: [] });

describe('a target that goes away mid-run', () => {
  it('finds it after the last answer, names the in-flight requests, and turns later tests into errors', () => {
    at = 1_000_000;
    const exchanges = [ok('A'), ok('B'), reset('C', at - 50, { requestedStream: true }), refused('D'), refused('E'), refused('D'), refused('F')];
    const d = findTargetDown(exchanges)!;
    expect(d).toMatchObject({ failedRequests: 5, refused: 4, lastAnswer: { test: 'B', status: 200, curl: 'curl B' } });
    expect(d.inFlight).toEqual([expect.objectContaining({ test: 'C', stream: true })]);
    expect(targetDownLine(d, new Date(1_000_000).toISOString())).toMatch(/^target unreachable since \S+ \(0\.\d s into the run\): after POST \/v1\/chat\/completions of "B" \(HTTP 200\), all 5 later requests got no answer \(4 refused\); 1 in flight at that moment; the last answered request: curl B$/);
    const records = [rec('A', 'pass'), rec('B', 'fail', 'a judged breach'), rec('C', 'fail', 'no response: connection reset'), rec('D', 'fail'), rec('E', 'inconclusive'), rec('F', 'pass')];
    const extra = markUnreachable(records, d, exchanges);
    expect(records.map((r) => r.verdict)).toEqual(['pass', 'fail', 'fail', 'error', 'error', 'pass']);
    expect(records[3]).toMatchObject({ message: expect.stringMatching(/^target unreachable since .*: no verdict on AUTH-1/), notes: [expect.stringMatching(/before the target went away: fail/)] });
    expect(records[3]!.expected).toBeUndefined();
    expect(records[2]!.notes[0]).toMatch(/in flight when the target went away/);
    expect(d.unreachableTests).toBe(2);
    expect(extra).toEqual([]); // C's own test failed on its clause: that is the finding
  });

  it('with no in-flight test failing, one record on EV-10 (a stream) or SVC-1 carries the finding', () => {
    at = 2_000_000;
    const exchanges = [ok('A'), reset('C', at - 50, { requestedStream: true }), refused('D'), refused('E'), refused('F')];
    const d = findTargetDown(exchanges)!;
    const extra = markUnreachable([rec('C', 'error', 'crashed')], d, exchanges);
    expect(extra).toEqual([expect.objectContaining({ id: 'run-wide/target-down', clause: 'EV-10', verdict: 'fail', seen: expect.stringMatching(/1 request\(s\) in flight .*connection reset/) })]);
  });

  it('a request cut on a kept-alive connection and refused when sent again was in flight', () => {
    at = 4_000_000;
    const exchanges = [ok('A'), refused('C'), refused('D'), refused('E'), refused('F')];
    exchanges[1]!.reuseRetry = { error: 'connection reset before any response', firstSeq: 1 };
    exchanges[1]!.sentAt = exchanges[1]!.at! - 5;
    expect(findTargetDown(exchanges)!.inFlight).toEqual([expect.objectContaining({ test: 'C', error: 'connection refused' })]);
  });

  it('is not an outage: answers to the end, too few refusals, one sender, resets without refusals', () => {
    at = 3_000_000;
    expect(findTargetDown([refused('A'), ok('B')])).toBeUndefined();
    expect(findTargetDown([ok('A'), refused('B'), refused('C')])).toBeUndefined();
    expect(findTargetDown([ok('A'), refused('B'), refused('B'), refused('B'), refused('B')])).toBeUndefined();
    expect(findTargetDown([ok('A'), reset('B', at), reset('C', at), reset('D', at), reset('E', at)])).toBeUndefined();
    expect(findTargetDown([ok('A'), refused('B'), refused('C'), ex('D', { transportError: 'no response headers within 2000 ms' }), refused('E')])).toBeUndefined();
    expect(findTargetDown([refused('A'), refused('B'), refused('C')])).toBeUndefined();
  });
});
