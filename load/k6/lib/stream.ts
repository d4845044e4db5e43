// Judges a streamed chat answer from its whole body. k6/http returns a response only
// once it has ended, so per-event timing is out of reach here: the script reports
// http_req_waiting (request sent -> first response byte) as time to first byte and
// the request's whole duration as end-to-end. When the server flushes its headers
// before the first token (the reference does, many gateways do), that first byte is
// the status line, not a token. Per-event timing needs the xk6-sse extension
// (docs/K6.md).
import { check } from 'k6';
import type { Response } from 'k6/http';
import { Trend } from 'k6/metrics';
import { bodyShapeFailures, completionTokens, recordStatus } from './metrics.ts';
import { checkShape, parseJson } from './shape.ts';
import { bodyText, CHECK, header, judgeErrorBody, logProblem, type Tags } from './chat.ts';
import { parseSse } from './sse.ts';

export const STREAM_CHECK = {
  eventStream: 'stream: Content-Type is text/event-stream',
  chunkShape: 'stream: every chunk is a chat.completion.chunk (schema)',
  done: 'stream: ends with data: [DONE]',
  content: 'stream: reply content is non-empty',
  finish: 'stream: exactly one finish_reason',
} as const;

/** http_req_waiting of 2xx streams: time to the first response byte (not the first token, see above). */
export const streamTtfb = new Trend('chatgate_stream_ttfb', true);
/** http_req_duration of 2xx streams: request sent -> last byte ([DONE] and close). */
export const streamE2e = new Trend('chatgate_stream_e2e', true);
/** Data events per stream. */
export const streamChunks = new Trend('chatgate_stream_chunks');

interface Chunk {
  choices: Array<{ index: number; delta: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { completion_tokens?: unknown } | null;
}

export function judgeStream(res: Response, tags: Tags): void {
  recordStatus(res.status, tags);
  check(res, { [CHECK.status]: (r) => (r.status >= 200 && r.status < 300) || r.status === 429 }, tags);
  if (res.status >= 400) {
    judgeErrorBody(res, tags);
    return;
  }
  if (res.status === 0) logProblem(`no response to a stream request: ${res.error}`);
  if (res.status < 200 || res.status >= 300) return;

  streamTtfb.add(res.timings.waiting, tags);
  streamE2e.add(res.timings.duration, tags);
  const type = (header(res, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  check(res, { [STREAM_CHECK.eventStream]: () => type === 'text/event-stream' }, tags);

  const sse = parseSse(bodyText(res));
  let done = false;
  let afterDone = false;
  let chunks = 0;
  let content = '';
  let finishes = 0;
  let firstBroken: { clause: string; problems: string[]; payload: string } | undefined;
  let tokens: number | undefined;
  for (const ev of sse.events) {
    if (done) {
      afterDone = true;
      continue;
    }
    if (ev.data === '[DONE]') {
      done = true;
      continue;
    }
    chunks++;
    const data = parseJson(ev.data);
    const shape = checkShape('chat-completion-chunk', data);
    if (!shape.ok) {
      if (!firstBroken) firstBroken = { clause: shape.clause, problems: shape.problems, payload: ev.data.slice(0, 120) };
      continue;
    }
    const chunk = data as Chunk;
    for (const choice of chunk.choices) {
      if (choice.index === 0 && typeof choice.delta.content === 'string') content += choice.delta.content;
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) finishes++;
    }
    if (chunk.usage && typeof chunk.usage.completion_tokens === 'number') tokens = chunk.usage.completion_tokens;
  }
  streamChunks.add(chunks, tags);
  if (tokens !== undefined) completionTokens.add(tokens, tags);

  const shapeOk = firstBroken === undefined;
  bodyShapeFailures.add(shapeOk ? 0 : 1, { ...tags, schema: 'chat-completion-chunk', clause: firstBroken ? firstBroken.clause : 'none' });
  if (firstBroken) logProblem(`stream chunk shape broken (${firstBroken.clause}): ${firstBroken.problems.join('; ')} in ${JSON.stringify(firstBroken.payload)}`);
  if (!done) logProblem(`stream without a terminated data: [DONE] event (${sse.events.length} events${sse.unterminated ? ', last event unterminated' : ''})`);
  check(shapeOk, { [STREAM_CHECK.chunkShape]: (v) => v }, tags);
  check(done && !afterDone, { [STREAM_CHECK.done]: (v) => v }, tags);
  check(content, { [STREAM_CHECK.content]: (v) => v.length > 0 }, tags);
  check(finishes, { [STREAM_CHECK.finish]: (v) => v === 1 }, tags);
}
