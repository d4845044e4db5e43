// FUZZ: generated requests against /chat/completions and the brain route, streaming and
// not, judged clause by clause (fuzz/oracles.ts). One campaign per run: a fixed coverage
// phase (fuzz/coverage.ts, the same for every seed), then random requests (fast-check;
// FUZZ_RUNS, FUZZ_SEED, FUZZ_TIME_MS, FUZZ_CONCURRENCY, FUZZ_MAX_BODY_BYTES); every clause
// test below reads the same campaign and reports every failure of its own clause, each
// bug once, minimised where the budget allows, with its replay command and curl line.
//
// Generated exchanges go to the exchange log like every other (marked 'fuzz'): the
// per-response rules (lib/spec/rules/response-rules.ts) judge them run-wide, except ERR-1 and
// ERR-2, which the tests here report on them, shrunk and de-duplicated, with the same
// rules, instead of listing hundreds of raw requests there.
import { describe, expect, test } from 'vitest';
import { THROTTLE_ALLOWANCE_MS } from '../lib/run/back-off.ts';
import { clause } from '../harness/clause-test.ts';
import { brainId, config, fuzzTraffic, http, keys, models, shared } from '../harness/target.ts';
import { runCampaign } from '../fuzz/campaign.ts';
import { FUZZ_CLAUSES, type FuzzClause } from '../fuzz/oracles.ts';
import { describeFinding, summaryLines } from '../fuzz/report.ts';
import { replayPrefix } from '../fuzz/replay.ts';
import { clauseOutcome } from '../fuzz/verdict.ts';
import { runContext } from '../lib/run/run-context.ts';

const fz = config.fuzz;

const WHAT: Record<FuzzClause, string> = {
  'ERR-2': 'no generated request, valid or not, gets a 5xx other than 503',
  'ERR-1': 'every generated request answered with status >= 400 gets an error body',
  'CHAT-2': 'bodies without model or with a non-string model get 400 with an error body',
  'CHAT-3': 'bodies without messages or with non-array messages get 400 with an error body',
  'CHAT-4': 'a message without role or with number/object content gets 400 with an error body',
  'CHAT-5': 'a non-boolean stream gets 400 with an error body',
  'CHAT-6': 'bodies that are not JSON get 400 with an error body',
  'CHAT-8': 'parameters and unknown fields are honoured (200 with a chat completion), ignored or refused with 400',
  'EV-1': 'every accepted generated stream is text/event-stream',
  'EV-2': 'every generated stream is well-formed SSE with data: payloads',
  'EV-3': 'every payload of every generated stream is a chat.completion.chunk',
  'EV-4': 'every generated stream without tools or stop sequences has non-empty content (under a token cap that ends it, a string at least)',
  'EV-5': 'every generated stream finishes each choice once, with no content after it',
  'EV-6': 'every generated stream ends with [DONE] and nothing after it',
  'EV-10': 'every generated stream finishes within the time limit',
};

const campaign = shared(() => {
  if (fz.seed === undefined) throw new Error('FUZZ_SEED is unset: the runner (npm test) draws one');
  return runCampaign({
    send: (spec) => fuzzTraffic.run(true, async () => {
      const ex = await http.send(spec);
      waited += ex.throttleWaitMs ?? 0;
      return ex;
    }),
    auth: keys.main, models, brainId,
    fuzz: { ...fz, seed: fz.seed }, replayPrefix: replayPrefix(process.env),
    // The time cap leaves out waiting for the run's governor (per worker of the phase),
    // up to the cap once more: a throttled target gets the same generated requests, later.
    clock: () => performance.now() - Math.min(fz.timeMs, waited / Math.max(1, fz.concurrency)),
  });
});
let waited = 0;

// Long enough for the whole campaign: twice its time cap (waits for the governor left
// out of the cap), plus one request's limit and 429 waits.
const requests = Math.ceil((2 * fz.timeMs) / (config.timeoutMs + THROTTLE_ALLOWANCE_MS)) + 2;

describe('FUZZ: generated requests', () => {
  // A mutation run (npm run mutation) runs the campaign once, in the test below, not once per clause test.
  for (const id of runContext().mode.mutation ? [] : FUZZ_CLAUSES) {
    clause(`fuzz/${id.toLowerCase()}`, id, `fuzz: ${WHAT[id]}`, async (t) => {
      if (fz.runs === 0) t.skip('FUZZ_RUNS=0: the fuzz phase is off');
      const { summary, findings } = await campaign();
      for (const line of summaryLines(summary)) t.observe(line);
      t.note(`fuzz seed ${summary.seed} (FUZZ_SEED=${summary.seed} sends the same requests again)`);
      const { verdict, judged, findings: mine } = clauseOutcome({ summary, findings }, id);
      // A campaign without a failure passes only where this clause's oracle judged a generated response.
      if (verdict === 'inconclusive') t.inconclusive(`no generated response for ${id} to judge among ${summary.sent} (seed ${summary.seed})${summary.baseline.length ? `; ${summary.baseline.join('; ')}` : ''}`);
      t.check(verdict === 'pass', `${WHAT[id]} (${judged} generated responses judged)`,
        () => `${mine.length} distinct failure${mine.length === 1 ? '' : 's'}:\n${mine.map((f, i) => describeFinding(f, i + 1)).join('\n')}`,
        mine[0]?.exchange);
      t.note(`${judged} generated responses judged, no failure`);
    }, { requests });
  }
  // Mutation runs only (mutation/vitest.config.ts): there every test makes its own exchanges
  // (harness/target.ts shared()), so the clause tests above would each run a campaign of
  // their own. One test runs it once and fails on any clause's finding: a mutant the fuzz
  // phase reaches costs one campaign, and fails on the same oracles.
  if (runContext().mode.mutation) {
    test('every clause of the fuzz phase (mutation run)', { timeout: (config.timeoutMs + THROTTLE_ALLOWANCE_MS) * requests + 5_000 }, async () => {
      if (fz.runs === 0) return;
      const { summary, findings } = await campaign();
      expect(findings.map((f, i) => `${f.clause}: ${describeFinding(f, i + 1)}`), `fuzz seed ${summary.seed}`).toEqual([]);
    });
  }
});
