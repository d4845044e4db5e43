// EV: streaming replies as server-sent events (spec: Events 2; the chunk shape and the
// [DONE] terminator come from the OpenAI-style clients, hence the COMPAT clauses).
// The EV tests judge one captured stream, each for its own clause (EV-9 and EV-12 also
// the one asked for with include_usage), by the per-stream rules of
// lib/spec/rules/stream-rules.ts (the fuzz phase and the k6 scripts call the same ones).
// EV-12's rule is lib/spec/cumulative-deltas.ts, the one the run-wide table applies to
// every other stream of the run.
import { describe } from 'vitest';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import { chat, chatBody, shared } from '../harness/target.ts';
import { readStream } from '../lib/spec/rules/stream-reading.ts';
import { NON_ASCII } from '../harness/varied-requests.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { DeltaSnapshotWatch, describeSnapshots } from '../lib/spec/cumulative-deltas.ts';
import * as ev from '../lib/spec/rules/stream-rules.ts';
import { deliveryVerdict } from '../harness/concurrency-probes.ts';

/** EV-6 on one stream: the rule, and the response closes after [DONE]. */
function endsWithDone(t: ClauseContext, { ex, r }: { ex: Exchange; r: ReturnType<typeof readStream> }): void {
  const v = ev.done(r);
  judge(t, ex, v && ex.error ? { ...v, seen: `${v.seen} (${ex.error.message})` } : v, 'a data: [DONE] payload and nothing after it');
  t.check(ex.error?.kind !== 'never-closed', 'the response to close after [DONE]', ex.error?.message ?? '', ex);
}

/** A rule's verdict on this stream as the test's judged check: `expected` names what held when nothing broke. */
function judge(t: ClauseContext, ex: Exchange, v: ev.StreamViolation | undefined, expected: string): void {
  t.check(v === undefined, v?.expected ?? expected, v?.seen ?? '', ex);
}

const stream = shared(() => chat(chatBody({ stream: true })));
const withUsage = shared(() => chat(chatBody({ stream: true, stream_options: { include_usage: true } })));
const nonAscii = shared(() => chat(chatBody({ stream: true, messages: NON_ASCII })));

/** The stream, read; refuses to judge chunks when there is no stream at all (EV-1 says why). */
async function reading(t: ClauseContext, source: () => Promise<Exchange> = stream) {
  const ex = await source();
  t.responded(ex);
  if (ex.status !== 200) t.inconclusive(`no stream to judge: HTTP ${ex.status} (see EV-1)`);
  return { ex, r: readStream(ex) };
}

describe('EV: the response is an event stream', () => {
  clause('events/content-type', 'EV-1', 'stream: true answers 200 with Content-Type text/event-stream', async (t) => {
    const ex = await stream();
    t.status(ex, 200);
    t.mediaType(ex, 'text/event-stream');
  });

  clause('events/framing', 'EV-2', 'events end with a blank line and payloads come in data: fields', async (t) => {
    const { ex, r } = await reading(t);
    const v = ev.framing(ex.stream?.problems ?? [], r);
    judge(t, ex, v && r.payloads.length === 0 && !ex.stream?.problems.length ? { ...v, seen: `none in ${ex.stream?.stats.bytes ?? 0} bytes: ${(ex.text ?? '').slice(0, 120)}` } : v, 'well-formed server-sent events with data: fields');
  });

  clause('events/finishes', 'EV-10', 'the stream finishes within the time limit and the connection is released', async (t) => {
    const ex = await stream();
    t.responded(ex);
    t.check(!ex.error, 'the response to end', ex.error?.message ?? '', ex);
  });

  clause('events/no-event-field', 'EV-11', 'chunk events carry no event: field', async (t) => {
    const { ex, r } = await reading(t);
    if (r.payloads.length === 0) t.inconclusive('no event with a data: field to judge (see EV-2)');
    const named = r.payloads.filter((p) => p.event !== undefined);
    t.check(named.length === 0, 'no event: field', () => `${named.length} events named ${JSON.stringify(named[0]?.event)}`, ex);
  });
});

describe('EV: chunks', () => {
  clause('events/chunk-objects', 'EV-3', 'every payload but [DONE] is a chat.completion.chunk', async (t) => {
    const { ex, r } = await reading(t);
    // No payload but the terminator: nothing for EV-3 to judge (the missing reply is EV-2's or EV-4's).
    if (ev.chunkPayloads(r).length === 0) t.inconclusive(`no data payload other than [DONE] to judge (${r.payloads.length} payloads; see EV-2, EV-4)`);
    judge(t, ex, ev.chunkShapes(r, (json) => validate('chat-completion-chunk', json).errors.map((e) => e.message))[0], 'every payload a chat.completion.chunk');
  });

  clause('events/content', 'EV-4', 'the concatenated delta.content of choice 0 is non-empty', async (t) => {
    const { ex, r } = await reading(t);
    judge(t, ex, ev.content(r), 'non-empty delta.content for choice 0');
  });

  clause('events/snapshot-deltas', 'EV-12', 'each delta.content is new text only, not the reply so far again', async (t) => {
    // Both streams of this file: the plain one, and the one that may end with a usage-only chunk.
    const { ex, r } = await reading(t);
    const usage = await withUsage();
    const judged = [{ ex, r }, ...(usage.status === 200 ? [{ ex: usage, r: readStream(usage) }] : [])];
    let deltas = 0;
    for (const s of judged) {
      const watch = new DeltaSnapshotWatch();
      for (const c of s.r.chunks) watch.pushChunk(c);
      const n = ev.contentDeltaCount(s.r.chunks);
      if (n === 0) continue;
      deltas += n;
      const found = watch.finding();
      t.check(!found, 'each delta.content new text only (not the reply so far again)', () => describeSnapshots(found!), s.ex);
    }
    if (deltas === 0) t.inconclusive('no content delta to judge (see EV-4)');
    t.note(`${deltas} content deltas in ${judged.length} stream${judged.length === 1 ? '' : 's'}, none a snapshot or a restatement of the ones before`);
  });

  clause('events/finish-reason', 'EV-5', 'exactly one chunk per choice finishes, with "stop", and no content follows', async (t) => {
    const { ex, r } = await reading(t);
    if (r.chunks.length === 0) t.inconclusive('no JSON chunk to judge (see EV-2, EV-3)');
    t.check(r.content.size + r.finishes.size > 0, 'a choice in the chunks', 'none', ex);
    judge(t, ex, ev.finishes(r, { stop: true })[0], 'one finish_reason "stop" per choice, no content after it');
  });

  clause('events/done', 'EV-6', 'the stream ends with [DONE] and nothing but the close follows', async (t) => {
    endsWithDone(t, await reading(t));
  });

  clause('events/one-id', 'EV-7', 'all chunks share one id starting with "chatcmpl-"', async (t) => {
    const { ex, r } = await reading(t);
    if (r.chunks.length === 0) t.inconclusive('no JSON chunk whose id to judge (see EV-2, EV-3)');
    const ids = [...new Set(r.chunks.map((c) => c.id))];
    t.check(ids.length === 1, 'one id for all chunks', `${ids.length} ids: ${ids.slice(0, 3).join(', ')}`, ex);
    t.check(typeof ids[0] === 'string' && ids[0].startsWith('chatcmpl-'), 'an id starting with chatcmpl-', JSON.stringify(ids[0]), ex);
  });

  clause('events/role', 'EV-8', 'the first delta of choice 0 carries role "assistant"', async (t) => {
    const { ex, r } = await reading(t);
    const first = r.firstDelta.get(0);
    if (!first) t.inconclusive(`no delta of choice 0 in ${r.chunks.length} chunks to judge (see EV-3, EV-4)`);
    t.check(first?.role === 'assistant', 'role "assistant" in the first delta', JSON.stringify(first), ex);
  });

  clause('events/usage', 'EV-9', 'stream_options.include_usage: whether a final usage chunk arrives', async (t) => {
    const { ex, r } = await reading(t, withUsage);
    if (!r.usageChunk) { t.observe('no usage chunk (choices: [] with usage) arrived'); return; }
    const u = r.usageChunk.usage as Record<string, unknown>;
    const last = r.chunks.at(-1) === r.usageChunk;
    t.observe(`usage chunk ${last ? 'last before [DONE]' : 'not last'}: prompt ${u.prompt_tokens}, completion ${u.completion_tokens}, total ${u.total_tokens}`);
    t.use(ex);
  });

  // EV-6 on the include_usage stream too: a server may send its usage chunk, or more, after [DONE].
  clause('events/done-with-usage', 'EV-6', 'with stream_options.include_usage the stream still ends with [DONE] and nothing but the close follows', async (t) => {
    endsWithDone(t, await reading(t, withUsage));
  });

  // The reply to text beyond ASCII arrives whole: a server that cuts a multi-byte character
  // across two chunks by bytes (each half decoded alone) hands every client U+FFFD.
  clause('events/non-ascii', 'EV-4', 'a request in non-ASCII text streams a non-empty reply whose characters arrive whole (no U+FFFD)', async (t) => {
    const { ex, r } = await reading(t, nonAscii);
    judge(t, ex, ev.content(r), 'non-empty delta.content for choice 0');
    const content = r.content.get(0) ?? '';
    const at = content.indexOf('\uFFFD');
    t.check(at === -1, 'every character whole (no U+FFFD replacement character; the request had none)', () => `U+FFFD at character ${at}: ${JSON.stringify(content.slice(Math.max(0, at - 20), at + 20))}`, ex);
  });

  // A buffering proxy holds a stream and hands it over at its end: each chunk is still a
  // valid event, only their arrival shows it. A long reply is asked for (a short or fast one
  // says nothing: inconclusive); lib/spec/rules/stream-delivery.ts judges the arrivals, and
  // deliveryVerdict leaves a stream with no answer or cut short to EV-10.
  clause('events/delivered-as-generated', 'EV-13', 'a long reply\'s chunks arrive as they are generated, not all at once at its end', async (t) => {
    deliveryVerdict(t, await chat(chatBody({ stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'Write about 200 words on how lighthouses work.' }] })));
  }, { stream: { none: 'streams only' } });
});
