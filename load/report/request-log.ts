// requests.jsonl: one line per request (and per arrival the driver could not send),
// streamed to disk as the run goes, so a result can be audited, re-cut or lined up with
// the server's logs. Lines are buffered and written with writeSync (at 64 KiB, every
// 250 ms and at the end, also on process exit), so memory stays flat and an
// interrupted run keeps every line it had. Keys never appear: a record names the key
// by its label ('main'), and free text goes through redact().
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { redact } from '../../lib/run/redact.ts';
import { round3 } from '../engine/histogram.ts';
import type { Outcome } from '../engine/lean-client.ts';

const FLUSH_BYTES = 64 * 1024;
const ITL_PERCENTILES = [50, 95, 100] as const;

export class RequestLog {
  readonly path: string;
  private fd: number | undefined;
  private buffer: string[] = [];
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = () => this.flush();
  lines = 0;

  private clockStarted = false;

  /** @param t0 performance.now() of the run's start: offsets in the file count from it (or from `startClock`'s). */
  constructor(dir: string, private t0: number) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, 'requests.jsonl');
    this.fd = openSync(this.path, 'w');
    this.timer = setInterval(() => this.flush(), 250);
    this.timer.unref();
    process.on('exit', this.onExit);
  }

  /** The measured run starts (the first phase's driver, after the unmeasured lone requests): offsets count from here. */
  startClock(at: number): void {
    if (this.clockStarted) return;
    this.clockStarted = true;
    this.t0 = at;
  }

  outcome(o: Outcome, phase?: string): void {
    // Filled field by field in the line's order (no spread objects: it runs once per request).
    const rec: Record<string, unknown> = { seq: o.seq };
    if (phase) rec.phase = phase;
    rec.key = o.key;
    rec.route = o.route;
    if (o.work?.session !== undefined) {
      rec.session = o.work.session;
      rec.turn = o.work.turn;
    }
    rec.intended_ms = this.ms(o.intendedAt);
    rec.sent_ms = this.ms(o.sentAt);
    rec.sent_at = new Date(performance.timeOrigin + o.sentAt).toISOString();
    if (o.wireAt !== undefined) rec.wire_ms = this.ms(o.wireAt);
    rec.status = o.status ?? null;
    rec.ok = o.ok;
    rec.error = o.failure ?? null;
    if (o.failureDetail && !o.ok) rec.error_detail = redact(o.failureDetail).slice(0, 200);
    // Where a slow first token went: waiting for a connection (wire_ms), to the headers, or after them.
    rec.headers_ms = o.headersAt !== undefined ? round3(o.headersAt - o.intendedAt) : null;
    rec.ttft_ms = o.stream && o.firstContentAt !== undefined ? round3(o.firstContentAt - o.intendedAt) : null;
    rec.e2e_ms = o.endAt > 0 ? round3(o.endAt - o.intendedAt) : null;
    if (o.queueMs !== undefined) rec.client_queue_ms = round3(o.queueMs);
    if (o.stream) {
      const g = o.gaps;
      if (g.count === 0) rec.itl = null;
      else {
        const [p50, p95, max] = g.percentilesMs(ITL_PERCENTILES);
        rec.itl = { count: g.count, p50_ms: round3(p50!), p95_ms: round3(p95!), max_ms: round3(max!) };
      }
      if (o.allGaps) rec.gaps_ms = o.allGaps.map(round3);
      if (o.secondContentAt !== undefined) rec.ttst_ms = round3(o.secondContentAt - o.intendedAt);
      if (o.reasoningChunks) {
        rec.reasoning_chunks = o.reasoningChunks;
        rec.ttfa_ms = o.firstAnswerAt !== undefined ? round3(o.firstAnswerAt - o.intendedAt) : null;
      }
    }
    const t = o.tokens;
    if (t) {
      rec.prompt_tokens = t.prompt ?? null;
      rec.prompt_tokens_source = t.promptSource;
      if (t.promptSent !== undefined) rec.prompt_tokens_sent = t.promptSent;
      rec.completion_tokens = t.completion ?? null;
      rec.completion_tokens_source = t.completionSource;
    }
    if (o.usageCachedTokens !== undefined) rec.cached_tokens = o.usageCachedTokens;
    if (o.work?.maxTokens !== undefined) rec.max_tokens = o.work.maxTokens;
    this.push(JSON.stringify(rec));
  }

  /** An arrival the driver did not send (the in-flight cap was full). */
  notSent(intendedAt: number, phase?: string): void {
    this.push(JSON.stringify({ seq: null, ...(phase ? { phase } : {}), intended_ms: this.ms(intendedAt), sent_ms: null, status: null, ok: false, error: 'not_sent' }));
  }

  flush(): void {
    if (this.fd === undefined || this.buffer.length === 0) return;
    const text = this.buffer.join('\n') + '\n';
    this.buffer = [];
    this.bytes = 0;
    writeSync(this.fd, text);
  }

  close(): void {
    this.flush();
    clearInterval(this.timer);
    process.off('exit', this.onExit);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private push(line: string): void {
    this.buffer.push(line);
    this.lines++;
    this.bytes += line.length + 1;
    if (this.bytes >= FLUSH_BYTES) this.flush();
  }

  private ms(at: number): number {
    return round3(at - this.t0);
  }
}
