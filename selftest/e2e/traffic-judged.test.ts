// Every kind of traffic reaches the per-response rules (lib/spec/rules/response-rules.ts) in a
// real run, not only our fixed probes' (client libraries: selftest/e2e/client-traffic.test.ts):
// - the fuzz phase's generated requests: with only the fuzz file selected, a stream
//   defect no fuzz oracle owns (cumulative-deltas, EV-12) fails the run-wide EV-12
//   record on generated streams, and nothing else fails;
// - the preflight's GET /models: a server that echoes the key in a header on every
//   response is caught first on the preflight's answer (AUTH-9).
import { describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { referenceTarget } from '../support/targets.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

describe('traffic the fixed probes do not send is judged by the per-response rules', () => {
  it('the fuzz phase\'s generated streams: EV-12 run-wide, on them alone', async () => {
    const run = await runSuite({ REFERENCE_DEFECT: 'cumulative-deltas', FUZZ_RUNS: '40', FUZZ_SEED: '1', TIMEOUT_MS: '10000' }, { args: ['fuzz'] });
    const tests = run.results?.tests ?? [];
    const ev12 = tests.find((t) => t.id === 'run-wide/ev-12');
    expect(ev12?.verdict, run.stderr.slice(0, 500)).toBe('fail');
    expect(ev12!.seen).toMatch(/^\d+ of \d+ streams; the first: POST \/v1\/(chat\/completions|brains\/[^ ]+\/chat) -> 200 \(fuzz phase\)/);
    expect(ev12!.seen).toMatch(/the first three: "(\w+)", "\1 (\w+)", "\1 \2 \w+"/);
    expect(tests.filter((t) => t.verdict === 'fail' || t.verdict === 'warn' || t.verdict === 'error').map((t) => t.id)).toEqual([ev12!.id]);
    expect(run.exitCode).toBe(1);
  }, HANG_GUARD_MS);

  it('the preflight\'s answer: AUTH-9 meets the echoed key there first', async () => {
    const target = await referenceTarget({ defect: 'key-echoed-in-header' });
    try {
      const run = await runSuite({ ...target.env, FUZZ_RUNS: '0', TIMEOUT_MS: '10000' }, { args: ['versioning'] });
      const auth9 = run.results?.tests.find((t) => t.id === 'run-wide/auth-9');
      expect(auth9?.verdict, run.stderr.slice(0, 500)).toBe('fail');
      expect(auth9!.seen).toMatch(/; the first: GET \/v1\/models -> 200 \(preflight\) \[preflight\]: API_KEY/);
      expect(auth9!.message).toMatch(/-> 200 \(preflight\)/);
      expect(JSON.stringify(run.results)).not.toContain(target.keys[0]!);
    } finally { await target.close(); }
  }, HANG_GUARD_MS);
});
