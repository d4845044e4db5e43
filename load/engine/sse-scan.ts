// The load driver's SSE reader: a byte-level fast path in front of the suite's strict
// reader (lib/http/sse-reader.ts), not a second implementation of the framing rules.
//
// Almost every stream a load run reads is made of events of one shape: one `data:`
// line, then a blank line, lines ended by LF or CRLF, valid UTF-8, perhaps `:` comment
// lines between events. For those the fast path finds line ends with Buffer.indexOf,
// checks UTF-8 once per network piece (node:buffer isUtf8, native), and hands each
// payload on as a string; it decodes nothing else and builds no per-line objects.
// The moment a stream leaves that subset (a BOM, a bare CR, any other field such as
// `event:`/`id:`/`retry:`, a malformed line, two data lines in one event, invalid
// UTF-8, bytes left after the last blank line at the end), the stream is handed, from
// the start of the event in progress, to the strict SseReader, which from then on
// judges and parses it exactly as the conformance suite does. So the strict reader
// keeps the one definition of what is legal and what is a problem; this file only
// decides, conservatively, when a stream is so plain that asking it is unnecessary.
// (The events before the hand-over were plain by construction: the strict reader would
// have dispatched the same payloads with no problem.)
import { isUtf8 } from 'node:buffer';
import { SseReader, type SseProblem } from '../../lib/http/sse-reader.ts';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** One blank line: puts a fresh strict reader taking over mid-stream past the stream's start (BOM rule) without dispatching anything. */
const CLEAN_START = Buffer.from('\n');
/** Bytes of an unfinished event the fast path keeps before it hands the stream over. */
const MAX_PENDING = 64 * 1024;

export type PayloadSink = (data: string) => void;

export class SseScan {
  /** Events dispatched so far (fast path and strict reader). */
  events = 0;
  /** Set once the stream left the plain subset: the strict reader reads the rest. */
  private reader: SseReader | undefined;
  /** Bytes of the event in progress (from its first line), when a piece ended inside it. */
  private pending: Buffer | undefined;
  /** In `pending`: where the lines not yet classified start. */
  private scanned = 0;
  /** In `pending`: the data value of the event in progress, -1 if none yet. */
  private dataStart = -1;
  private dataEnd = -1;
  /** Complete events were consumed by the fast path (a hand-over then needs CLEAN_START). */
  private consumed = false;

  constructor(private readonly sink: PayloadSink, private readonly maxProblemsPerKind = 1) {}

  /** True once the strict reader took over (for the bench and the self-tests). */
  get strict(): boolean {
    return this.reader !== undefined;
  }

  /** Problems the strict reader recorded (none while the fast path reads: it hands anything doubtful over). */
  get problems(): readonly SseProblem[] {
    return this.reader?.problems ?? NO_PROBLEMS;
  }

  push(chunk: Buffer): void {
    if (this.reader) return this.strictEvents(this.reader.push(chunk));
    let buf = chunk;
    let from = 0;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      from = this.scanned;
      this.pending = undefined;
      // An event this long is not the plain shape; re-copying it with every piece would be
      // quadratic: the strict reader keeps long lines in parts.
      if (buf.length > MAX_PENDING) return this.handOver(buf, 0);
    }
    // Start of the event in progress within buf (buf always starts at an event start).
    let eventStart = 0;
    const len = buf.length;
    const lastLf = buf.lastIndexOf(LF);
    // Every complete line of this piece must be UTF-8 (the strict reader decodes each
    // line with a fatal decoder); an incomplete tail is checked once it is complete.
    // (The usual piece is whole lines from its first byte: checked as it is, no view made.)
    if (lastLf >= from && !isUtf8(from === 0 && lastLf === len - 1 ? buf : buf.subarray(from, lastLf + 1))) return this.handOver(buf, eventStart);
    let nextCr = buf.indexOf(CR, from);
    let pos = from;
    let dataStart = this.dataStart;
    let dataEnd = this.dataEnd;
    while (pos <= lastLf) {
      const lf = buf.indexOf(LF, pos);
      let end = lf;
      if (nextCr !== -1 && nextCr < lf) {
        if (nextCr !== lf - 1) return this.handOver(buf, eventStart); // a bare CR ends a line too: strict reader
        end = lf - 1; // CRLF
        nextCr = buf.indexOf(CR, lf + 1);
      }
      if (end === pos) {
        // Blank line: dispatch (an event without a data line dispatches nothing, as in the spec).
        if (dataStart >= 0) {
          this.events++;
          this.sink(buf.toString('utf8', dataStart, dataEnd));
          dataStart = -1;
        }
        eventStart = lf + 1;
        this.consumed = true;
      } else {
        const c0 = buf[pos];
        if (c0 !== COLON) {
          // Only `data:` (first in its event) stays on the fast path.
          if (dataStart >= 0 || end - pos < 5 || c0 !== 0x64 || buf[pos + 1] !== 0x61 || buf[pos + 2] !== 0x74 || buf[pos + 3] !== 0x61 || buf[pos + 4] !== COLON) {
            return this.handOver(buf, eventStart);
          }
          dataStart = buf[pos + 5] === SPACE ? pos + 6 : pos + 5;
          dataEnd = end;
        }
      }
      pos = lf + 1;
    }
    // A CR in the incomplete tail that is not its last byte is a bare CR (no LF follows it).
    if (nextCr !== -1 && nextCr < len - 1) return this.handOver(buf, eventStart);
    if (eventStart < len) {
      // Keep the event in progress (a copy: the pool may reuse its buffers).
      this.pending = Buffer.from(buf.subarray(eventStart));
      this.scanned = pos - eventStart;
      this.dataStart = dataStart >= 0 ? dataStart - eventStart : -1;
      this.dataEnd = dataStart >= 0 ? dataEnd - eventStart : -1;
    } else {
      this.dataStart = -1;
      this.dataEnd = -1;
    }
  }

  /** End of the stream: anything left (an unterminated event) is judged by the strict reader. */
  end(): void {
    if (!this.reader && this.pending) {
      const rest = this.pending;
      this.pending = undefined;
      this.handOver(rest, 0);
    }
    this.reader?.end();
  }

  private handOver(buf: Buffer, eventStart: number): void {
    const reader = new SseReader({ maxProblemsPerKind: this.maxProblemsPerKind });
    this.reader = reader;
    this.pending = undefined;
    if (this.consumed) reader.push(CLEAN_START);
    this.strictEvents(reader.push(buf.subarray(eventStart)));
  }

  private strictEvents(events: Array<{ data: string }>): void {
    for (let i = 0; i < events.length; i++) {
      this.events++;
      this.sink(events[i]!.data);
    }
  }
}

const NO_PROBLEMS: readonly SseProblem[] = Object.freeze([]);
