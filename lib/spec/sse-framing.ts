/**
 * The framing core of the strict server-sent-events reader: what a decoded line means
 * (field, comment, blank line that dispatches), which events are dispatched, what is a
 * problem, and what the stream was made of. One definition for every engine:
 * - lib/http/sse-reader.ts (the suite and the Node load driver) splits bytes into lines and
 *   decodes them, then hands each line here;
 * - the k6 scripts, which get text, not bytes (k6/http's body string, or the lines the
 *   xk6-sse extension hands over), split it with SseTextReader below and hand each line
 *   here too.
 *
 * Plain module on purpose (no Node APIs, no TextDecoder/TextEncoder, ES2017 library
 * only): load/k6 bundles it for k6's runtime.
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

const COLON = 0x3a;
const SPACE = 0x20;
const LF_CHAR = 0x0a;
const CR_CHAR = 0x0d;
const TOKEN = /^[A-Za-z0-9_\-.]+$/;
const DIGITS = /^[0-9]+$/;
const MAX_DETAIL_CHARS = 200;
/** Distinct field names kept in stats.fields; the rest are counted under OTHER_FIELDS. */
const MAX_FIELD_NAMES = 100;
/** Not a token, so it cannot collide with a real field name. */
export const OTHER_FIELDS = '(other)';

/** Line by line: fields, comments, dispatch, problems and stats of one stream. */
export class SseFraming {
  readonly problems: SseProblem[] = [];
  readonly stats: SseStats = {
    bytes: 0,
    lineEnds: { lf: 0, crlf: 0, cr: 0 },
    comments: 0,
    // Null prototype: field names come from the wire ('__proto__' must be a plain key).
    fields: Object.create(null) as Record<string, number>,
    events: 0,
  };

  private readonly problemCounts: Record<string, number> = {};
  private readonly problemSummaries: Record<string, SseProblem> = {};
  private distinctFieldNames = 0;

  // Event being built.
  private dataParts: string[] = [];
  private eventType: string | undefined;
  /** Offset of the first non-comment line since the last blank line, -1 if none. */
  private eventOffset = -1;
  private lastEventId: string | undefined;
  private reconnectionTime: number | undefined;

  constructor(private readonly maxProblemsPerKind = 100) {}

  /** One complete, decoded line (without its line end), starting at byte `offset`; completed events go to `out`. */
  line(text: string, offset: number, out: SseEvent[]): void {
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
        if (value.indexOf('\0') === -1) this.lastEventId = value;
        break;
      case 'retry':
        if (DIGITS.test(value)) this.reconnectionTime = Number(value);
        break;
      default:
        break; // unknown fields are ignored (but counted)
    }
  }

  /**
   * End of stream, with the incomplete last line if any (`tail`, at `tailOffset`). Never
   * dispatches the incomplete event (the spec discards it); records 'unterminated-event'
   * if anything but comments followed the last blank line.
   */
  finish(tail: string | undefined, tailOffset: number): void {
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

  record(kind: SseProblemKind, detail: string, offset: number): void {
    const count = (this.problemCounts[kind] ?? 0) + 1;
    this.problemCounts[kind] = count;
    if (count <= this.maxProblemsPerKind) {
      this.problems.push({ kind, detail, offset });
      return;
    }
    // Over the cap: one summary record per kind, at the first unrecorded offset.
    let summary = this.problemSummaries[kind];
    if (!summary) {
      summary = { kind, detail: '', offset };
      this.problemSummaries[kind] = summary;
      this.problems.push(summary);
    }
    const more = count - this.maxProblemsPerKind;
    summary.detail = `${more} more ${kind} problem${more === 1 ? '' : 's'} not recorded (the first at this offset); only ${this.maxProblemsPerKind} are kept`;
  }
}

/** UTF-8 length of a string (a lone surrogate counts as U+FFFD, 3 bytes, as an encoder writes it). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * The reader for engines that hand over text (k6): splits string pieces into lines on
 * LF, CRLF or lone CR (a CR at the end of a piece waits for the next piece to know
 * whether an LF follows, as the byte reader does), strips the stream's one leading BOM,
 * and hands each line to SseFraming. Offsets and stats.bytes count UTF-8 bytes, so they
 * match the byte reader's on the same stream. Invalid UTF-8 cannot be seen here: the
 * engine already decoded it (as U+FFFD).
 */
export class SseTextReader {
  readonly framing: SseFraming;
  private line = '';
  /** Byte offset where the current line starts. */
  private lineStart = 0;
  private afterCr = false;
  private firstLine = true;
  private ended = false;

  constructor(maxProblemsPerKind = 100) {
    this.framing = new SseFraming(maxProblemsPerKind);
  }

  get problems(): SseProblem[] {
    return this.framing.problems;
  }

  get stats(): SseStats {
    return this.framing.stats;
  }

  /** Feeds one piece of the stream; returns the events it completed, in order. */
  push(text: string): SseEvent[] {
    if (this.ended) throw new Error('SseTextReader: push() after end()');
    const out: SseEvent[] = [];
    const len = text.length;
    if (len === 0) return out;
    const ends = this.framing.stats.lineEnds;
    let pos = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF_CHAR) {
        ends.crlf++;
        pos = 1;
        this.lineStart += 1;
      } else {
        ends.cr++;
      }
    }
    while (pos < len) {
      let end = pos;
      while (end < len) {
        const c = text.charCodeAt(end);
        if (c === LF_CHAR || c === CR_CHAR) break;
        end++;
      }
      if (end === len) break;
      const body = this.line + text.slice(pos, end);
      this.line = '';
      let endLen: number;
      if (text.charCodeAt(end) === LF_CHAR) {
        ends.lf++;
        endLen = 1;
      } else if (end + 1 === len) {
        this.afterCr = true; // CR or CRLF: known with the next piece
        endLen = 1;
      } else if (text.charCodeAt(end + 1) === LF_CHAR) {
        ends.crlf++;
        endLen = 2;
      } else {
        ends.cr++;
        endLen = 1;
      }
      pos = end + endLen;
      const { line, offset } = this.take(body);
      const bodyBytes = utf8Length(body);
      this.lineStart += bodyBytes + endLen;
      this.framing.line(line, offset, out);
    }
    if (pos < len) this.line += text.slice(pos);
    this.framing.stats.bytes = this.lineStart + utf8Length(this.line);
    return out;
  }

  /** End of stream: never dispatches the incomplete event; records 'unterminated-event' as the byte reader does. */
  end(): SseEvent[] {
    if (this.ended) return [];
    this.ended = true;
    if (this.afterCr) {
      this.afterCr = false;
      this.framing.stats.lineEnds.cr++;
    }
    let tail: string | undefined;
    let tailOffset = 0;
    if (this.line.length > 0) {
      const t = this.take(this.line);
      tail = t.line;
      tailOffset = t.offset;
      this.line = '';
    }
    this.framing.finish(tail, tailOffset);
    return [];
  }

  /** Strips the stream's BOM from its first line. */
  private take(body: string): { line: string; offset: number } {
    if (this.firstLine) {
      this.firstLine = false;
      if (body.charCodeAt(0) === 0xfeff) return { line: body.slice(1), offset: this.lineStart + 3 };
    }
    return { line: body, offset: this.lineStart };
  }
}

function truncate(s: string): string {
  if (s.length <= MAX_DETAIL_CHARS) return s;
  let cut = MAX_DETAIL_CHARS;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--; // do not split a surrogate pair
  return s.slice(0, cut) + '…';
}
