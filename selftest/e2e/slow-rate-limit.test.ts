// The rate-limit probe reaches a limit by rate, not by luck. Against a legal target that
// answers every chat request in 1 s (real models take 1-10 s) with a limit of 40 per
// second on the rate-limit key, a probe that keeps a fixed number in flight cannot pass
// that many per second; the open-loop rising probe (harness/rate-ramp.ts) does, so
// LIM-1..3 and every error-429 client cell get verdicts, not `inconclusive`. A control
// with the limit out of reach stays `inconclusive` and says what rate the probe reached.
// Cost: two runs of the limits suite file only, one at a time, about 40 s in all.
import { describe, expect, it } from 'vitest';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { referenceTarget } from '../support/targets.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';
import { CLIENTS, operationsOf, unavailable } from '../../harness/clients/registry.ts';

const SLOW = { jsonMs: 1000, ttftMs: 1000 };

async function run(limit: number, env: Record<string, string> = {}): Promise<SuiteRun> {
  const target = await referenceTarget({ latency: SLOW, rateLimit: { rateLimit: { limit, windowMs: 1000 } } });
  try {
    return await runSuite({ ...target.env, CLAUSES: 'LIM-*,SVC-4*', TIMEOUT_MS: '10000', FUZZ_RUNS: '0', ...env }, { args: ['limits'] });
  } finally {
    await target.close();
  }
}

const runnable429 = CLIENTS.filter((c) => !unavailable(c) && operationsOf(c).includes('error-429')).map((c) => c.id).sort();

describe('the rate-limit probe against a target that answers in 1 s', () => {
  it('reaches a limit of 40 per second: LIM-1..3 and the error-429 cells pass, none inconclusive', async () => {
    const r = await run(40);
    expect(r.results, r.stderr.slice(0, 500)).toBeDefined();
    const verdict = (clause: string) => r.tests(clause).map((t) => `${t.verdict} ${t.message ?? ''}`);
    for (const c of ['LIM-1', 'LIM-2', 'LIM-3']) expect(verdict(c), c).toEqual(['pass ']);
    expect(verdict('LIM-4')[0]).toMatch(/^info/);
    // The probe passed 40 per second on a 1 s target, so it held more than 40 in flight.
    const note = r.tests('LIM-1')[0]!.notes.join('\n');
    const m = /first 429 at request \d+ of \d+, sent at an offered (\d+) requests per second \(the offered rate rising to \d+ requests per second, at most (\d+) in flight/.exec(note);
    expect(m, note).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(40);
    expect(Number(m![2])).toBeGreaterThan(40);
    const cells = (r.results!.tests).filter((t) => t.matrix?.operation === 'error-429' && t.verdict !== 'skip');
    expect(cells.map((t) => t.matrix!.client).sort()).toEqual(runnable429);
    for (const t of cells) expect(`${t.title}: ${t.verdict} ${t.message ?? ''}`).toMatch(/: pass $/);
    expect(r.exitCode, r.stdout.slice(-1500)).toBe(0);
  }, HANG_GUARD_MS);

  it('with the limit out of reach, LIM-1 is inconclusive and names the rate it reached', async () => {
    const r = await run(2000, { RATE_LIMIT_PROBE_MAX: '100', CLAUSES: 'LIM-1' });
    const lim1 = r.tests('LIM-1')[0]!;
    // 10, 20 and 40 per second for a second each, then 30 more at 80 per second.
    expect(`${lim1.verdict} ${lim1.message}`).toMatch(/^inconclusive no 429 after 100 requests in [\d.]+ s, the offered rate rising to 80 requests per second, at most \d+ in flight, answers in a median \d+ ms/);
  }, HANG_GUARD_MS);
});
