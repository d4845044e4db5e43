// Judges a streamed chat answer, event by event, for both k6 stream scripts:
// chat-stream (k6/http: the whole body once the response has ended, so no per-event
// timing) and chat-stream-sse (xk6-sse: events as they arrive, timed). The framing is
// the suite's (lib/spec/sse-framing.ts through ./sse.ts); the delta rule of EV-12 is the one
// module lib/spec/cumulative-deltas.ts. For chat-stream the script reports http_req_waiting
// (request sent -> first response byte) as time to first byte and the request's whole
// duration as end-to-end; when the server flushes its headers before the first token
// (the reference does, many gateways do), that first byte is the status line, not a token.
import { check } from 'k6';
import type { Response } from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import { bodyShapeFailures, completionTokens, recordStatus } from './metrics.ts';
import { checkShape, parseJson } from './shape.ts';
import { bodyText, CHECK, header, judgeErrorBody, logProblem, type Tags } from './chat.ts';
import { parseSse } from './sse.ts';
import { DeltaSnapshotWatch, describeSnapshots, type SnapshotFinding } from '../../../lib/spec/cumulative-deltas.ts';
import { emptyReading, pushEvent } from '../../../lib/spec/rules/stream-reading.ts';
import * as ev from '../../../lib/spec/rules/stream-rules.ts';
import { Distribution } from './distributions.ts';
import { judgeCrossTalk } from './cross-talk.ts';

export const STREAM_CHECK = {
  eventStream: 'stream: Content-Type is text/event-stream',
  chunkShape: 'stream: every chunk is a chat.completion.chunk (schema)',
  done: 'stream: ends with data: [DONE]',
  content: 'stream: reply content is non-empty',
  finish: 'stream: exactly one finish_reason',
} as const;

/** http_req_waiting of 2xx streams: time to the first response byte (not the first token, see above). */
export const streamTtfb = new Trend('chatgate_stream_ttfb', true);
/** http_req_duration of 2xx streams: request sent -> last byte ([DONE] and close). */
export const streamE2e = new Trend('chatgate_stream_e2e', true);
/** Data events per stream. */
/** The same samples in mergeable form (lib/distributions.ts). */
const streamTtfbDist = new Distribution('stream_ttfb_ms');
const streamE2eDist = new Distribution('stream_e2e_ms');
export const streamChunks = new Trend('chatgate_stream_chunks');
/** Streams whose content deltas are cumulative snapshots (EV-12, lib/spec/cumulative-deltas.ts): 1 or 0 per 2xx stream. */
export const cumulativeDeltas = new Counter('chatgate_cumulative_deltas');

interface Delta { content?: string | null; reasoning?: unknown; reasoning_content?: unknown; tool_calls?: unknown }
interface Chunk {
  choices: Array<{ index: number; delta: Delta; finish_reason?: string | null }>;
  usage?: { completion_tokens?: unknown } | null;
}

/**
 * One stream's data payloads in order, with the time each arrived (ms; 0 when the
 * engine cannot time events). Content, TTFT and inter-token gaps follow the Node load
 * driver (load/engine/lean-client.ts): an output chunk is one whose choices[0].delta carries
 * non-empty content, reasoning (delta.reasoning or reasoning_content) or tool calls; a gap is
 * the time between two consecutive output chunks.
 */
/** Output the model generated: content, reasoning (vLLM's delta.reasoning, reasoning_content) or a tool call. */
function isOutput(d: Delta): boolean {
  const text = (v: unknown) => typeof v === 'string' && v.length > 0;
  return text(d.content) || text(d.reasoning) || text(d.reasoning_content) || (Array.isArray(d.tool_calls) && d.tool_calls.length > 0);
}

export class StreamJudge {
  done = false;
  afterDone = false;
  chunks = 0;
  events = 0;
  content = '';
  finishes = 0;
  tokens: number | undefined;
  firstBroken: { clause: string; problems: string[]; payload: string } | undefined;
  firstEventAt: number | undefined;
  firstContentAt: number | undefined;
  lastContentAt: number | undefined;
  /** The first chunk's completion id (SVC-9). */
  id: string | undefined;
  readonly gaps: number[] = [];
  private readonly deltas = new DeltaSnapshotWatch();
  /** The stream as the EV rules read it (lib/spec/rules/stream-rules.ts: the suite's and the fuzz phase's rules). */
  private readonly reading = emptyReading();

  onData(data: string, at: number): void {
    this.events++;
    pushEvent(this.reading, { data, atMs: at });
    if (this.firstEventAt === undefined) this.firstEventAt = at;
    if (this.done) {
      this.afterDone = true;
      return;
    }
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    this.chunks++;
    const parsed = parseJson(data);
    if (this.id === undefined && parsed && typeof (parsed as { id?: unknown }).id === 'string') this.id = (parsed as { id: string }).id;
    this.deltas.pushChunk(parsed);
    const shape = checkShape('chat-completion-chunk', parsed);
    if (!shape.ok) {
      if (!this.firstBroken) this.firstBroken = { clause: shape.clause, problems: shape.problems, payload: data.slice(0, 120) };
      return;
    }
    const chunk = parsed as Chunk;
    for (const choice of chunk.choices) {
      if (choice.index === 0 && isOutput(choice.delta)) {
        if (this.firstContentAt === undefined) this.firstContentAt = at;
        else this.gaps.push(at - this.lastContentAt!);
        this.lastContentAt = at;
      }
      if (choice.index === 0 && typeof choice.delta.content === 'string') this.content += choice.delta.content;
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.finishes++;
    }
    if (chunk.usage && typeof chunk.usage.completion_tokens === 'number') this.tokens = chunk.usage.completion_tokens;
  }

  /** EV-12: the content deltas were cumulative snapshots. */
  snapshots(): SnapshotFinding | undefined {
    return this.deltas.finding();
  }

  /** Every stream check held: what the timing figures are recorded for (the Node driver times successful streams only). */
  ok(): boolean {
    const r = this.reading;
    return this.firstBroken === undefined && !ev.done(r) && !ev.content(r) && ev.finishes(r).length === 0;
  }

  /** The checks, the chunk-shape and EV-12 counters, chunks and usage tokens of a 2xx stream. */
  record(tags: Tags, extra: { unterminated?: boolean } = {}): void {
    streamChunks.add(this.chunks, tags);
    if (this.tokens !== undefined) completionTokens.add(this.tokens, tags);
    const shapeOk = this.firstBroken === undefined;
    bodyShapeFailures.add(shapeOk ? 0 : 1, { ...tags, schema: 'chat-completion-chunk', clause: this.firstBroken ? this.firstBroken.clause : 'none' });
    if (this.firstBroken) logProblem(`stream chunk shape broken (${this.firstBroken.clause}): ${this.firstBroken.problems.join('; ')} in ${JSON.stringify(this.firstBroken.payload)}`);
    const snapshots = this.snapshots();
    cumulativeDeltas.add(snapshots ? 1 : 0, { ...tags, clause: 'EV-12' });
    if (snapshots) logProblem(`stream deltas are cumulative snapshots (EV-12): ${describeSnapshots(snapshots)}`);
    if (!this.done) logProblem(`stream without a terminated data: [DONE] event (${this.events} events${extra.unterminated ? ', last event unterminated' : ''})`);
    check(shapeOk, { [STREAM_CHECK.chunkShape]: (v) => v }, tags);
    const r = this.reading;
    check(ev.done(r), { [STREAM_CHECK.done]: (v) => v === undefined }, tags);
    check(ev.content(r), { [STREAM_CHECK.content]: (v) => v === undefined }, tags);
    check(ev.finishes(r), { [STREAM_CHECK.finish]: (v) => v.length === 0 }, tags);
  }
}

/** Media type of a Content-Type value, lower case, without parameters. */
export function mediaType(value: string | undefined): string {
  return (value ?? '').split(';')[0]!.trim().toLowerCase();
}

/** `sent`: the request body, whose canary SVC-9's check looks for in the reply. */
export function judgeStream(res: Response, tags: Tags, sent?: Record<string, unknown>): void {
  recordStatus(res.status, tags);
  check(res, { [CHECK.status]: (r) => (r.status >= 200 && r.status < 300) || r.status === 429 }, tags);
  if (res.status >= 400) {
    judgeErrorBody(res, tags);
    return;
  }
  if (res.status === 0) logProblem(`no response to a stream request: ${res.error}`);
  if (res.status < 200 || res.status >= 300) return;

  streamTtfb.add(res.timings.waiting, tags);
  streamE2e.add(res.timings.duration, tags);
  streamTtfbDist.add(res.timings.waiting);
  streamE2eDist.add(res.timings.duration);
  check(res, { [STREAM_CHECK.eventStream]: () => mediaType(header(res, 'content-type')) === 'text/event-stream' }, tags);

  const sse = parseSse(bodyText(res));
  const judge = new StreamJudge();
  for (const ev of sse.events) judge.onData(ev.data, 0);
  judge.record(tags, { unterminated: sse.unterminated });
  if (sent) judgeCrossTalk(sent, judge.content, judge.id, tags);
}
