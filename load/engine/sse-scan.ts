// The load driver's SSE reader: a byte-level fast path in front of the suite's strict
// reader (lib/http/sse-reader.ts), not a second implementation of the framing rules.
//
// Almost every stream a load run reads is made of events of one shape: one `data:`
// line, then a blank line, lines ended by LF or CRLF, valid UTF-8, perhaps `:` comment
// lines between events. For those the fast path finds line ends with Buffer.indexOf,
// decodes each payload once and hands it on as a string (a bare CR or invalid UTF-8 in
// it shows in the decoded text; only such lines and comments have their bytes checked,
// node:buffer isUtf8); it decodes nothing else and builds no per-line objects.
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
  /** The data value of the event in progress (its line is complete), if any. */
  private data: string | undefined;
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
    let pos = from;
    let data = this.data;
    // One native search per data line and one decode per event: a line's bare CR and invalid
    // UTF-8 show in its decoded text ('\r', U+FFFD), so only such rare lines (and comment
    // lines, which are not decoded) have their bytes checked.
    while (pos < len) {
      // A blank line (the usual one after a data line) is seen without a search.
      const lf = buf[pos] === LF ? pos : buf[pos] === CR && buf[pos + 1] === LF ? pos + 1 : buf.indexOf(LF, pos);
      if (lf === -1) break;
      const end = lf > pos && buf[lf - 1] === CR ? lf - 1 : lf;
      if (end === pos) {
        // Blank line: dispatch (an event without a data line dispatches nothing, as in the spec).
        if (data !== undefined) {
          this.events++;
          this.sink(data);
          data = undefined;
        }
        eventStart = lf + 1;
        this.consumed = true;
      } else if (buf[pos] === COLON) {
        if (!plainLine(buf, pos, end)) return this.handOver(buf, eventStart);
      } else {
        // Only `data:` (first in its event) stays on the fast path.
        if (data !== undefined || end - pos < 5 || buf[pos] !== 0x64 || buf[pos + 1] !== 0x61 || buf[pos + 2] !== 0x74 || buf[pos + 3] !== 0x61 || buf[pos + 4] !== COLON) {
          return this.handOver(buf, eventStart);
        }
        data = buf.toString('utf8', end > pos + 5 && buf[pos + 5] === SPACE ? pos + 6 : pos + 5, end);
        if ((data.indexOf('\r') !== -1 || data.indexOf('\uFFFD') !== -1) && !plainLine(buf, pos, end)) return this.handOver(buf, eventStart);
      }
      pos = lf + 1;
    }
    // A CR in the incomplete tail that is not its last byte is a bare CR (no LF follows it).
    if (pos < len) {
      const cr = buf.indexOf(CR, pos);
      if (cr !== -1 && cr < len - 1) return this.handOver(buf, eventStart);
    }
    this.data = data;
    // Keep the event in progress (a copy: the pool may reuse its buffers).
    if (eventStart < len) {
      this.pending = Buffer.from(buf.subarray(eventStart));
      this.scanned = pos - eventStart;
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
    this.data = undefined;
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

/** A complete line without CR whose bytes are UTF-8 (what the strict reader reads as one line without a problem). */
function plainLine(buf: Buffer, start: number, end: number): boolean {
  const cr = buf.indexOf(CR, start);
  return (cr === -1 || cr >= end) && isUtf8(buf.subarray(start, end));
}

const NO_PROBLEMS: readonly SseProblem[] = Object.freeze([]);
