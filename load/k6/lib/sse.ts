// The k6 scripts' server-sent-events reader: the framing core of lib/http/sse-reader.ts
// (lib/spec/sse-framing.ts), bundled in, so a stream read by k6 is judged by the same rules
// as one read by the suite and the Node load driver (LF, CRLF or lone CR line ends, one
// leading BOM stripped, comment lines ignored, several data: lines joined with "\n", an
// event dispatched only by a blank line). k6 hands over text, not bytes, so the text
// reader splits the lines; what the lines mean is decided in the one core.
import { SseTextReader, type SseEvent, type SseProblem } from '../../../lib/spec/sse-framing.ts';

export type { SseEvent, SseProblem };
export { SseTextReader };

export interface SseParse {
  events: SseEvent[];
  problems: SseProblem[];
  /** Lines after the last blank line that never formed an event (EV-2). */
  unterminated: boolean;
}

/** A whole response body (k6/http hands it over once the response has ended). */
export function parseSse(body: string): SseParse {
  const reader = new SseTextReader(5);
  const events = reader.push(body);
  reader.end();
  return { events, problems: reader.problems, unterminated: reader.problems.some((p) => p.kind === 'unterminated-event') };
}
