// The load drivers' request path: one chat request on undici's dispatcher with a raw
// handler, no streams, no per-request promises or timers. lib/http/http-client.ts is the
// conformance client (it keeps every byte, decodes, builds curl lines); a load driver
// holding thousands of streams needs only timestamps, status, usage and a few checks,
// so this path keeps just those.
//
// Timing: every timestamp is performance.now() (monotonic ms) taken when the driver
// saw the bytes; latencies are measured from the request's *intended* send time, so
// a late driver or a full connection pool shows up in the figures instead of hiding.
import type { Dispatcher } from 'undici';
import { describe, validate } from '../../lib/spec/schema-validator.ts';
import { GapTally } from './histogram.ts';
import { SseScan } from './sse-scan.ts';
import { ChunkParser } from './chunk-parser.ts';
import { DeltaSnapshotWatch, describeSnapshots } from '../../lib/spec/cumulative-deltas.ts';
import type { RouteKind } from './request-bodies.ts';
import type { WorkMeta } from '../workload/workload.ts';
import type { TokenCounts } from './token-types.ts';

export type FailureKind =
  | 'timeout' // no complete answer within the time limit
  | 'dropped' // connection closed before any response
  | 'reset' // connection lost during the body
  | 'refused' // connection refused
  | 'bad_body' // a 2xx whose body or stream is wrong (a fast wrong answer)
  | 'incomplete_stream' // the stream ended without [DONE]
  | 'aborted' // stopped by the driver (Ctrl-C after the drain time); not a target failure
  | 'cancelled' // the client went away on purpose (--cancel-share); not a target failure
  | 'other';

export const FAILURE_KINDS: FailureKind[] = ['timeout', 'dropped', 'reset', 'refused', 'bad_body', 'incomplete_stream', 'aborted', 'other'];

export interface Outcome {
  seq: number;
  route: RouteKind;
  /** Which key sent it ('main', or e.g. 'bystander' in rate-limit). */
  key: string;
  stream: boolean;
  intendedAt: number;
  /** When the driver handed it to the pool. */
  sentAt: number;
  /** When a connection started writing it (later than sentAt when every connection was busy). */
  wireAt?: number;
  headersAt?: number;
  firstEventAt?: number;
  firstContentAt?: number;
  /** The second output chunk (time to second token). */
  secondContentAt?: number;
  /** The first chunk with answer content (after any reasoning chunks). */
  firstAnswerAt?: number;
  /** --max-concurrency: how long it waited in the client's queue before it was sent (its latency runs from then). */
  queueMs?: number;
  /** Output chunks that carried reasoning (delta.reasoning or delta.reasoning_content). */
  reasoningChunks?: number;
  lastContentAt?: number;
  endAt: number;
  status?: number;
  /** Response headers: kept for non-2xx answers (error and 429 checks) and when asked. */
  headers?: Record<string, string>;
  /** Body text of a non-2xx answer (first 4 KiB). */
  errorBody?: string;
  contentChunks: number;
  /** Chunks that carried output (content, reasoning_content or tool-call deltas): TTFT and ITL count these. */
  tokenEvents: number;
  outputChars: number;
  /** usage.completion_tokens as the target reported it (absent when it sent none). */
  usageTokens?: number;
  /** usage.prompt_tokens as the target reported it. */
  usagePromptTokens?: number;
  /** usage.prompt_tokens_details.cached_tokens, when the target reported it (prefix-cache hits). */
  usageCachedTokens?: number;
  /** The reply's text (content and reasoning), when the request asked to keep it. */
  reply?: string;
  /** The reply's first characters, when the request carries a canary (SVC-9). */
  replyHead?: string;
  /** The completion id (a stream's first chunk's). */
  completionId?: string;
  /** Reads off the socket that carried content (EV-13: one or two for a whole stream is a burst). */
  contentReads?: number;
  /** Gaps between consecutive output chunks: a tally at histogram precision, bounded however long the stream. */
  gaps: GapTally;
  /** Every gap as measured (ms), when the request asked for them (--save-gaps). */
  allGaps?: number[];
  /** What the workload put into the request (prompt tokens sent, max_tokens, session). */
  work?: WorkMeta;
  /** Prompt and completion tokens with their source (set by the phase before the recorders see it). */
  tokens?: TokenCounts;
  /** SSE events dispatched (streams). */
  events: number;
  ok: boolean;
  failure?: FailureKind;
  failureDetail?: string;
  /** This body was checked against the schemas. */
  schemaChecked: boolean;
}

export interface LeanRequest {
  seq: number;
  route: RouteKind;
  key: string;
  stream: boolean;
  path: string;
  body: string;
  headers: Record<string, string>;
  intendedAt: number;
  /** Check against the schemas (sampled). */
  sample: boolean;
  keepHeaders?: boolean;
  /** Keep the reply's text in the outcome (multi-turn history, token counts without usage). */
  keepReply?: boolean;
  /** Keep every inter-token gap in the outcome. */
  keepGaps?: boolean;
  /** The body sets max_tokens: an empty reply is then legal (EV-4 asks for content only of uncapped requests). */
  capped?: boolean;
  /** The client goes away (--cancel-share): after the first token, or this many ms after sending. */
  cancelAfter?: 'first-token' | number;
  work?: WorkMeta;
}

const MAX_JSON_BYTES = 4 * 1024 * 1024;
/** What a canary check keeps of a reply: it asks for the canary first. */
const HEAD_CHARS = 64;
const MAX_ERROR_BODY = 4096;
/** A stream's network pieces held before they are read together (see `hold`); its first ones are read as they come. */
const BATCH_PIECES = 16;
/** Bytes a stream holds; a larger piece is read at once. */
const BATCH_BYTES = 8192;

/** One request in flight. Created by send(); finishes exactly once through `onDone`. */
export class LeanCall implements Dispatcher.DispatchHandler {
  readonly outcome: Outcome;
  /** performance.now() after which the driver's sweep times it out. */
  deadline = 0;
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled: Error | undefined;
  private finished = false;
  private reader: SseScan | undefined;
  /** A stream's payloads, parsed (JSON.parse's result, mostly without its cost: chunk-parser.ts). */
  private chunks: ChunkParser | undefined;
  /** EV-12 on every stream (lib/spec/cumulative-deltas.ts): incremental, it keeps a few short strings once a stream is plainly legal. */
  private snapshots: DeltaSnapshotWatch | undefined;
  /** performance.now() of the network piece being read: every event in it shares it. */
  private pieceAt = 0;
  private lastContentRead = -1;
  // Pieces waiting to be read: their bytes (copied on arrival), where each ends, when each came.
  private held: Buffer | undefined;
  private heldBytes = 0;
  private heldCount = 0;
  private heldEnds: number[] | undefined;
  private heldAt: number[] | undefined;
  /** Pieces read as they come before a stream's pieces are batched: a short stream is never held. */
  private readonly readAtOnce: number;
  private pieces = 0;
  /** Held pieces are being read: a judgement ends the request at its piece's time. */
  private reading = false;
  /** performance.now() when the end, an error or a cancel came (-1: not yet). */
  private stopAt = -1;
  // A stream's per-event figures live here, next to the handler's other fields, and go into the
  // outcome once, at its end: an event touches this object, not the outcome's forty fields too
  // (live, each event meets cold caches: the bench's "caches turned over" figure). Times are -1
  // until set (performance.now() is never negative).
  private firstEventAt = -1;
  private firstContentAt = -1;
  private secondContentAt = -1;
  private lastContentAt = -1;
  private firstAnswerAt = -1;
  private tokenEvents = 0;
  private contentChunks = 0;
  private contentReads = 0;
  private outputChars = 0;
  private reasoningChunks = 0;
  private reply: string | undefined;
  private replyHead: string | undefined;
  private completionId: string | undefined;
  private readonly gaps: GapTally;
  private readonly allGaps: number[] | undefined;
  private readonly cancelAfter: LeanRequest['cancelAfter'];
  private jsonParts: Buffer[] | undefined;
  private jsonBytes = 0;
  private done = false;
  private readonly sample: boolean;
  private readonly capped: boolean;

  constructor(req: LeanRequest, private readonly onDone: (o: Outcome) => void) {
    this.sample = req.sample;
    this.capped = req.capped === true;
    this.cancelAfter = req.cancelAfter;
    // A client that goes away at its first token must see that token as it comes.
    this.readAtOnce = req.cancelAfter === 'first-token' ? Infinity : BATCH_PIECES;
    // Every field from birth, in one order: an outcome keeps one hidden class whatever it
    // meets, so the code that reads outcomes sees one shape, not a dozen.
    this.outcome = {
      seq: req.seq, route: req.route, key: req.key, stream: req.stream,
      intendedAt: req.intendedAt, sentAt: 0, wireAt: undefined, headersAt: undefined,
      firstEventAt: undefined, firstContentAt: undefined, secondContentAt: undefined, firstAnswerAt: undefined,
      queueMs: undefined, reasoningChunks: undefined, lastContentAt: undefined, endAt: 0, status: undefined,
      headers: req.keepHeaders ? {} : undefined, errorBody: undefined,
      contentChunks: 0, tokenEvents: 0, outputChars: 0,
      usageTokens: undefined, usagePromptTokens: undefined, usageCachedTokens: undefined,
      reply: req.keepReply ? '' : undefined, replyHead: req.work?.canary ? '' : undefined,
      completionId: undefined, contentReads: undefined, gaps: new GapTally(), allGaps: req.keepGaps ? [] : undefined,
      work: req.work, tokens: undefined, events: 0, ok: false, failure: undefined, failureDetail: undefined, schemaChecked: req.sample,
    };
    this.gaps = this.outcome.gaps;
    this.allGaps = this.outcome.allGaps;
    this.reply = this.outcome.reply;
    this.replyHead = this.outcome.replyHead;
  }

  // --- undici handler -----------------------------------------------------------------

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.outcome.wireAt ??= performance.now();
    if (this.cancelled) controller.abort(this.cancelled);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.finished || statusCode < 200) return; // 1xx: the real answer follows
    const o = this.outcome;
    o.headersAt = performance.now();
    o.status = statusCode;
    const contentType = String(headers['content-type'] ?? '');
    if (statusCode >= 300 || o.headers) o.headers = flatten(headers);
    if (statusCode >= 300) {
      this.jsonParts = [];
      return;
    }
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      // We never ask for compression; a compressed answer cannot be read as it is.
      this.fail('bad_body', `Content-Encoding ${String(encoding)} although the request did not accept it`);
      return;
    }
    if (o.stream) {
      if (!/^text\/event-stream/i.test(contentType)) {
        this.fail('bad_body', `stream answered with Content-Type ${contentType || '(none)'}, not text/event-stream`);
        return;
      }
      this.reader = new SseScan((data) => this.onEvent(data));
      this.chunks = new ChunkParser();
      this.snapshots = new DeltaSnapshotWatch();
    } else {
      if (!/json/i.test(contentType)) {
        this.fail('bad_body', `answered with Content-Type ${contentType || '(none)'}, not JSON`);
        return;
      }
      this.jsonParts = [];
    }
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.reader) return this.hold(chunk);
    if (this.jsonParts) {
      this.jsonBytes += chunk.length;
      const cap = this.outcome.status! >= 300 ? MAX_ERROR_BODY : MAX_JSON_BYTES;
      if (this.jsonBytes <= cap) this.jsonParts.push(chunk);
      else if (this.outcome.status! < 300) this.fail('bad_body', `body larger than ${MAX_JSON_BYTES} bytes`);
    }
  }

  onResponseEnd(): void {
    if (this.finished) return;
    const o = this.outcome;
    if (o.status === undefined) return this.fail('other', 'response ended without a status');
    if (o.status >= 300) {
      o.errorBody = Buffer.concat(this.jsonParts ?? []).toString('utf8').slice(0, MAX_ERROR_BODY);
      return this.finish();
    }
    if (this.reader) {
      this.stopAt = performance.now();
      this.readHeld();
      if (this.finished) return;
      this.reader.end();
      o.events = this.reader.events;
      if (this.reader.problems.length > 0) return this.fail('bad_body', `SSE: ${this.reader.problems[0]!.detail}`);
      if (!this.done) return this.fail('incomplete_stream', `stream closed without data: [DONE] after ${this.reader.events} events`);
      // EV-4's scope, as the fuzz oracle states it: a capped request may spend its tokens on hidden reasoning and send no content.
      if (this.contentChunks === 0 && !this.capped) return this.fail('bad_body', 'stream carried no content');
      const snapshots = this.snapshots?.finding();
      if (snapshots) return this.fail('bad_body', `stream breaks EV-12: ${describeSnapshots(snapshots)}`);
      o.ok = true;
      return this.finish();
    }
    this.checkJson();
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    this.stopAt = performance.now();
    this.readHeld();
    if (this.finished) return;
    const o = this.outcome;
    const code = (err as { code?: string }).code ?? '';
    if (err === this.cancelled || code === 'UND_ERR_ABORTED') {
      return this.fail(err.message === 'timeout' ? 'timeout' : 'aborted', err.message === 'timeout' ? 'no complete answer within the time limit' : 'stopped by the driver');
    }
    if (code === 'ECONNREFUSED') return this.fail('refused', 'connection refused');
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return this.fail('timeout', code);
    if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED') {
      return o.status === undefined
        ? this.fail('dropped', 'connection closed without a response')
        : this.fail('reset', `connection lost during the ${o.stream ? 'stream' : 'body'}`);
    }
    this.fail('other', `${code ? code + ': ' : ''}${err.message}`);
  }

  // --- driver side -------------------------------------------------------------------

  /** Ends the request now (time limit or stop); the outcome is reported at once. */
  cancel(why: 'timeout' | 'aborted' | 'cancelled'): void {
    this.stopAt = performance.now();
    this.readHeld();
    if (this.finished) return;
    const reason = new Error(why);
    this.cancelled = reason;
    this.fail(why, why === 'timeout' ? 'no complete answer within the time limit' : why === 'cancelled' ? 'the client went away on purpose (--cancel-share)' : 'stopped by the driver');
    this.controller?.abort(reason);
  }

  /**
   * A stream's piece, kept with its arrival time and read with the next ones: live, undici,
   * Node and the kernel run between two pieces of one stream, so each piece read at once meets
   * this stream's reader, parser and watches cold; read in a batch, it meets them once per
   * batch. Every piece is still read, with the time it came (the figures are the same). The
   * first BATCH_PIECES are read as they come: held, a short stream cost more than it saved.
   */
  private hold(chunk: Buffer): void {
    const n = chunk.length;
    if (this.pieces++ < this.readAtOnce || n > BATCH_BYTES) {
      this.readHeld();
      if (this.finished) return;
      this.pieceAt = performance.now();
      this.reader!.push(chunk);
      return;
    }
    if (this.heldBytes + n > BATCH_BYTES) {
      this.readHeld();
      if (this.finished) return;
    }
    if (this.held === undefined) {
      this.held = Buffer.allocUnsafe(BATCH_BYTES);
      this.heldEnds = [];
      this.heldAt = [];
    }
    chunk.copy(this.held, this.heldBytes);
    this.heldBytes += n;
    this.heldEnds![this.heldCount] = this.heldBytes;
    this.heldAt![this.heldCount] = performance.now();
    if (++this.heldCount >= BATCH_PIECES) this.readHeld();
  }

  /** Reads the held pieces, each at the time it came. */
  private readHeld(): void {
    const count = this.heldCount;
    if (count === 0) return;
    this.heldCount = 0;
    this.heldBytes = 0;
    const held = this.held!;
    const ends = this.heldEnds!;
    const at = this.heldAt!;
    let start = 0;
    this.reading = true;
    for (let i = 0; i < count && !this.finished; i++) {
      this.pieceAt = at[i]!;
      this.reader!.push(held.subarray(start, ends[i]));
      start = ends[i]!;
    }
    this.reading = false;
  }

  /**
   * One SSE event's data. Every payload is read as JSON.parse reads it (chunk-parser.ts
   * reuses the previous parse where only the text changed), so "every payload parses" and
   * "no error event" stay checked on every event; the full chunk schema runs on the
   * sampled streams only.
   */
  private onEvent(data: string): void {
    if (this.finished) return;
    const now = this.pieceAt;
    if (this.firstEventAt < 0) this.firstEventAt = now;
    if (this.done) return this.fail('bad_body', 'data after [DONE]');
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: ChunkLike;
    try {
      chunk = this.chunks!.parse(data) as ChunkLike;
    } catch {
      return this.fail('bad_body', `chunk is not JSON: ${describe(data, 80)}`);
    }
    if (chunk === null || typeof chunk !== 'object') return this.fail('bad_body', `chunk is not an object: ${describe(data, 80)}`);
    if (chunk.error !== undefined) return this.fail('bad_body', `error event in the stream: ${describe(chunk.error, 120)}`);
    if (this.sample) {
      const v = validate('chat-completion-chunk', chunk);
      if (!v.valid) return this.fail('bad_body', `chunk breaks ${v.errors[0]!.clause}: ${v.errors[0]!.message}`);
    }
    this.snapshots?.pushChunk(chunk);
    if (this.completionId === undefined && typeof (chunk as { id?: unknown }).id === 'string') this.completionId = (chunk as { id: string }).id;
    const delta = chunk.choices?.[0]?.delta;
    // vLLM sends delta.reasoning (its current field), DeepSeek and older vLLM reasoning_content.
    if (delta) this.output(delta.content, typeof delta.reasoning === 'string' && delta.reasoning.length > 0 ? delta.reasoning : delta.reasoning_content, Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0, now);
    if (this.finished) return;
    this.usage(chunk.usage);
  }

  /** One chunk's output: its content, its reasoning, whether it carried tool-call deltas. */
  private output(content: unknown, reasoning: unknown, toolCalls: boolean, now: number): void {
    const hasContent = typeof content === 'string' && content.length > 0;
    const hasReasoning = typeof reasoning === 'string' && reasoning.length > 0;
    // Reasoning (vLLM, DeepSeek) and tool-call deltas are output the model generated: they time tokens too.
    if (hasContent || hasReasoning || toolCalls) {
      if (this.firstContentAt < 0) {
        this.firstContentAt = now;
        if (this.cancelAfter === 'first-token') return this.cancel('cancelled');
      } else {
        if (this.secondContentAt < 0) this.secondContentAt = now;
        this.gaps.add(now - this.lastContentAt);
        this.allGaps?.push(now - this.lastContentAt);
      }
      this.lastContentAt = now;
      this.tokenEvents++;
    }
    if (hasContent) {
      if (this.firstAnswerAt < 0) this.firstAnswerAt = now;
      this.contentChunks++;
      if (now !== this.lastContentRead) { this.contentReads++; this.lastContentRead = now; }
      if (this.replyHead !== undefined && this.replyHead.length < HEAD_CHARS) this.replyHead += content.slice(0, HEAD_CHARS);
      this.outputChars += content.length;
      if (this.reply !== undefined) this.reply += content;
    }
    if (hasReasoning) {
      this.reasoningChunks++;
      this.outputChars += reasoning.length;
      if (this.reply !== undefined) this.reply += reasoning;
    }
  }

  private checkJson(): void {
    const o = this.outcome;
    let body: CompletionLike;
    const text = Buffer.concat(this.jsonParts ?? []).toString('utf8');
    try {
      body = JSON.parse(text) as CompletionLike;
    } catch {
      return this.fail('bad_body', `body is not JSON: ${describe(text, 80)}`);
    }
    // Cheap checks on every body; the full schema on the sampled ones.
    const content = body?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') return this.fail('bad_body', 'choices[0].message.content is not a string');
    if (this.sample) {
      const v = validate('chat-completion', body);
      if (!v.valid) return this.fail('bad_body', `body breaks ${v.errors[0]!.clause}: ${v.errors[0]!.message}`);
    }
    const now = performance.now();
    o.firstContentAt = now;
    o.firstAnswerAt = now;
    o.lastContentAt = now;
    o.contentChunks = 1;
    o.tokenEvents = 1;
    o.outputChars = content.length;
    if (o.reply !== undefined) o.reply = content;
    if (o.replyHead !== undefined) o.replyHead = content.slice(0, HEAD_CHARS);
    o.contentReads = 1;
    if (typeof (body as { id?: unknown }).id === 'string') o.completionId = (body as { id: string }).id;
    this.usage(body.usage);
    o.ok = true;
    this.finish();
  }

  private usage(u: UsageLike | null | undefined): void {
    if (!u) return;
    const cached = u.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') this.outcome.usageCachedTokens = cached;
    if (typeof u.completion_tokens === 'number') this.outcome.usageTokens = u.completion_tokens;
    if (typeof u.prompt_tokens === 'number') this.outcome.usagePromptTokens = u.prompt_tokens;
  }

  private fail(kind: FailureKind, detail: string): void {
    if (this.finished) return;
    this.outcome.failure = kind;
    this.outcome.failureDetail = detail;
    this.outcome.ok = false;
    // Stop reading a body that is already judged.
    if (!this.cancelled && this.controller && !this.controller.aborted && kind === 'bad_body') {
      this.cancelled = new Error('judged');
      this.controller.abort(this.cancelled);
    }
    this.finish();
  }

  /** The stream's per-event figures into its outcome (once, at its end). */
  private streamFigures(o: Outcome): void {
    const at = (t: number) => (t < 0 ? undefined : t);
    o.firstEventAt = at(this.firstEventAt);
    o.firstContentAt = at(this.firstContentAt);
    o.secondContentAt = at(this.secondContentAt);
    o.lastContentAt = at(this.lastContentAt);
    o.firstAnswerAt = at(this.firstAnswerAt);
    o.tokenEvents = this.tokenEvents;
    o.contentChunks = this.contentChunks;
    o.contentReads = this.contentReads > 0 ? this.contentReads : undefined;
    o.outputChars = this.outputChars;
    o.reasoningChunks = this.reasoningChunks > 0 ? this.reasoningChunks : undefined;
    o.reply = this.reply;
    o.replyHead = this.replyHead;
    o.completionId = this.completionId;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    // A held piece judged ends the request when it came; the end, an error or a cancel when it came.
    this.outcome.endAt = this.reading ? this.pieceAt : this.stopAt >= 0 ? this.stopAt : performance.now();
    if (this.outcome.stream) this.streamFigures(this.outcome);
    if (this.reader) this.outcome.events = this.reader.events;
    this.reader = undefined;
    this.held = undefined;
    this.heldEnds = undefined;
    this.heldAt = undefined;
    this.heldCount = 0;
    this.chunks = undefined;
    this.snapshots = undefined;
    this.jsonParts = undefined;
    this.onDone(this.outcome);
  }
}

interface UsageLike { completion_tokens?: unknown; prompt_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null }
interface ChunkLike {
  choices?: Array<{ delta?: { content?: unknown; reasoning?: unknown; reasoning_content?: unknown; tool_calls?: unknown } }>;
  usage?: UsageLike | null;
  error?: unknown;
}
interface CompletionLike {
  choices?: Array<{ message?: { content?: unknown } }>;
  usage?: UsageLike;
}

function flatten(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * Through a forward proxy (HTTPS_PROXY/HTTP_PROXY, lib/http/proxy.ts) every request goes on
 * the proxy's agent instead of the pool it is handed (a Pool connects to its origin
 * directly). Set by load/setup/load-target.ts for a remote target a proxy applies to.
 */
let viaProxy: { dispatcher: Dispatcher; origin: string } | undefined;
export function sendThroughProxy(route: { dispatcher: Dispatcher; origin: string } | undefined): void {
  viaProxy = route;
}

/** Sends one request on the dispatcher; the call reports its outcome through onDone. */
export function send(dispatcher: Dispatcher, req: LeanRequest, onDone: (o: Outcome) => void): LeanCall {
  const call = new LeanCall(req, onDone);
  call.outcome.sentAt = performance.now();
  // Only the requests chosen to be cancelled after a time get a timer of their own.
  if (typeof req.cancelAfter === 'number') setTimeout(() => call.cancel('cancelled'), req.cancelAfter).unref?.();
  try {
    if (viaProxy) viaProxy.dispatcher.dispatch({ origin: viaProxy.origin, path: req.path, method: 'POST', headers: req.headers, body: req.body }, call);
    else dispatcher.dispatch({ path: req.path, method: 'POST', headers: req.headers, body: req.body }, call);
  } catch (err) {
    // A closed pool or a header undici refuses: reported like any other failure.
    call.onResponseError(undefined, err as Error);
  }
  return call;
}
