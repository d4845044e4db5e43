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
 */

export interface SseEvent {
  /** Value of the last `event:` field of this event, if any (an empty value gives ''). */
  event?: string;
  /** The data lines joined with '\n'. */
  data: string;
  /**
   * The stream's last event ID when the event was dispatched. As in the spec (and a
   * browser's `lastEventId`) it persists across events until an `id:` field changes it;
   * undefined while no `id:` was seen.
   */
  id?: string;
  /** The stream's reconnection time (last valid `retry:`) when the event was dispatched; persists like `id`. */
  retry?: number;
  /** Number of `data:` lines in this event. */
  dataLines: number;
  /** Byte offset in the stream of the event's first non-comment line. */
  offset: number;
}

export type SseProblemKind =
  | 'unterminated-event' // bytes/fields after the last blank line at end of stream (event would be dropped)
  | 'malformed-field' // a non-comment line whose field name is not a token (e.g. JSON sent without `data:`)
  | 'invalid-utf8'; // bytes that are not UTF-8; decoded as U+FFFD

export interface SseProblem {
  kind: SseProblemKind;
  detail: string;
  /** Byte offset in the stream. */
  offset: number;
}

export interface SseStats {
  bytes: number;
  lineEnds: { lf: number; crlf: number; cr: number };
  comments: number;
  /** Count per field name, including unknown ones (malformed names are not counted, see problems). */
  fields: Record<string, number>;
  events: number;
}

export interface SseReaderOptions {
  /** Problems recorded per kind before the rest are summarised in one extra record. Default 100. */
  maxProblemsPerKind?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const TOKEN = /^[A-Za-z0-9_\-.]+$/;
const DIGITS = /^[0-9]+$/;
const MAX_DETAIL_CHARS = 200;
/** Distinct field names kept in stats.fields; the rest are counted under OTHER_FIELDS. */
const MAX_FIELD_NAMES = 100;
/** Not a token, so it cannot collide with a real field name. */
export const OTHER_FIELDS = '(other)';
const EMPTY = new Uint8Array(0);

export class SseReader {
  readonly problems: SseProblem[] = [];
  readonly stats: SseStats = {
    bytes: 0,
    lineEnds: { lf: 0, crlf: 0, cr: 0 },
    comments: 0,
    // Null prototype: field names come from the wire ('__proto__' must be a plain key).
    fields: Object.create(null) as Record<string, number>,
    events: 0,
  };

  // ignoreBOM: lines are decoded one by one, so the decoder must not strip a BOM at the
  // start of every line; the single leading BOM of the stream is stripped by hand.
  private readonly fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly lenientDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly encoder = new TextEncoder();
  private readonly maxProblemsPerKind: number;
  private readonly problemCounts = new Map<SseProblemKind, number>();
  private readonly problemSummaries = new Map<SseProblemKind, SseProblem>();
  private distinctFieldNames = 0;

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

  // Event being built.
  private dataParts: string[] = [];
  private eventType: string | undefined;
  /** Offset of the first non-comment line since the last blank line, -1 if none. */
  private eventOffset = -1;
  private lastEventId: string | undefined;
  private reconnectionTime: number | undefined;

  constructor(options: SseReaderOptions = {}) {
    this.maxProblemsPerKind = options.maxProblemsPerKind ?? 100;
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
    const tailIsContent = tail !== undefined && tail.length > 0 && tail.charCodeAt(0) !== COLON;
    if (this.eventOffset >= 0 || tailIsContent) {
      const what: string[] = [];
      const n = this.dataParts.length;
      if (n > 0) what.push(`${n} data line${n === 1 ? '' : 's'}`);
      else if (this.eventOffset >= 0) what.push('lines that carry no data');
      if (tailIsContent) what.push(`an incomplete last line: ${truncate(tail!)}`);
      this.record(
        'unterminated-event',
        `stream ended without a blank line after ${what.join(' and ')}; ` +
          'the event is not dispatched (per the spec; openai-node 4-6 drop it silently)',
        this.eventOffset >= 0 ? this.eventOffset : tailOffset,
      );
    }
    this.resetEvent();
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
      this.processLine(text, offset, out);
    }
    if (pos < len) {
      const rest = bytes.slice(pos);
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
      this.record(
        'invalid-utf8',
        `bytes that are not UTF-8 (${bad.join(' ')}) at byte ${offset + at}; decoded as U+FFFD`,
        offset + at,
      );
      return this.lenientDecoder.decode(line);
    }
  }

  private processLine(text: string, offset: number, out: SseEvent[]): void {
    if (text.length === 0) {
      this.dispatch(out);
      return;
    }
    if (text.charCodeAt(0) === COLON) {
      this.stats.comments++;
      return;
    }
    if (this.eventOffset < 0) this.eventOffset = offset;
    const colon = text.indexOf(':');
    let name: string;
    let value: string;
    if (colon === -1) {
      name = text;
      value = '';
    } else {
      name = text.slice(0, colon);
      // Exactly one space after the colon is part of the syntax, not the value.
      value = text.slice(text.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    }
    if (!TOKEN.test(name)) {
      // The spec ignores it like any unknown field; we say so, since it usually means a
      // payload sent without its `data:` prefix, which clients drop silently.
      const c0 = text.charCodeAt(0);
      const hint = c0 === 0x7b || c0 === 0x5b || c0 === 0x22 ? ' (a JSON payload without a `data:` prefix?)' : '';
      this.record('malformed-field', `line ignored, field name is not a token${hint}: ${truncate(text)}`, offset);
      return;
    }
    this.countField(name);
    switch (name) {
      case 'data':
        // Collected in an array and joined at dispatch: no repeated concatenation.
        this.dataParts.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (DIGITS.test(value)) this.reconnectionTime = Number(value);
        break;
      default:
        break; // unknown fields are ignored (but counted)
    }
  }

  private dispatch(out: SseEvent[]): void {
    const n = this.dataParts.length;
    // An empty data buffer means no data line: per the spec nothing is dispatched.
    if (n > 0) {
      // Same keys in the same order for every event (absent ones undefined): one object shape.
      out.push({
        event: this.eventType,
        data: n === 1 ? this.dataParts[0]! : this.dataParts.join('\n'),
        id: this.lastEventId,
        retry: this.reconnectionTime,
        dataLines: n,
        offset: this.eventOffset,
      });
      this.stats.events++;
    }
    this.resetEvent();
  }

  /** Clears the event buffers; the last event ID and reconnection time persist, as in the spec. */
  private resetEvent(): void {
    this.dataParts = [];
    this.eventType = undefined;
    this.eventOffset = -1;
  }

  private countField(name: string): void {
    const fields = this.stats.fields;
    const seen = fields[name];
    if (seen !== undefined) fields[name] = seen + 1;
    else if (this.distinctFieldNames < MAX_FIELD_NAMES) {
      fields[name] = 1;
      this.distinctFieldNames++;
    } else fields[OTHER_FIELDS] = (fields[OTHER_FIELDS] ?? 0) + 1;
  }

  private record(kind: SseProblemKind, detail: string, offset: number): void {
    const count = (this.problemCounts.get(kind) ?? 0) + 1;
    this.problemCounts.set(kind, count);
    if (count <= this.maxProblemsPerKind) {
      this.problems.push({ kind, detail, offset });
      return;
    }
    // Over the cap: one summary record per kind, at the first unrecorded offset.
    let summary = this.problemSummaries.get(kind);
    if (!summary) {
      summary = { kind, detail: '', offset };
      this.problemSummaries.set(kind, summary);
      this.problems.push(summary);
    }
    const more = count - this.maxProblemsPerKind;
    summary.detail = `${more} more ${kind} problem${more === 1 ? '' : 's'} not recorded (the first at this offset); only ${this.maxProblemsPerKind} are kept`;
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

function truncate(s: string): string {
  if (s.length <= MAX_DETAIL_CHARS) return s;
  let cut = MAX_DETAIL_CHARS;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--; // do not split a surrogate pair
  return s.slice(0, cut) + '…';
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
