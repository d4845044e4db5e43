// Targets that misbehave at the transport level: the suite stays in control. Each run
// ends, writes results.json, exits 1 with messages that say what happened, never
// follows a redirect with the key, and keeps memory bounded. "In control" is judged by
// the suite's own deadlines, not by a wall-clock total (which a loaded machine breaks):
// every request the target spoiled ended with the transport error of this mode, which
// the suite's deadline or body cap produced ("... within 2000 ms", TIMEOUT_MS), and no
// test outlived its own timeout or crashed (that would be an `error` verdict).
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
const HEADERS_DEADLINE = /^no response headers within 2000 ms$/;
const BODY_DEADLINE = /^body not complete within 2000 ms \(/;
// The client's cap (8 MiB), or a probe's own smaller one (the rate-limit probe's 64 KiB, the burst's 256 KiB).
const BODY_CAP = /^body exceeded [\d.]+ [KM]iB \(cut off after /;
const AFTER_DONE = /^response not closed within \d+ ms after \[DONE\]$/;
// Per mode: a message the run must show, and the transport errors of the mode. The
// suite's two deadlines may end any request of any mode (on a loaded machine a hostile
// server is slow to answer at all): they are the suite's own, so always right.
const DEADLINES = [HEADERS_DEADLINE, BODY_DEADLINE];
const cases: Array<[HostileMode, RegExp, RegExp[]]> = [
  ['hang', /no response headers within 2000 ms/, []],
  ['reset', /connection reset/, [/^connection reset (before any response|during the body)$/]],
  ['huge-body', /body exceeded 8 MiB/, [BODY_CAP]],
  ['redirect', /HTTP 307 redirecting to http:\/\/127\.0\.0\.1:\d+\/v1\/\S+ \(not followed\)/, []],
  ['stall-stream', /body not complete within 2000 ms/, []],
  ['never-close', /not closed within \d+ ms after \[DONE\]/, [AFTER_DONE]],
];

describe.concurrent('hostile targets', () => {
  for (const [mode, message, transportErrors] of cases) {
    it(`${mode}: every spoiled request ends by the suite's deadline with the right transport error, and the run ends`, async () => {
      const srv = await startHostileServer(mode);
      try {
        const run = await runSuite({
          TARGET_URL: srv.url, API_KEY: KEY, BRAIN_ID: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
          TIMEOUT_MS: String(TIMEOUT_MS), RATE_LIMIT_PROBE_MAX: '40',
        // A hang guard only (a run that never ends must not hang CI), far above any run's length.
        }, { killAfterMs: 540_000 });
        // The run ended by itself (a killed run has no exit code) and wrote its results.
        expect(run.exitCode, run.stderr.slice(0, 500)).toBe(1);
        expect(run.results, 'results.json written').toBeDefined();
        const tests = run.results!.tests;
        const messages = tests.map((t) => t.message ?? '').join('\n');
        expect(messages).toMatch(message);
        // Each spoiled request ended with this mode's transport error, produced by the suite's own deadline or cap.
        // A redirect spoils a request without a transport error: its answer is the 3xx, not followed.
        const redirected = (t: (typeof tests)[number]) => mode === 'redirect' && (t.response?.status ?? 0) >= 300 && (t.response?.status ?? 0) < 400;
        const spoiled = tests.filter((t) => t.response?.transportError || redirected(t));
        expect(spoiled.length, 'requests the target spoiled').toBeGreaterThan(0);
        const wrong = spoiled.filter((t) => t.response?.transportError && ![...transportErrors, ...DEADLINES].some((re) => re.test(t.response!.transportError!)));
        expect(wrong.map((t) => `${t.title}: ${t.response!.transportError}`)).toEqual([]);
        // No test outlived its own timeout or crashed: each has a verdict of its own.
        expect(tests.filter((t) => t.verdict === 'error').map((t) => `${t.title}: ${t.message}`)).toEqual([]);
        expect(run.results!.chatgate.maxRssMiB ?? Infinity).toBeLessThan((await baselineRss) + 1024);
        if (srv.otherOrigin) expect(srv.otherOrigin.requests, 'nothing reached the other origin').toEqual([]);
        expect(`${run.stdout}${run.stderr}${JSON.stringify(run.results)}`).not.toContain(KEY);
      } finally { await srv.close(); }
    }, 600_000);
  }
});
