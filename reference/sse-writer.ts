// Frames payloads as server-sent events and puts them on the wire, byte by byte
// the way the variants (line ends, comments, extra fields, gzip, split writes) and
// the framing defects ask. The payload sequence itself comes from stream-plan.ts.
import { createGzip, type Gzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { baseHeaders, contentType, type RequestContext } from './request-context.ts';
import { sleep, untilAborted } from './latency.ts';

/** One step of a planned stream (stream-plan.ts makes them, this writer plays them). */
export type StreamStep =
  | { kind: 'data'; payload: string }
  /** Stop sending but keep the response open until the client or the server gives up. */
  | { kind: 'hang' };

export const DONE = '[DONE]';

export interface StreamTiming {
  ttftMs: number;
  itlMs: number;
  /** Pause once, mid-stream, for this long (0 = no stall). */
  stallMs: number;
}

export class SseWriter {
  private readonly eol: string;
  private sink: Writable;
  private gzip: Gzip | undefined;
  private events = 0;

  constructor(private readonly ctx: RequestContext) {
    this.eol = ctx.variant('sse-cr') ? '\r' : ctx.variant('sse-crlf') || ctx.variant('split-writes') ? '\r\n' : '\n';
    this.sink = ctx.res;
  }

  /** Status line and headers go out at once; the first event may come much later (ttft). */
  start(): void {
    const { ctx } = this;
    const headers: Record<string, string> = {
      ...baseHeaders(ctx),
      'Content-Type': contentType(ctx, ctx.defect('stream-wrong-content-type') ? 'text/plain' : 'text/event-stream'),
      // Stryker disable next-line StringLiteral: [not-sent] Content-Type
      'Cache-Control': 'no-cache',
      // Stryker disable next-line StringLiteral: [not-sent] X-Accel-Buffering
      'X-Accel-Buffering': 'no',
    };
    if (ctx.variant('gzip') && ctx.acceptsGzip()) {
      headers['Content-Encoding'] = 'gzip';
      headers['Vary'] = 'Accept-Encoding';
      this.gzip = createGzip();
      this.gzip.pipe(ctx.res);
      this.sink = this.gzip;
    }
    ctx.res.writeHead(200, headers);
    ctx.res.flushHeaders();
  }

  /** One event's bytes, framing variants and defects applied. */
  frame(payload: string): string {
    const { ctx, eol } = this;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: [gate] stream-last-event-unterminated stream-single-newlines +2
    const isDone = payload === DONE;
    let out = '';
    if (this.events === 0 && ctx.variant('sse-comments')) out += `: reference stream${eol}${eol}`;
    if (ctx.defect('stream-named-event')) out += `event: chunk${eol}`;
    else if (ctx.variant('sse-named-event') && !isDone) out += `event: message${eol}`;
    if (ctx.variant('sse-fields')) {
      out += `id: ${this.events + 1}${eol}`;
      if (this.events === 0) out += `retry: 3000${eol}`;
    }
    if (ctx.defect('stream-no-data-prefix')) out += `${payload}${eol}`;
    else out += `${ctx.variant('sse-no-space') ? 'data:' : 'data: '}${payload}${eol}`;
    // The blank line that dispatches the event, unless a framing defect drops it.
    // stream-single-newlines keeps only the last blank line, so all data lines merge into one payload.
    const unterminated = isDone ? ctx.defect('stream-last-event-unterminated') : ctx.defect('stream-single-newlines');
    if (!unterminated) out += eol;
    if (ctx.variant('sse-comments') && !isDone) out += `: ping${eol}`;
    // Stryker disable next-line UpdateOperator: [gate] sse-comments sse-fields
    this.events++;
    return out;
  }

  async send(payload: string): Promise<void> {
    const bytes = this.frame(payload);
    if (!this.ctx.variant('split-writes')) return this.write(bytes);
    // Stryker disable all: [gate] split-writes
    for (const [i, piece] of splitPieces(bytes).entries()) {
      if (i > 0) await sleep(2 + (i % 2) * 3, this.ctx.signal);
      if (this.ctx.aborted) return;
      await this.write(piece);
    }
    // Stryker restore all
  }

  private async write(text: string): Promise<void> {
    const { ctx } = this;
    if (ctx.aborted || ctx.res.destroyed) return;
    const ok = this.sink.write(text);
    // Stryker disable all: [gate] gzip
    if (this.gzip) {
      // Z_SYNC_FLUSH after every write: without it gzip would hold events back.
      await new Promise<void>((resolve) => this.gzip!.flush(() => resolve()));
    }
    // Stryker restore all
    // Stryker disable all: [not-sent] socket buffer
    if (!ok && !ctx.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.sink.off('drain', done);
          ctx.signal.removeEventListener('abort', done);
          resolve();
        };
        this.sink.once('drain', done);
        ctx.signal.addEventListener('abort', done, { once: true });
      });
    }
    // Stryker restore all
  }

  end(): Promise<void> {
    const { res } = this.ctx;
    const socket = res.socket; // node detaches it from res before our 'finish' listener runs
    return new Promise((resolve) => {
      if (res.destroyed) return resolve();
      res.once('close', () => resolve());
      res.once('finish', () => {
        // close-after-stream: the socket is closed once the response is sent, with no
        // Connection: close to warn the client (the next request on it fails or reconnects).
        if (this.ctx.defect('close-after-stream')) socket?.end();
        resolve();
      });
      this.sink.end();
    });
  }

  /** Plays a planned stream with the given timing; resolves when done or aborted. */
  async play(steps: StreamStep[], timing: StreamTiming): Promise<void> {
    const { signal } = this.ctx;
    this.start();
    const dataSteps = steps.filter((s) => s.kind === 'data').length;
    // Stryker disable next-line all: [delay-0] delays
    const stallAt = timing.stallMs > 0 ? Math.max(1, Math.floor(dataSteps / 2)) : -1;
    let sent = 0;
    for (const step of steps) {
      if (signal.aborted) return;
      if (step.kind === 'hang') {
        await untilAborted(signal);
        return;
      }
      await sleep(sent === 0 ? timing.ttftMs : timing.itlMs, signal);
      if (sent === stallAt) await sleep(timing.stallMs, signal);
      if (signal.aborted) return;
      await this.send(step.payload);
      sent++;
    }
    await this.end();
  }
}

/**
 * 2-3 pieces per event: the first cut falls between a CR and its LF when there is
 * one (the case naive parsers get wrong), the second inside the data payload.
 */
// Stryker disable all: [gate] split-writes
export function splitPieces(bytes: string): string[] {
  const cuts = new Set<number>();
  const crlf = bytes.indexOf('\r\n');
  if (crlf !== -1) cuts.add(crlf + 1);
  const data = bytes.indexOf('data:');
  if (data !== -1) cuts.add(data + Math.max(3, Math.floor((bytes.length - data) / 2)));
  if (cuts.size === 0) cuts.add(Math.floor(bytes.length / 2));
  const sorted = [...cuts].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const pieces: string[] = [];
  let prev = 0;
  for (const c of sorted) {
    if (c > prev) pieces.push(bytes.slice(prev, c));
    prev = c;
  }
  pieces.push(bytes.slice(prev));
  return pieces;
}
// Stryker restore all
