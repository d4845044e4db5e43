// The requests SVC-9, SVC-10, EV-13 and SVC-1's burst send, and how their answers are read
// and judged: each SVC-9 request carries its own canary and its own prompt length, so its
// reply can be told from every other's (lib/spec/rules/cross-talk.ts judges it).
import type { AuthSpec, Exchange } from '../lib/http/http-client.ts';
import type { SseEvent } from '../lib/http/sse-reader.ts';
import { canariesIn, canaryInstruction, describeFinding, judgeCrossTalk, judgeTraffic, learnEvidence, LONE_ECHOES_WANTED, LONE_SAMPLES, LONE_SAMPLES_MAX, makeCanary, type CrossTalkEvidence, type CrossTalkJudgement, type CrossTalkReply, type CrossTalkSample } from '../lib/spec/rules/cross-talk.ts';
import { judgeSuccessBody } from '../lib/spec/rules/success-body.ts';
import type { ClauseContext } from './clause-test.ts';
import { DELIVERY_MIN_CHUNKS, judgeDelivery, type DeliveryChunk } from '../lib/spec/rules/stream-delivery.ts';
import { chat, chatBody, config, keys } from './target.ts';
import { runContext } from '../lib/run/run-context.ts';
import { runGovernor } from '../lib/run/governor.ts';

/** Filler words of the prompts: plain words every tokenizer counts alike. */
const FILLER = ['river', 'stone', 'cloud', 'signal', 'harbor', 'lantern', 'meadow', 'orbit'];
/** Words added per request: prompts far enough apart that a usage count tells them apart. */
export const WORDS_STEP = 16;
// A short reply fits well within these; a hostile target's endless body is cut here, not at
// the client's 8 MiB, so a burst of answers in flight at once stays small.
const REPLY_BYTES = 256 * 1024;
const LONG_REPLY_BYTES = 1024 * 1024;

let tokenizer: Promise<(text: string) => number> | undefined;
/** The client's count of a prompt: o200k_base tokens (the fit to the target's count is learned, any tokenizer would do). */
function countTokens(): Promise<(text: string) => number> {
  tokenizer ??= import('gpt-tokenizer/encoding/o200k_base').then((t) => (text: string) => t.encode(text, { disallowedSpecial: new Set() }).length);
  return tokenizer;
}

export interface CrossRequest {
  body: Record<string, unknown>;
  auth: AuthSpec;
  keyLabel: string;
  canary: string;
  prompt: string;
}

/** Request `n` of a probe: its own canary and n x WORDS_STEP filler words. */
export function crossRequest(n: number, stream: boolean, keyLabel: string, auth: AuthSpec): CrossRequest {
  const canary = makeCanary();
  const words = Array.from({ length: 4 + n * WORDS_STEP }, (_, i) => FILLER[i % FILLER.length]).join(' ');
  const prompt = `${canaryInstruction(canary)} Then answer in one short sentence about these words: ${words}`;
  const body = chatBody({ messages: [{ role: 'user', content: prompt }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
  return { body, auth, keyLabel, canary, prompt };
}

/** What the reply says about whose it is: its text, usage.prompt_tokens, completion id. */
export function replyOf(ex: Exchange): CrossTalkReply {
  if (ex.stream) {
    let content = '';
    let id: string | undefined;
    let promptTokens: number | undefined;
    for (const e of ex.stream.events) {
      let c: Record<string, unknown>;
      try { c = JSON.parse(e.data) as Record<string, unknown>; } catch { continue; }
      if (!c || typeof c !== 'object') continue;
      if (id === undefined && typeof c.id === 'string') id = c.id;
      for (const ch of Array.isArray(c.choices) ? c.choices as Array<{ delta?: { content?: unknown } }> : []) {
        if (typeof ch?.delta?.content === 'string') content += ch.delta.content;
      }
      const u = (c.usage as { prompt_tokens?: unknown } | null | undefined)?.prompt_tokens;
      if (typeof u === 'number') promptTokens = u;
    }
    return { content, ...(id !== undefined ? { id } : {}), ...(promptTokens !== undefined ? { promptTokens } : {}) };
  }
  const j = ex.json as { id?: unknown; choices?: Array<{ message?: { content?: unknown } }>; usage?: { prompt_tokens?: unknown } } | undefined;
  const content = (j?.choices ?? []).map((c) => (typeof c?.message?.content === 'string' ? c.message.content : '')).join('');
  const u = j?.usage?.prompt_tokens;
  return { content, ...(typeof j?.id === 'string' ? { id: j.id } : {}), ...(typeof u === 'number' ? { promptTokens: u } : {}) };
}

export interface CrossResult { ex: Exchange; sample: CrossTalkSample }

/** Sends one probe request and pairs its answer with what it asked. */
export async function sendCross(r: CrossRequest, clock: () => number = () => performance.now()): Promise<CrossResult> {
  const startMs = clock();
  const ex = await chat(r.body, r.auth, { maxBodyBytes: REPLY_BYTES });
  const endMs = clock();
  // Counted once answered: loading the tokenizer does not hold a burst's first requests back.
  const count = await countTokens();
  return { ex, sample: { request: { key: r.keyLabel, canary: r.canary, promptSize: count(r.prompt), curl: ex.curl, startMs, endMs }, reply: replyOf(ex) } };
}

/**
 * An answer of a probe that runs its own requests (the rate-limit ramp) as SVC-9 reads it:
 * only what the judgement needs is kept (the canaries its text holds, a short excerpt of the
 * exchange), so a probe holding hundreds of answers holds no more than it did.
 */
export function probeResult(ex: Exchange, o: { keyLabel: string; canary: string; startMs: number; endMs: number; label?: string }): CrossResult {
  // The probe's prompts are alike in length: its replies' usage cannot tell them apart, and is left out.
  const { promptTokens: _usage, ...reply } = replyOf(ex);
  return {
    ex: slim(ex),
    sample: { request: { key: o.keyLabel, canary: o.canary, promptSize: NaN, curl: ex.curl, startMs: o.startMs, endMs: o.endMs, ...(o.label ? { label: o.label } : {}) }, reply: { ...reply, content: canariesIn(reply.content ?? '').join(' ') } },
  };
}

/** An exchange kept for a report only: its first 2,000 characters (what a record shows), no parsed stream. */
export function slim(ex: Exchange): Exchange {
  const out: Exchange = { ...ex, ...(ex.text !== undefined ? { text: ex.text.slice(0, 2000) } : {}) };
  delete out.stream;
  delete out.json;
  return out;
}

/**
 * SVC-9's verdict on a judgement of concurrent replies (lib/spec/rules/cross-talk.ts):
 * a reply of another request fails with both requests' curl lines and keys; no evidence is
 * inconclusive, naming why; else a pass. `results` are the judged replies, in the
 * judgement's order; `what` says what was judged (counts, keys); `tooFew`: why the replies
 * that came are too few for a pass (a finding among them still fails).
 */
export function crossTalkVerdict(t: ClauseContext, j: CrossTalkJudgement, results: readonly CrossResult[], what: string, tooFew?: string): void {
  const samples = results.map((r) => r.sample);
  const f = j.findings[0];
  const figures = `${what}; judged by canary ${j.judged.canary}, usage ${j.judged.usage}, id ${j.judged.id}`;
  if (f) t.fail('every reply to carry its own request\'s canary, prompt count and id', `${j.findings.length} repl${j.findings.length === 1 ? 'y' : 'ies'} of another request; ${describeFinding(f, samples)} (${figures})`, results[f.request]!.ex);
  if (tooFew) t.inconclusive(`${tooFew} (${figures})`);
  if (j.inconclusive) t.inconclusive(`${j.inconclusive} (${figures})`);
  t.check(true, 'every reply its own request\'s', '', results[0]!.ex);
}

// --- answers that did not come ----------------------------------------------------------

/** A reply a concurrency probe judges: a 200 that arrived whole. */
export function isServed(ex: Exchange): boolean {
  return ex.status === 200 && !ex.error;
}

/** The run's deadline (TIMEOUT_MS) ended the request before its answer was whole. */
export function cutByDeadline(ex: Exchange): boolean {
  return ex.error?.kind === 'timeout-headers' || ex.error?.kind === 'timeout-body';
}

/**
 * Counts the exchanges that got a response as reached (t.responded) and passes over those
 * that got none. The one place SVC-9 and SVC-10 depart from clause()'s rule that a request
 * with no response fails the test's clause. A 429 past the back-off budget is left to clause()'s
 * end-of-test rule (inconclusive, throttled), so a finding on a real answer beside it stands.
 */
export function reach(t: ClauseContext, exs: readonly Exchange[]): void {
  // SVC-9 and SVC-10 judge the answers that came; answering is SVC-1's and EV-10's, judged by their own probes.
  for (const ex of exs) if (ex.status !== undefined && !ex.throttledOut) t.responded(ex);
}

/** Why requests got no reply to judge, counted: "2 no answer: no response headers within 4000 ms; 1 HTTP 503". */
export function whyUnserved(exs: readonly Exchange[]): string {
  const counts = new Map<string, number>();
  for (const ex of exs) {
    // The error's detail in parentheses (bytes received, events) differs per request: counted apart from it.
    const key = `${ex.status === undefined ? 'no answer' : `HTTP ${ex.status}`}${ex.error ? `: ${ex.error.message.replace(/ \(.*\)$/s, '')}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join('; ');
}

/** A request with no reply to judge, still a possible owner: a reply carrying its canary or its prompt's count is another's. */
export function unservedSample(s: CrossTalkSample): CrossTalkSample {
  return { request: s.request, reply: {} };
}

/** Replies SVC-9 needs for a pass: at least two in flight together. */
export const MIN_REPLIES_JUDGED = 2;

/** SVC-9's `tooFew` for crossTalkVerdict when fewer than MIN_REPLIES_JUDGED replies were judged (undefined: enough), naming the counts. */
export function tooFewReplies(judged: number, of: number, requests: string, detail = ''): string | undefined {
  return judged < MIN_REPLIES_JUDGED ? `only ${judged} of ${of} ${requests} got a reply to judge${detail}` : undefined;
}

// --- SVC-9's own burst -----------------------------------------------------------------------

export interface LoneForms {
  /** The forms (false: plain, true: stream) at least one lone request of which was served. */
  forms: boolean[];
  ev: CrossTalkEvidence;
  /** The target met a rate limit on the lone requests. */
  throttled: boolean;
  /** What the lone phase did not serve, for the note ('' when all were served). */
  left: string;
  /** The lone phase had the target to itself among the run's requests (Alone.quiet). */
  quiet: boolean;
}

/** What SVC-9's lone requests show: the forms the target serves alone and the evidence it gives; a lone request with no reply is named, never the verdict. */
export function aloneForms(t: ClauseContext, alone: Alone): LoneForms {
  reach(t, [...alone.lone, ...alone.refused].map((r) => r.ex));
  const forms = [false, true].filter((stream) => alone.lone.some((r) => r.stream === stream));
  const left = alone.refused.length === 0 ? '' : `${alone.refused.length} of ${alone.lone.length + alone.refused.length} lone requests not served (${whyUnserved(alone.refused.map((r) => r.ex))})${forms.length === 1 ? `, so ${forms[0] ? 'plain' : 'streaming'} requests were left out of the burst` : ''}`;
  if (forms.length === 0) t.inconclusive(`no lone request was served, ${left}: nothing to learn whose replies are whose from`);
  const throttled = alone.lone.some((r) => r.ex.retries.length > 0 || (r.ex.throttleWaitMs ?? 0) > 0);
  // A lone reply that is another lone request's needs no burst to show it.
  const samples = alone.lone.map((r, i) => ({ request: { ...r.sample.request, label: `lone request ${i + 1}` }, reply: r.sample.reply }));
  const ev = learnEvidence(samples);
  const f = ev.crossed[0];
  if (f) t.fail('every reply to carry its own request\'s canary, prompt count and id', `${ev.crossed.length} of ${samples.length} lone replies (sent one at a time) of another request; ${describeFinding(f, samples)}`, alone.lone[f.request]!.ex);
  return { forms, ev, throttled, left, quiet: alone.quiet };
}

/**
 * SVC-9's verdict on its burst: the replies that came are judged, each request with none
 * still the owner of its canary and prompt; fewer than MIN_REPLIES_JUDGED replies is
 * inconclusive (naming how many got none and why), unless a reply that came is another's.
 */
export function crossTalkBurstVerdict(t: ClauseContext, lone: LoneForms, answers: readonly CrossResult[], what: string): void {
  reach(t, answers.map((a) => a.ex));
  const served = answers.filter((a) => isServed(a.ex));
  const unserved = answers.filter((a) => !isServed(a.ex));
  const j = judgeCrossTalk(lone.ev, answers.map((a) => (isServed(a.ex) ? a.sample : unservedSample(a.sample))));
  const notServed = unserved.length ? `; ${unserved.length} got no reply to judge (${whyUnserved(unserved.map((a) => a.ex))})` : '';
  const figures = `${served.length} of ${answers.length} concurrent replies (${what})${notServed}`;
  crossTalkVerdict(t, j, answers, figures, tooFewReplies(served.length, answers.length, 'concurrent requests'));
  t.note(`${figures} judged by canary ${j.judged.canary}, usage ${j.judged.usage}, id ${j.judged.id}${lone.ev.missing.length ? `; not usable: ${lone.ev.missing.join('; ')}` : ''}${lone.left ? `; ${lone.left}` : ''}${unquietNote(lone.quiet)}`);
}

// --- SVC-1's burst, judged by SVC-1 and SVC-9 ---------------------------------------------------

/** SVC-1's burst as it is judged: counts, the first breach, every answer for SVC-9 (exchanges cut to what a report shows). */
export interface Burst {
  n: number; judged: number; overloaded: number; reused: number;
  first?: Exchange;
  breach?: { ex: Exchange; index: number; seen?: string };
  cross: CrossResult[];
}

export function newBurst(): Burst {
  return { n: 0, judged: 0, overloaded: 0, reused: 0, cross: [] };
}

/** An exchange of the raw client as the success-body rule reads it. */
export function successAnswer(ex: Exchange) {
  return {
    method: ex.request.method, path: new URL(ex.request.url).pathname, status: ex.status, contentType: ex.headers['content-type'],
    text: ex.text ?? '', transportError: ex.error?.message, streamData: ex.stream?.events.map((e) => e.data),
  };
}

/**
 * One answer of SVC-1's burst, judged as it arrives; only the first breach is kept (a
 * hostile target's capped bodies, all held at once, would be the burst x the body cap).
 */
export function recordBurstAnswer(b: Burst, r: CrossResult, label: string): void {
  const ex = r.ex;
  const index = ++b.n;
  b.cross.push({ ex: slim(ex), sample: { request: { ...r.sample.request, label }, reply: { ...r.sample.reply, content: canariesIn(r.sample.reply.content ?? '').join(' ') } } });
  b.first ??= slim(ex);
  if (ex.connection?.reused) b.reused++;
  if (ex.status === 503) { b.overloaded++; return; } // the spec's "Service overloaded": legal under a burst (ERR-4 judges its body)
  if (ex.status !== 200) { b.breach ??= { ex: slim(ex), index }; return; }
  const seen = judgeSuccessBody(successAnswer(ex))?.find((j) => j.seen)?.seen;
  if (seen !== undefined) b.breach ??= { ex: slim(ex), index, seen };
  b.judged++;
}

/** SVC-1's verdict on its burst: every answer a 200 with a whole completion (a 503 legal); a valid request with no answer within the run's deadline is SVC-1's to fail. */
export function burstVerdict(t: ClauseContext, b: Burst): void {
  const { first, breach, n, judged, overloaded, reused } = b;
  t.responded(breach?.ex ?? first!);
  if (breach && breach.seen === undefined) t.status(breach.ex, 200);
  if (breach) t.check(false, 'a whole chat completion (a JSON object with a choices array) in every 200', `answer ${breach.index} of ${n}: ${breach.seen}`, breach.ex);
  reach(t, b.cross.map((r) => r.ex));
  if (judged === 0) t.inconclusive(`all ${n} requests of the burst were answered 503 (overloaded): no reply to judge`);
  t.check(judged > 0, 'a whole chat completion in every 200', 'none judged', b.first);
  t.note(`${judged} of ${n} answers judged, each a whole chat completion${overloaded ? `; ${overloaded} answered 503 (overloaded)` : ''}; ${reused} sent on a kept-alive connection`);
}

/**
 * SVC-9 on SVC-1's burst: the replies that came are judged with what the lone requests (and
 * any burst request that overlapped no other) showed; a request with no reply is still the
 * owner of its canary and prompt, never the verdict.
 */
export function burstCrossTalkVerdict(t: ClauseContext, b: Burst, alone: Alone): void {
  reach(t, b.cross.map((r) => r.ex));
  const bySample = new Map(b.cross.map((r) => [isServed(r.ex) ? r.sample : unservedSample(r.sample), r]));
  const j = judgeTraffic([...bySample.keys()], alone.lone.map((r) => r.sample));
  const results = j.samples.map((s) => bySample.get(s)!);
  const served = results.filter((r) => isServed(r.ex)).length;
  const unserved = b.cross.filter((r) => !isServed(r.ex));
  const notServed = unserved.length ? `; ${unserved.length} got no reply to judge (${whyUnserved(unserved.map((r) => r.ex))})` : '';
  const what = `${served} of ${b.n} answers of the burst (main key) judged with what ${j.lone} lone replies showed${notServed}`;
  crossTalkVerdict(t, j, results, what, tooFewReplies(served, b.n, 'requests of the burst', ' in flight with another'));
  t.note(`${served} concurrent replies judged by canary ${j.judged.canary}, usage ${j.judged.usage}, id ${j.judged.id} (evidence from ${j.lone} lone replies)${notServed}${j.evidence.missing.length ? `; not usable: ${j.evidence.missing.join('; ')}` : ''}${unquietNote(alone.quiet)}`);
}

/**
 * SVC-9 on the rate-limit probe's ramp, which runs beside the rest of the run: `cross` holds
 * every answer of the ramp; each served reply is judged (its own lone requests and `alone`
 * teach the evidence), and a request with none (a 429, no answer) still owns its canary, so a
 * reply carrying it is another's; fewer than MIN_REPLIES_JUDGED replies is inconclusive,
 * naming the counts, and a finding among them still fails.
 */
export function rampCrossTalkVerdict(t: ClauseContext, cross: readonly CrossResult[], alone: Alone, sent: number, statuses: Record<string, number>): void {
  reach(t, cross.map((r) => r.ex));
  const bySample = new Map(cross.map((r) => [isServed(r.ex) ? r.sample : unservedSample(r.sample), r]));
  const j = judgeTraffic([...bySample.keys()], alone.lone.map((r) => r.sample), { judgeAll: true });
  const results = j.samples.map((s) => bySample.get(s)!);
  const served = results.filter((r) => isServed(r.ex)).length;
  const unserved = cross.filter((r) => !isServed(r.ex));
  const notServed = unserved.length ? `; ${unserved.length} got no reply to judge, each still the owner of its canary (${whyUnserved(unserved.map((r) => r.ex))})` : '';
  const few = tooFewReplies(served, sent, 'requests of the probe', ` (statuses ${JSON.stringify(statuses)})`);
  crossTalkVerdict(t, j, results, `${served} served requests of the probe (RATE_LIMIT_API_KEY; ${j.concurrent} of its ${cross.length} requests in flight with another) judged with what ${j.lone} lone requests showed${notServed}`, few);
  t.note(`${served} replies judged (${j.concurrent} of the probe's ${cross.length} requests in flight with another) by canary ${j.judged.canary}, usage ${j.judged.usage}, id ${j.judged.id} (evidence from ${j.lone} lone requests)${notServed}${j.evidence.missing.length ? `; not usable: ${j.evidence.missing.join('; ')}` : ''}${unquietNote(alone.quiet)}`);
}

export interface Alone {
  /** Lone requests the target served (and their form), and those it did not serve. */
  lone: Array<CrossResult & { stream: boolean }>;
  refused: Array<{ stream: boolean; status: number | undefined; ex: Exchange }>;
  /** The run's other requests were out of the way (Gate.quiet); false: some still in flight after the drain time. */
  quiet: boolean;
}

/**
 * Runs a probe's "alone" part with none of the run's other requests in flight (the suite's
 * tests run concurrently, and the fuzz phase beside them): each request out may take the run's
 * deadline to drain. The section ends by itself after `maxMs` (never stalls a run).
 */
export function withRunQuiet<T>(maxMs: number, fn: () => Promise<T>): Promise<{ value: T; quiet: boolean }> {
  return runGovernor().quiet(config.timeoutMs + 1_000, maxMs, fn);
}

/** What a verdict's note adds when its "alone" requests went out beside some of the run's own (the quiet section's drain time ran out). */
export function unquietNote(quiet: boolean): string {
  return quiet ? '' : '; some of the run\'s other requests were still in flight beside the requests sent alone (they did not end within the run\'s deadline)';
}

let alonePhase: Promise<Alone> | undefined;
// What the target gives to tell replies apart, learned once per worker from lone requests on the main key
// (SVC-9, the SVC-1 burst and the rate-limit ramp share it; per test in a mutation run, which judges each test by its own requests).
export function learnAlone(): Promise<Alone> {
  return runContext().mode.mutation ? aloneOnce() : (alonePhase ??= aloneOnce());
}
async function aloneOnce(): Promise<Alone> {
  const a: Alone = { lone: [], refused: [], quiet: true };
  // More lone requests while some but too few replies showed their own canary (other traffic met on the way).
  const echoes = () => a.lone.filter((r) => canariesIn(r.sample.reply.content ?? '').includes(r.sample.request.canary!)).length;
  // Lone means alone among the run's own requests too: a pool that swaps replies would trade these with them.
  const { quiet } = await withRunQuiet(LONE_SAMPLES_MAX * (config.timeoutMs + 1_000), async () => {
    for (let i = 0; i < LONE_SAMPLES || (i < LONE_SAMPLES_MAX && echoes() > 0 && echoes() < LONE_ECHOES_WANTED); i++) {
      // Far-apart prompt sizes for the usage fit; plain and streamed alike.
      const stream = i % 2 === 1;
      const r = await sendCross(crossRequest(12 * i, stream, 'main', keys.main));
      if (!isServed(r.ex)) a.refused.push({ stream, status: r.ex.status, ex: r.ex });
      else a.lone.push({ ...r, stream });
    }
  });
  a.quiet = quiet;
  return a;
}

/** An event that carries reply text. */
export function hasContent(ev: Pick<SseEvent, 'data'>): boolean {
  try {
    const c = JSON.parse(ev.data) as { choices?: Array<{ delta?: { content?: unknown } }> };
    return (c.choices ?? []).some((ch) => typeof ch?.delta?.content === 'string' && ch.delta.content !== '');
  } catch { return false; }
}

/** The content chunks of a captured stream as EV-13 reads them. */
export function contentChunks(ex: Exchange): DeliveryChunk[] {
  return (ex.stream?.events ?? []).filter(hasContent).map((e) => ({ atMs: e.atMs, ...(e.read !== undefined ? { read: e.read } : {}) }));
}

/** Why a stream's content did not all come (undefined: it came whole; [DONE] came, whatever happened after it). */
export function streamCut(ex: Exchange): string | undefined {
  if (!ex.error || ex.stream?.doneIndex !== undefined) return undefined;
  return `${cutByDeadline(ex) ? 'cut by the run\'s deadline' : 'cut'} (${ex.error.message})`;
}

/**
 * EV-13's verdict on its one long stream, judged on the content chunks that came: no answer,
 * or a stream cut before [DONE], is inconclusive (answering and finishing are EV-10's), unless
 * the part that came was already one burst at its end.
 */
export function deliveryVerdict(t: ClauseContext, ex: Exchange): void {
  if (ex.status === undefined && !ex.throttledOut) {
    t.use(ex);
    t.inconclusive(`no answer (${ex.error?.message ?? 'unknown failure'}): no stream to judge; a stream that is not answered or stalls is EV-10's`);
  }
  t.responded(ex);
  if (ex.status !== 200) t.inconclusive(`no stream to judge: HTTP ${ex.status} (see EV-1)`);
  const d = judgeDelivery(contentChunks(ex));
  const cut = streamCut(ex);
  const figures = `${d.contentChunks} content chunks over ${Math.round(d.spreadMs)} ms, ${Math.round(d.e2eMs)} ms end to end, in ${d.reads} read${d.reads === 1 ? '' : 's'}${cut ? `, then ${cut}` : ''}`;
  // A burst is judged on what came: the figures end at the last content chunk, so a stall after it does not enter them.
  if (cut && d.verdict !== 'burst') {
    const why = d.verdict === 'streamed' ? 'the part that came was paced, but part of a stream is no pass'
      : d.contentChunks < DELIVERY_MIN_CHUNKS ? `too few content chunks came to judge (${d.contentChunks}, fewer than ${DELIVERY_MIN_CHUNKS})` : d.why;
    t.inconclusive(`the stream did not come whole, ${cut}: ${why}; its finishing is EV-10's (${figures})`);
  }
  if (d.verdict === 'inconclusive') t.inconclusive(`${d.why} (${figures})`);
  t.check(d.verdict === 'streamed', 'content chunks spread over the stream\'s time as they are generated', `${d.why ?? ''}${cut ? `; then ${cut} (EV-10's)` : ''}`, ex);
  t.note(figures);
}

/** How long a short stream may take to its first token before it counts as "at least this long". */
export const TTFT_WAIT_MS = 3000;

export interface Ttft { ms: number; capped: boolean; ex: Exchange; /** The stream ended (or failed) with no content: no figure. */ none?: string }

/** A short stream's time to its first content (still none after TTFT_WAIT_MS: `capped`), cancelled once it is there. */
export async function shortStreamTtft(): Promise<Ttft> {
  const ex = await chat(chatBody({ stream: true }), undefined, { maxBodyBytes: REPLY_BYTES, cancel: { afterMs: TTFT_WAIT_MS, afterEvent: hasContent } });
  const first = ex.stream?.events.find(hasContent);
  if (first) return { ms: first.atMs, capped: false, ex };
  if (ex.cancelled && (ex.status === undefined || ex.status === 200)) return { ms: TTFT_WAIT_MS, capped: true, ex };
  // The run's deadline (TIMEOUT_MS below TTFT_WAIT_MS) ended the wait first: no first token within it is the figure.
  if (cutByDeadline(ex) && (ex.status === undefined || ex.status === 200)) return { ms: Math.min(TTFT_WAIT_MS, ex.durationMs), capped: true, ex };
  return { ms: NaN, capped: false, ex, none: ex.status === undefined ? `no answer (${ex.error?.message})` : ex.status !== 200 ? `HTTP ${ex.status}` : `a stream with no content${ex.error ? ` (${ex.error.message})` : ''}` };
}

/** A long stream held open until `signal` aborts; `firstToken` resolves when its first content came (false: it ended first). */
export function holdLongStream(signal: AbortSignal): { firstToken: Promise<boolean>; done: Promise<Exchange> } {
  let got: (ok: boolean) => void = () => {};
  const firstToken = new Promise<boolean>((resolve) => { got = resolve; });
  const body = chatBody({ stream: true, max_tokens: 768, messages: [{ role: 'user', content: 'Write a long story, at least 800 words, about a lighthouse keeper.' }] });
  const done = chat(body, undefined, { maxBodyBytes: LONG_REPLY_BYTES, cancel: { signal, afterEvent: (ev) => { if (hasContent(ev)) got(true); return false; } } })
    .then((ex) => { got(false); return ex; });
  return { firstToken, done };
}

/**
 * SVC-10's probe: a short stream's TTFT alone, with `heldStreams` long streams held, then right
 * after cancelling them; judged only where the held streams load the target. The suite's test
 * and its self-test against the engine model call it.
 */
export async function cancelFreesCapacity(t: ClauseContext, heldStreams: number): Promise<void> {
  // The whole probe runs with the run's other requests out of the way: they would load the
  // target "alone" and take the slots the cancelled streams free.
  const { value: m, quiet } = await withRunQuiet(12 * TTFT_WAIT_MS + 2 * config.timeoutMs, () => measureCancel(heldStreams));
  // A stream cut before its headers (our wait or the run's deadline) has no response to read: its figure is the wait.
  reach(t, m.idle.map((s) => s.ex));
  const none = m.idle.find((s) => s.none);
  if (none) t.inconclusive(`a short stream alone gave no first token to time: ${none.none}`);
  if (m.idle.every((s) => s.capped)) t.inconclusive(`a short stream alone got no content within ${Math.round(Math.max(...m.idle.map((s) => s.ms)))} ms`);
  const { loaded, after, started, exs } = m.held!;
  const ttft0 = Math.min(...m.idle.map((s) => s.ms));
  const stillOpen = exs.filter((ex) => ex.cancelled && ex.status === 200).length;
  reach(t, [loaded.ex, after.ex]);
  for (const s of [loaded, after]) if (s.none) t.inconclusive(`a short stream gave no first token to time: ${s.none}`);
  const fig = (s: { ms: number; capped: boolean }) => `${s.capped ? '>= ' : ''}${Math.round(s.ms)} ms`;
  const figures = `K = ${heldStreams} long streams (${started.filter(Boolean).length} streaming, ${stillOpen} still open when cancelled); TTFT alone ${Math.round(ttft0)} ms, with them held ${fig(loaded)}, right after cancelling them ${fig(after)}${unquietNote(quiet)}`;
  if (stillOpen < heldStreams) t.inconclusive(`only ${stillOpen} of ${heldStreams} long streams were still open to cancel (the target ended them first): ${figures}`);
  if (loaded.ms < Math.max(2 * ttft0, ttft0 + 200)) t.inconclusive(`the held streams did not load the target (its TTFT barely moved), so cancelling them cannot show anything: ${figures}`);
  t.check(after.ms <= ttft0 + (loaded.ms - ttft0) / 2, 'the TTFT after cancelling back near the TTFT alone (the cancelled streams\' capacity freed)',
    `TTFT stayed at the loaded level: ${figures}`, after.ex);
  t.note(figures);
}

/** SVC-10's requests: the idle TTFTs, then (unless a short stream alone had no figure) the held, loaded and after-cancel ones. */
async function measureCancel(heldStreams: number): Promise<{ idle: Ttft[]; held?: { loaded: Ttft; after: Ttft; started: boolean[]; exs: Exchange[] } }> {
  // "Alone" means the target is idle: a capped first try may still meet earlier probes' work
  // (a target that keeps decoding for gone clients holds their slots), so up to 2 more tries.
  const idle: Ttft[] = [];
  for (let i = 0; i < 5 && idle.filter((s) => !s.capped).length < 3; i++) {
    const s = await shortStreamTtft();
    idle.push(s);
    if (s.none) break;
  }
  if (idle.some((s) => s.none) || idle.every((s) => s.capped)) return { idle };
  const hold = new AbortController();
  const held = Array.from({ length: heldStreams }, () => holdLongStream(hold.signal));
  try {
    const started = await Promise.all(held.map((h) => Promise.race([h.firstToken, new Promise<boolean>((r) => setTimeout(() => r(false), TTFT_WAIT_MS * 2))])));
    const loaded = await shortStreamTtft();
    hold.abort();
    const after = await shortStreamTtft();
    return { idle, held: { loaded, after, started, exs: await Promise.all(held.map((h) => h.done)) } };
  } finally {
    hold.abort();
  }
}
