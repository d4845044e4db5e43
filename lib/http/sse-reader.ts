/**
 * Strict server-sent-events reader.
 *
 * Follows the WHATWG HTML "interpreting an event stream" rules, but unlike lenient
 * parsers it also records what was wrong with the stream (`problems`) and what it was
 * made of (`stats`), because a conformance tool has to say why a client would
 * misbehave, not just recover.
 *
 * Design notes (the why):
 * - The stream is split into lines on bytes (CR and LF never occur inside a multi-byte
 *   UTF-8 sequence), and each complete line is decoded on its own. That handles
 *   characters split across network pieces like a streaming decoder would, gives
 *   exact byte offsets, and lets a fatal decoder check each line without losing
 *   decoder state across pieces.
 * - Only the current incomplete line and the event being built are kept, so memory is
 *   bounded by the largest line/event, not by the stream. Problem records and distinct
 *   field names are capped for the same reason (a hostile stream may repeat a bad line
 *   millions of times).
 * - What each decoded line means (fields, comments, dispatch, problems) is the framing
 *   core in lib/spec/sse-framing.ts, which the k6 scripts bundle too: one set of rules for
 *   every engine.
 */

import { SseFraming, type SseEvent, type SseProblem, type SseStats } from '../spec/sse-framing.ts';

// The types and the line-level rules live in the framing core, shared with the k6 bundles.
export { OTHER_FIELDS, type SseEvent, type SseProblem, type SseProblemKind, type SseStats } from '../spec/sse-framing.ts';

export interface SseReaderOptions {
  /** Problems recorded per kind before the rest are summarised in one extra record. Default 100. */
  maxProblemsPerKind?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

export class SseReader {
  /** What a line means, dispatch, problems and stats: the framing core (lib/spec/sse-framing.ts). */
  private readonly framing: SseFraming;
  readonly problems: SseProblem[];
  readonly stats: SseStats;

  // ignoreBOM: lines are decoded one by one, so the decoder must not strip a BOM at the
  // start of every line; the single leading BOM of the stream is stripped by hand.
  private readonly fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly lenientDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly encoder = new TextEncoder();

  // Current incomplete line: copies of its pieces (copies, so the caller may reuse its
  // buffers and we do not pin whole network chunks for a short tail).
  private lineParts: Uint8Array[] = [];
  private lineLength = 0;
  /** Byte offset where the current line starts. */
  private lineStart = 0;
  /** Byte offset of the text of the line last taken (after a stripped BOM). */
  private lineTextOffset = 0;
  /** The previous piece ended with CR: an LF at the start of the next piece belongs to that line end. */
  private afterCr = false;
  private firstLine = true;
  /** A string piece ended in the first half of a surrogate pair; kept for the next piece. */
  private pendingHighSurrogate = '';
  private ended = false;

  constructor(options: SseReaderOptions = {}) {
    this.framing = new SseFraming(options.maxProblemsPerKind ?? 100);
    this.problems = this.framing.problems;
    this.stats = this.framing.stats;
  }

  /** Feeds one piece of the stream; returns the events it completed, in order. */
  push(chunk: Uint8Array | string): SseEvent[] {
    if (this.ended) throw new Error('SseReader: push() after end()');
    const out: SseEvent[] = [];
    if (typeof chunk === 'string') {
      this.pushBytes(this.encodeString(chunk), out);
    } else {
      if (this.pendingHighSurrogate) this.flushSurrogate(out);
      this.pushBytes(chunk, out);
    }
    return out;
  }

  /**
   * Call at end of stream. Never dispatches the incomplete event (the spec discards it);
   * records 'unterminated-event' if anything but comments followed the last blank line.
   */
  end(): SseEvent[] {
    if (this.ended) return [];
    // A held-back lone surrogate becomes U+FFFD; it holds no line end, so it dispatches nothing.
    if (this.pendingHighSurrogate) this.flushSurrogate([]);
    this.ended = true;
    if (this.afterCr) {
      this.afterCr = false;
      this.stats.lineEnds.cr++;
    }
    let tail: string | undefined;
    let tailOffset = 0;
    if (this.lineLength > 0) {
      tail = this.takeLine(EMPTY);
      tailOffset = this.lineTextOffset;
    }
    this.framing.finish(tail, tailOffset);
    return [];
  }

  private encodeString(s: string): Uint8Array {
    if (this.pendingHighSurrogate) {
      s = this.pendingHighSurrogate + s;
      this.pendingHighSurrogate = '';
    }
    const last = s.charCodeAt(s.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      // Its low half may start the next piece; encoding it now would give U+FFFD.
      this.pendingHighSurrogate = s.slice(-1);
      s = s.slice(0, -1);
    }
    return this.encoder.encode(s);
  }

  private flushSurrogate(out: SseEvent[]): void {
    const lone = this.pendingHighSurrogate;
    this.pendingHighSurrogate = '';
    this.pushBytes(this.encoder.encode(lone), out);
  }

  private pushBytes(bytes: Uint8Array, out: SseEvent[]): void {
    const len = bytes.length;
    if (len === 0) return;
    const base = this.stats.bytes;
    this.stats.bytes += len;
    const ends = this.stats.lineEnds;
    let pos = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (bytes[0] === LF) {
        ends.crlf++;
        pos = 1;
        this.lineStart = base + 1;
      } else {
        ends.cr++;
      }
    }
    // Native indexOf for both terminators, each re-searched only once passed, so a
    // piece is scanned in linear time.
    let nextLf = bytes.indexOf(LF, pos);
    let nextCr = bytes.indexOf(CR, pos);
    while (pos < len) {
      if (nextLf !== -1 && nextLf < pos) nextLf = bytes.indexOf(LF, pos);
      if (nextCr !== -1 && nextCr < pos) nextCr = bytes.indexOf(CR, pos);
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (end === -1) break;
      const text = this.takeLine(bytes.subarray(pos, end));
      const offset = this.lineTextOffset;
      if (bytes[end] === LF) {
        ends.lf++;
        pos = end + 1;
      } else if (end + 1 === len) {
        // CR at the end of the piece: the line is complete now (dispatch without
        // waiting), but whether the terminator is CR or CRLF is known only later.
        this.afterCr = true;
        pos = end + 1;
      } else if (bytes[end + 1] === LF) {
        ends.crlf++;
        pos = end + 2;
      } else {
        ends.cr++;
        pos = end + 1;
      }
      this.lineStart = base + pos;
      this.framing.line(text, offset, out);
    }
    if (pos < len) {
      // A copy: a Buffer's slice is a view, and a caller may reuse the bytes it pushed.
      const rest = Uint8Array.prototype.slice.call(bytes, pos);
      this.lineParts.push(rest);
      this.lineLength += rest.length;
    }
  }

  /** Completes the current line with `tail`, strips the stream's BOM, decodes it. */
  private takeLine(tail: Uint8Array): string {
    let line = tail;
    if (this.lineParts.length > 0) {
      // One copy at the end of the line: no quadratic concatenation of long lines.
      line = new Uint8Array(this.lineLength + tail.length);
      let at = 0;
      for (const part of this.lineParts) {
        line.set(part, at);
        at += part.length;
      }
      line.set(tail, at);
      this.lineParts = [];
      this.lineLength = 0;
    }
    let offset = this.lineStart;
    if (this.firstLine) {
      this.firstLine = false;
      if (line.length >= 3 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) {
        line = line.subarray(3);
        offset += 3;
      }
    }
    this.lineTextOffset = offset;
    if (line.length === 0) return '';
    try {
      return this.fatalDecoder.decode(line);
    } catch {
      // Rare path: locate the first bad sequence for the report, then decode leniently
      // (U+FFFD) as the spec's decoder does.
      const at = Math.max(0, firstInvalidUtf8(line));
      const bad = Array.from(line.subarray(at, at + 4), (b) => b.toString(16).toUpperCase().padStart(2, '0'));
      this.framing.record(
        'invalid-utf8',
        `bytes that are not UTF-8 (${bad.join(' ')}) at byte ${offset + at}; decoded as U+FFFD`,
        offset + at,
      );
      return this.lenientDecoder.decode(line);
    }
  }

}

/** Parses a whole stream, given at once or as pieces. */
export function parseSse(input: Uint8Array | string | Array<Uint8Array | string>): {
  events: SseEvent[];
  problems: SseProblem[];
  stats: SseStats;
} {
  const reader = new SseReader();
  const events: SseEvent[] = [];
  for (const piece of Array.isArray(input) ? input : [input]) {
    for (const ev of reader.push(piece)) events.push(ev);
  }
  for (const ev of reader.end()) events.push(ev);
  return { events, problems: reader.problems, stats: reader.stats };
}

/** Index of the first byte that starts an invalid UTF-8 sequence (WHATWG rules), -1 if valid. */
function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0; // overlong
      else if (c === 0xed) hi = 0x9f; // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90; // overlong
      else if (c === 0xf4) hi = 0x8f; // above U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      if (i + k >= n) return i; // truncated sequence
      const d = b[i + k]!;
      if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}
