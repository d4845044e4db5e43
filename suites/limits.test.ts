// LIM: rate limits (spec: Limits). One bounded probe drives a key into its limit by
// rate: open-loop, the offered rate rising step by step (harness/rate-ramp.ts), the
// cheapest request that counts (max_tokens 1), at most RATE_LIMIT_PROBE_MAX requests and
// 30 s of sending; then it waits the advertised time and tries again. It sends both forms
// of the request in an aperiodic mix (stream: true about every other one), and goes on past the first 429
// until a streaming request meets the limit too (its own 429, or eight answered after the
// first 429, bounded by the same count and time): a limit must meet a stream
// with a 429 as well, not a 200 event stream carrying an error. Each LIM test (and EV-3,
// on the streams it got) judges one aspect of what it saw. No 429 within the bounds is "inconclusive", never
// a pass, and says what rate the probe reached.
import { isDroppedOrServerError } from '../lib/spec/rules/status.ts';
import { describe } from 'vitest';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { MAX_HONOURED_WAIT_MS, readRetryHints } from '../lib/spec/retry-hints.ts';
import { chat, chatBody, config, keys } from '../harness/target.ts';
import { CLIENTS, clauseFor, unavailable } from '../harness/clients/registry.ts';
import { runGovernor } from '../lib/run/governor.ts';
import { runContext } from '../lib/run/run-context.ts';
import { rateLimitCell, rateLimitTitle } from '../harness/clients/suite.ts';
import { describeRamp, ramp, type RampOptions, type RampOutcome } from '../harness/rate-ramp.ts';
import { restartAfter } from '../harness/ramp-restart.ts';
import { readStream } from '../lib/spec/rules/stream-reading.ts';
import * as ev from '../lib/spec/rules/stream-rules.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import { canaryInstruction, makeCanary } from '../lib/spec/rules/cross-talk.ts';
import { learnAlone, probeResult, rampCrossTalkVerdict, type CrossResult } from '../harness/concurrency-probes.ts';

const PROBE_MS = 30_000;
// The probe keeps every answer until it ends and a slow target has many in flight: a 429's
// body and a one-token reply fit well within this; a bigger body is cut (our cap, no evidence).
const PROBE_BODY_BYTES = 64 * 1024;
// 10, 20, 40, 80 ... per second, one step a second: a fixed window of L per second is
// passed in the step after the one offering L; the default 300 requests reach 160 per second in 5 s.
const PROBE_RAMP: Omit<RampOptions, 'max'> = { timeCapMs: PROBE_MS, startRate: 10, factor: 2, stepMs: 1000, ceilingRate: 1000 };
// Streaming requests answered past the first 429 before the probe stops (unless one met the limit first).
const STREAMS_PAST_LIMIT = 8;
// Which requests stream: the Thue-Morse sequence (popcount parity), aperiodic, so a limit that admits
// every other request past the first 429 cannot serve one form only.
const streamsAt = (n: number) => { let bits = 0; for (let k = n; k; k &= k - 1) bits++; return bits % 2 === 1; };
/** A 2xx event stream's payload that is an error object, not a chunk. */
function errorPayload(ex: Exchange) {
  if (ex.status === undefined || ex.status >= 300 || ex.mediaType !== 'text/event-stream') return undefined;
  return readStream(ex).payloads.find((x) => x.json !== null && typeof x.json === 'object' && 'error' in x.json);
}
// The cheapest request the limit counts; the ramp's own carry a canary each (SVC-9 judges their replies).
const cheapest = (stream = false, canary?: string) => chatBody({ max_tokens: 1, ...(canary ? { messages: [{ role: 'user', content: canaryInstruction(canary) }] } : {}), ...(stream ? { stream: true } : {}) });

interface Probe {
  sent: number;
  elapsedMs: number;
  /** The offered rate of the last step, per second, and the most requests out at once. */
  reachedRate: number;
  peakInFlight: number;
  /** Median time to an answer, ms. */
  medianMs?: number;
  first429?: Exchange;
  /** The offered rate the first 429's request went out at, and how many went out up to it. */
  first429Rate?: number;
  first429Sent?: number;
  bad: Exchange[];          // 5xx other than 503, or no response at all
  /** The streaming requests' 2xx event streams, and the first of them whose payload is an error object, not a chunk. */
  streams: Exchange[];
  streamError?: { ex: Exchange; payload: string; afterLimit: boolean };
  statuses: Record<string, number>;
  recovery?: { waitedMs: number; advertised: boolean; ex: Exchange };
  otherKey?: { label: string; ex: Exchange };
  /** Why the ramp began again, where it did. */
  restart?: string;
  /** Every answer with what its request asked, for SVC-9 (one with no reply to judge still owns its canary). */
  cross: CrossResult[];
}

let probe: Promise<Probe> | undefined;
// Mutation runs (mutation/setup.ts) judge a mutant by the tests that reach it: each LIM
// test then runs its own probe, so the limiter code it judges is counted as its own.
function runProbe(): Promise<Probe> {
  return runContext().mode.mutation ? probeOnce() : (probe ??= probeOnce());
}
function probeOnce(): Promise<Probe> {
  return (async () => {
    // Both forms in turn; past the first 429, until a streaming request meets the limit as well.
    let sent = 0;
    let limited = false;
    let streamsPastLimit = 0;
    // A second ramp begins with a stream (the sequence from 1), so the fresh budget serves that form first.
    let from = 0;
    const send = () => {
      const stream = streamsAt(from + sent++);
      const afterLimit = limited;
      const canary = makeCanary();
      const startMs = performance.now();
      return chat(cheapest(stream, canary), keys.rateLimit, { retryOn429: false, maxBodyBytes: PROBE_BODY_BYTES }).then((ex) => ({ ex, stream, afterLimit, canary, startMs, endMs: performance.now() }));
    };
    const stop = ({ ex, stream, afterLimit }: { ex: Exchange; stream: boolean; afterLimit: boolean }) => {
      if (ex.status === 429) limited = true;
      // A limit that admits some requests past the first 429 (a sliding window) may serve the next streams: a stream's
      // own 429, or its error payload, settles it; else STREAMS_PAST_LIMIT streams answered past the first 429.
      if (stream && (ex.status === 429 || errorPayload(ex))) streamsPastLimit = STREAMS_PAST_LIMIT;
      else if (stream && afterLimit) streamsPastLimit++;
      return limited && streamsPastLimit >= STREAMS_PAST_LIMIT;
    };
    const opts = { ...PROBE_RAMP, max: config.rateLimitProbeMax };
    // The ramps' requests are not paced: they keep out of the quiet sections (SVC-9's lone requests,
    // SVC-10), one occupancy for both, as the hold between them would stall a section that opened there.
    const vacate = await runGovernor().occupy();
    let r: RampOutcome<Awaited<ReturnType<typeof send>>>;
    // A 429 before any stream was served: the run's own traffic had spent a budget the keys share. From
    // here to the recovery answer no other request of the run goes out; the advised wait frees the budget,
    // and the ramp starts again once (what the first ramp saw still counts for LIM-1 and EV-3).
    let release: (() => void) | undefined;
    let spent: typeof r.answers = [];
    let restart: string | undefined;
    try {
      r = await ramp(send, stop, opts);
      const opening = restartAfter(r.answers.map((a) => ({ stream: a.value.stream, status: a.value.ex.status, ex: a.value.ex })), r.sent, config.rateLimitProbeMax)?.ex;
      if (opening) {
        release = await runGovernor().hold(PROBE_MS + MAX_HONOURED_WAIT_MS + 4 * config.timeoutMs);
        const waitMs = Math.min(readRetryHints(opening.headers).waitMs ?? 1000, MAX_HONOURED_WAIT_MS) + 100;
        await new Promise((res) => setTimeout(res, waitMs));
        spent = r.answers;
        restart = `a 429 came before any stream was served (the budget was spent when the probe began): ${r.sent} requests, then ${waitMs} ms of waiting and a new ramp that begins with a stream`;
        sent = 0; from = 1; limited = false; streamsPastLimit = 0;
        r = await ramp(send, stop, { ...opts, max: config.rateLimitProbeMax - r.sent });
      }
    } finally {
      vacate();
    }
    const p: Probe = { sent: spent.length + r.sent, elapsedMs: r.elapsedMs, reachedRate: r.reachedRate, peakInFlight: r.peakInFlight, bad: [], statuses: {}, streams: [], restart, cross: [] };
    const badOf: [Exchange[], Exchange[]] = [[], []];
    const served = [false, false];
    for (const answer of [...spent, ...r.answers]) {
      const { value: { ex, stream, afterLimit, canary, startMs, endMs }, rate, index } = answer;
      p.cross.push(probeResult(ex, { keyLabel: 'rate-limit', canary, startMs, endMs, label: `probe request ${index + 1}${spent.includes(answer) ? ' (first ramp)' : ''}` }));
      const key = ex.status === undefined ? `no response (${ex.error?.kind})` : `${ex.status}${stream ? ' (stream)' : ''}`;
      p.statuses[key] = (p.statuses[key] ?? 0) + 1;
      if (isDroppedOrServerError(ex.status)) badOf[stream ? 1 : 0].push(ex);
      if (ex.status !== undefined && ex.status < 300) served[stream ? 1 : 0] = true;
      if (ex.status === 429 && !p.first429 && !spent.includes(answer)) Object.assign(p, { first429: ex, first429Rate: rate, first429Sent: index + 1 });
      if (stream && ex.status !== undefined && ex.status < 300 && ex.mediaType === 'text/event-stream') {
        p.streams.push(ex);
        const payload = errorPayload(ex);
        if (payload && !p.streamError) p.streamError = { ex, payload: payload.data, afterLimit };
      }
    }
    // A form the target never served (every stream a 500 through a gateway that breaks streams) is
    // not limited by the limit: its 5xx are ERR-2's and the stream clauses', not LIM-1's evidence.
    p.bad = [...(served[0] ? badOf[0] : []), ...(served[1] ? badOf[1] : [])];
    const times = r.answers.filter((a) => a.value.ex.status !== undefined).map((a) => a.value.ex.durationMs).sort((a, b) => a - b);
    if (times.length) p.medianMs = times[Math.floor(times.length / 2)];
    // From the first 429 to the recovery answer no other request of the run goes out:
    // where all keys share one budget, the rest of the run would otherwise spend what
    // the wait frees, and LIM-3 would judge the run's own traffic.
    if (p.first429) release ??= await runGovernor().hold(MAX_HONOURED_WAIT_MS + 4 * config.timeoutMs);
    try {
      if (p.first429) await recover(p, p.first429);
    } finally {
      release?.();
    }
    return p;
  })();
}

async function recover(p: Probe, first429: Exchange): Promise<void> {
  // LIM-4: while this key is throttled, is another key still served?
  const other = config.rateLimitApiKey && config.rateLimitApiKey !== config.apiKey
    ? { label: 'API_KEY', auth: keys.main } : keys.limited ? { label: 'LIMITED_API_KEY', auth: keys.limited } : undefined;
  if (other) p.otherKey = { label: other.label, ex: await chat(cheapest(), other.auth, { retryOn429: false }) };
  // LIM-3: wait what the 429 advertised, then try. With nothing advertised the clause
  // allows at most 60 s: poll with growing gaps so a quick recovery is seen quickly.
  // Where the budget is shared (all keys of an account, other clients of it) the first
  // request after the reset may still meet a 429 advising a new wait: it is honoured up
  // to twice more, within 60 s in all; a key that stays throttled still fails.
  const advertisedMs = readRetryHints(first429.headers).waitMs;
  const waits = advertisedMs !== undefined ? [Math.min(advertisedMs, MAX_HONOURED_WAIT_MS) + 100] : [1000, 2000, 4000, 8000, 16_000, 29_000];
  let waited = 0;
  for (let i = 0; i < waits.length; i++) {
    const w = waits[i]!;
    await new Promise((r) => setTimeout(r, w));
    waited += w;
    const ex = await chat(cheapest(), keys.rateLimit, { retryOn429: false });
    p.recovery = { waitedMs: waited, advertised: advertisedMs !== undefined, ex };
    if (ex.status !== 429) break;
    const again = advertisedMs !== undefined ? readRetryHints(ex.headers).waitMs : undefined;
    if (again !== undefined && waits.length < 3 && waited + again + 100 <= MAX_HONOURED_WAIT_MS) waits.push(again + 100);
  }
}

async function throttled(t: ClauseContext): Promise<Probe & { first429: Exchange }> {
  if (config.rateLimitProbeMax === 0) t.skip('RATE_LIMIT_PROBE_MAX=0 disables the rate-limit probe');
  const p = await runProbe();
  if (!p.first429) t.inconclusive(`no 429 after ${p.sent} requests in ${(p.elapsedMs / 1000).toFixed(1)} s, ${describeRamp(p)}${p.medianMs !== undefined ? `, answers in a median ${Math.round(p.medianMs)} ms` : ''} (statuses ${JSON.stringify(p.statuses)}); a limit above that rate, or above RATE_LIMIT_PROBE_MAX requests, is out of reach`);
  return p as Probe & { first429: Exchange };
}

const PROBE_TIMEOUT = { requests: 4 };

describe('LIM: rate limits', () => {
  clause('limits/429', 'LIM-1', 'past the limit the target answers 429 with an error body, never another 5xx or a dropped connection', async (t) => {
    if (config.rateLimitProbeMax === 0) t.skip('RATE_LIMIT_PROBE_MAX=0 disables the rate-limit probe');
    const p = await runProbe();
    const bad = p.bad[0];
    if (bad) t.fail('429 (or 503) past the limit', bad.status === undefined ? `no response: ${bad.error?.message}` : `HTTP ${bad.status}`, bad);
    // A streaming request past the limit: a 429 too, not a 200 event stream that carries the error.
    const se = p.streamError;
    if (se) t.fail('429 with an error body past the limit, for a streaming request too', `HTTP ${se.ex.status} event stream carrying an error payload${se.afterLimit ? ' (sent after the first 429)' : ''}: data: ${se.payload.slice(0, 200)}`, se.ex);
    await throttled(t);
    t.errorBody(p.first429!, 429);
    t.note(`first 429 at request ${p.first429Sent} of ${p.sent}, sent at an offered ${p.first429Rate} requests per second (${describeRamp(p)}; ${(p.elapsedMs / 1000).toFixed(1)} s)${p.restart ? `; ${p.restart}` : ''}`);
  }, PROBE_TIMEOUT);

  clause('limits/stream-chunks', 'EV-3', 'every stream the rate-limit probe got carries chat.completion.chunk payloads, not an error object', async (t) => {
    if (config.rateLimitProbeMax === 0) t.skip('RATE_LIMIT_PROBE_MAX=0 disables the rate-limit probe');
    const p = await runProbe();
    if (p.streams.length === 0) t.inconclusive(`none of the probe's streaming requests got a 2xx event stream (statuses ${JSON.stringify(p.statuses)}${p.restart ? `; ${p.restart}` : ''})`);
    for (const ex of p.streams) {
      const v = ev.chunkShapes(readStream(ex), (json) => validate('chat-completion-chunk', json).errors.map((e) => e.message))[0];
      t.check(v === undefined, v?.expected ?? 'chat.completion.chunk payloads', v?.seen ?? '', ex);
    }
    t.note(`${p.streams.length} event streams of the probe judged`);
  }, { ...PROBE_TIMEOUT, stream: { none: 'the rate-limit probe sends both forms itself' } });

  // The ramp's requests run concurrently with each other and with the rest of the run: SVC-9's lone
  // requests (main key, after the probe) and the ramp's own that overlapped no other teach what the
  // target gives to tell replies apart (lib/spec/rules/cross-talk.ts); every reply is judged by canary and id,
  // a request answered 429 (or not at all) still owns its canary, and fewer than two replies is no pass (rampCrossTalkVerdict).
  clause('limits/cross-talk', 'SVC-9', 'every reply the rate-limit probe got is its own request\'s (canary, id)', async (t) => {
    if (config.rateLimitProbeMax === 0) t.skip('RATE_LIMIT_PROBE_MAX=0 disables the rate-limit probe');
    const p = await runProbe();
    rampCrossTalkVerdict(t, p.cross, await learnAlone(), p.sent, p.statuses);
  }, { ...PROBE_TIMEOUT, stream: { none: 'the rate-limit probe sends both forms itself' } });

  clause('limits/retry-hint', 'LIM-2', 'a 429 says when to retry (Retry-After, retry-after-ms or x-ratelimit-reset-*), in a form clients can read', async (t) => {
    const p = await throttled(t);
    // Every hint present must parse (lib/spec/retry-hints.ts): a client reading "Retry-After: soon" learns nothing.
    const read = readRetryHints(p.first429.headers);
    t.observe(read.hints.map((x) => `${x.header}: ${x.raw}`).join(', '));
    t.check(read.problems.length === 0,
      'Retry-After (delta-seconds or HTTP-date), retry-after-ms (milliseconds) or x-ratelimit-reset-* (durations such as 1s, 6m0s), each parseable',
      read.problems.join('; '), p.first429);
  }, PROBE_TIMEOUT);

  clause('limits/served-again', 'LIM-3', 'after the advertised wait the same key is served again', async (t) => {
    const p = await throttled(t);
    const r = p.recovery!;
    t.responded(r.ex);
    const after = r.advertised ? `the advertised ${r.waitedMs} ms (each 429's advised wait, at most 3)` : `${r.waitedMs} ms (nothing advertised; polled up to 60 s)`;
    t.check(r.ex.status! >= 200 && r.ex.status! < 300, `2xx after waiting ${after}`, `HTTP ${r.ex.status}`, r.ex);
  }, PROBE_TIMEOUT);

  clause('limits/other-key', 'LIM-4', 'whether throttling one key leaves another key unaffected', async (t) => {
    const p = await throttled(t);
    if (!p.otherKey) { t.observe('not observed: no second key (set LIMITED_API_KEY, or a RATE_LIMIT_API_KEY different from API_KEY)'); return; }
    t.observe(`while RATE_LIMIT_API_KEY was throttled, ${p.otherKey.label} got HTTP ${p.otherKey.ex.status ?? 'no response'}`);
  }, PROBE_TIMEOUT);

  // The client matrix's 429 cells (SVC-4 / SVC-4b, every client) live here because they
  // must not overlap the probe on the same key. Each client is imported only inside its
  // own test (harness/clients/), so one that fails to load cannot take the LIM tests down.
  for (const entry of CLIENTS) {
    clause(`clients/${entry.id}/error-429`, clauseFor(entry), rateLimitTitle(entry), async (t) => {
      if (config.rateLimitProbeMax === 0) t.skip('RATE_LIMIT_PROBE_MAX=0 disables rate-limit probing');
      const why = unavailable(entry);
      if (why) t.skip(why);
      const p = await runProbe(); // after the probe, so the two never share the key's budget
      // Where the probe met no 429 (the target's limit is out of reach, or it never answers), neither will the client.
      if (!p.first429) t.inconclusive(`the LIM probe met no 429 in ${p.sent} requests, so the client's 429 was not provoked (see LIM-1)`);
      // From the rate that met the limit, doubling: room for twice the probe's count, so a
      // window the first step happens to straddle is passed in the next.
      const max = Math.min(config.rateLimitProbeMax, Math.max(60, 2 * p.first429Sent!));
      await rateLimitCell(t, entry, { rate: p.first429Rate!, max }, PROBE_RAMP);
    }, { matrix: { client: entry.id, operation: 'error-429' }, requests: 6 });
  }
});
