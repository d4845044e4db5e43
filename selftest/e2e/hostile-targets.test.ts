// Targets that misbehave at the transport level: the suite stays in control. Each run
// ends in bounded time, writes results.json, exits 1 with messages that say what
// happened, never follows a redirect with the key, and keeps memory bounded.
import { describe, expect, it } from 'vitest';
import { startHostileServer, type HostileMode } from '../fixtures/hostile-server.ts';
import { runSuite } from '../support/run-suite.ts';
import { referenceTarget } from '../support/targets.ts';

// Memory is bounded by the body cap (8 MiB) times the requests in flight, never by a
// body's size: a run against a 300 MiB-per-response target may use at most 1 GiB more
// than the same suite against the conformant reference (buffering whole bodies would
// need tens of GiB).
const baselineRss = (async () => {
  const target = await referenceTarget();
  try { return (await runSuite({ ...target.env, TIMEOUT_MS: '5000' })).results!.chatgate.maxRssMiB!; } finally { await target.close(); }
})();

const TIMEOUT_MS = 2000;
const KEY = 'sk-hostile-main-7c1e9a3f5b2d8e4a';
const cases: Array<[HostileMode, RegExp]> = [
  ['hang', /no response headers within 2000 ms/],
  ['reset', /connection reset/],
  ['huge-body', /body exceeded 8 MiB/],
  ['redirect', /HTTP 307 redirecting to http:\/\/127\.0\.0\.1:\d+\/v1\/\S+ \(not followed\)/],
  ['stall-stream', /body not complete within 2000 ms/],
  ['never-close', /not closed within \d+ ms after \[DONE\]/],
];

describe.concurrent('hostile targets', () => {
  for (const [mode, message] of cases) {
    it(`${mode}: fails in bounded time with a message saying what happened`, async () => {
      const srv = await startHostileServer(mode);
      try {
        const run = await runSuite({
          TARGET_URL: srv.url, API_KEY: KEY, BRAIN_ID: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
          TIMEOUT_MS: String(TIMEOUT_MS), RATE_LIMIT_PROBE_MAX: '40',
        }, { killAfterMs: 150_000 });
        expect(run.exitCode, run.stderr.slice(0, 500)).toBe(1);
        expect(run.results, 'results.json written').toBeDefined();
        const messages = run.results!.tests.map((t) => t.message ?? '').join('\n');
        expect(messages).toMatch(message);
        // Bounded: no test may take longer than its requests' deadlines plus a margin.
        const slowest = Math.max(...run.results!.tests.map((t) => t.durationMs ?? 0));
        expect(slowest).toBeLessThan(4 * (TIMEOUT_MS + 1000) + 10_000);
        expect(run.results!.chatgate.maxRssMiB ?? Infinity).toBeLessThan((await baselineRss) + 1024);
        if (srv.otherOrigin) expect(srv.otherOrigin.requests, 'nothing reached the other origin').toEqual([]);
        expect(`${run.stdout}${run.stderr}${JSON.stringify(run.results)}`).not.toContain(KEY);
      } finally { await srv.close(); }
    }, 180_000);
  }
});
