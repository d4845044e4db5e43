// What the xk6-sse extension hands over, put back through the suite's strict framing.
// The extension (v0.1.12) exposes no raw bytes: it reads lines up to each LF and hands
// over, per blank line, an event { id, comment, name, data } (data lines joined with the
// line end they had), and every line it does not recognise as an error
// "unknown event: <the line, line end included>". This module rebuilds the lines those
// stand for and feeds them to the SseTextReader of ./sse.ts (lib/spec/sse-framing.ts), so the
// events a k6 stream yields, and what counts as a problem, are decided by the same rules
// as for the Node driver and the suite:
// - an unrecognised line goes to the framing verbatim: a leading BOM is stripped there
//   (the extension reports the BOM'd first line as unknown), a JSON payload without
//   `data:` is a malformed field, an unknown field is ignored;
// - an "event" the extension made of comment lines or fields alone, without data, is
//   not dispatched (the spec dispatches only events with a data line);
// - the CR of a CRLF line end, which the extension leaves at the end of values, is the
//   line end's, not the value's.
// Out of reach through the extension, and said in docs/K6.md: lone-CR line ends (the
// extension waits for an LF that never comes), a last event cut off without its blank
// line (dropped silently, which shows here as a stream without [DONE]), `retry:`, and
// empty data lines at the end of an event (the extension trims them).
import { SseTextReader, type SseEvent } from './sse.ts';
import type { SseExtensionEvent } from 'k6/x/sse';

const UNKNOWN = 'unknown event: ';

const stripCr = (s: string) => (s.length > 0 && s.charAt(s.length - 1) === '\r' ? s.slice(0, -1) : s);

export class ExtensionFeed {
  private readonly reader = new SseTextReader(5);
  /** Errors the extension raised that are not unrecognised lines: a broken connection, a read error. */
  readonly transportErrors: string[] = [];
  /** Events and unrecognised lines the extension handed over. */
  handed = 0;

  constructor(private readonly onEvent: (ev: SseEvent) => void) {}

  /** One event as the extension parsed it. */
  event(e: SseExtensionEvent): void {
    this.handed++;
    let text = '';
    const comment = e.comment === undefined ? '' : stripCr(String(e.comment));
    if (comment !== '') text += `:${comment}\n`;
    const name = e.name === undefined ? '' : stripCr(String(e.name));
    if (name !== '') text += `event: ${name}\n`;
    const id = e.id === undefined ? '' : stripCr(String(e.id));
    if (id !== '') text += `id: ${id}\n`;
    const data = e.data === undefined ? '' : String(e.data);
    // The extension cannot tell "no data line" from one empty data line; without data
    // the event is what comment-only keep-alives give, and the spec dispatches nothing.
    if (data !== '') for (const line of data.split('\n')) text += `data: ${stripCr(line)}\n`;
    this.feed(`${text}\n`);
  }

  /** One error the extension raised: an unrecognised line goes to the framing; anything else is a transport error. */
  error(message: string): void {
    if (message.indexOf(UNKNOWN) === 0) {
      this.handed++;
      this.feed(message.slice(UNKNOWN.length));
    }
    else this.transportErrors.push(message);
  }

  /** End of stream. */
  end(): { unterminated: boolean; malformed: number } {
    this.reader.end();
    const problems = this.reader.problems;
    return {
      unterminated: problems.some((p) => p.kind === 'unterminated-event'),
      malformed: problems.filter((p) => p.kind === 'malformed-field').length,
    };
  }

  private feed(text: string): void {
    for (const ev of this.reader.push(text)) this.onEvent(ev);
  }
}
