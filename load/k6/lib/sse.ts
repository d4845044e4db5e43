// A strict server-sent-events reader over a whole response body (k6/http hands the
// body over only once the response has ended). Same rules as lib/sse-reader.ts and
// the OpenAI clients: LF, CRLF or lone CR line ends; comment lines ignored; several
// data: lines joined with "\n"; an event is dispatched only by a blank line, so a
// last event without one is lost, as the clients lose it.

export interface SseEvent { data: string; event?: string }

export interface SseParse {
  events: SseEvent[];
  /** Bytes after the last blank line that never formed an event (EV-2). */
  unterminated: boolean;
}

export function parseSse(body: string): SseParse {
  const events: SseEvent[] = [];
  const lines = body.split(/\r\n|\r|\n/);
  // split() leaves one empty string after a final line end; it is not a blank line.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let data: string[] = [];
  let event: string | undefined;
  for (const line of lines) {
    if (line === '') {
      if (data.length > 0) events.push(event === undefined ? { data: data.join('\n') } : { data: data.join('\n'), event });
      data = [];
      event = undefined;
      continue;
    }
    if (line.charAt(0) === ':') continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charAt(0) === ' ') value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  return { events, unterminated: data.length > 0 };
}
