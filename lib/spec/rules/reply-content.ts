// The reply's text on every 2xx chat answer, whatever the request asked (a token cap,
// the parameter probes, generated bodies): RES-MSG-1 (a completion's message.content is
// a string) and EV-4 (a stream's choice 0 carries text). A cap may leave the text empty
// (content "" with finish_reason "length" is a string: legal); no string at all breaks
// every client that reads content. Tool calls or a refusal legally stand in for the text,
// as does what a request asked for that may leave none (tools, JSON mode, a stop sequence).
// One rule for the per-response table (./response-rules.ts) and the fuzz oracles.
// Imports only the stream reader (the k6 bundles may take it whole).
import { readEvents, type StreamReading } from './stream-reading.ts';

export type ContentClause = 'RES-MSG-1' | 'EV-4';

/** The clause a 2xx chat answer's text was judged on; `seen` says what broke it (absent: kept). */
export interface ContentJudgement { clause: ContentClause; seen?: string }

/** Request fields whose honouring may legally leave a reply without text. A token cap is not one: it leaves "" at least. */
const MAY_OMIT_TEXT = ['tools', 'tool_choice', 'functions', 'function_call', 'response_format', 'logit_bias', 'stop'];

export function mayOmitText(request: unknown): boolean {
  return request !== null && typeof request === 'object' && MAY_OMIT_TEXT.some((k) => k in request);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Tool calls, a function call or a refusal: what stands in for the text. */
const standsIn = (m: Record<string, unknown>) => (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || isObject(m.function_call) || typeof m.refusal === 'string';

/** RES-MSG-1 on a chat completion: each choice's message.content a string. */
export function plainContentSeen(doc: unknown): string | undefined {
  if (!isObject(doc) || !Array.isArray(doc.choices)) return undefined; // not a completion: SVC-1's and RES-CC-4's
  for (const [i, ch] of doc.choices.entries()) {
    const m = isObject(ch) ? ch.message : undefined;
    if (!isObject(m) || typeof m.content === 'string' || standsIn(m)) continue; // no message object: RES-CH-2's
    return `choice ${i}: message.content ${m.content === undefined ? 'absent' : JSON.stringify(m.content)} (finish_reason ${JSON.stringify((ch as Record<string, unknown>).finish_reason)})`;
  }
  return undefined;
}

/** EV-4 on a stream: choice 0's text non-empty; a cap that ended it ("length") leaves a string content at least. */
export function streamContentSeen(r: StreamReading, request?: unknown): string | undefined {
  if (r.chunks.length === 0 || mayOmitText(request) || (r.content.get(0) ?? '').length > 0) return undefined;
  const deltas = r.chunks.flatMap((c) => (Array.isArray(c.choices) ? c.choices : []))
    .filter((ch) => isObject(ch) && (ch.index ?? 0) === 0 && isObject(ch.delta)).map((ch) => (ch as { delta: Record<string, unknown> }).delta);
  if (deltas.some(standsIn)) return undefined;
  const capped = (r.finishes.get(0) ?? []).some((f) => f.reason === 'length');
  if (capped && deltas.some((d) => typeof d.content === 'string')) return undefined;
  return `"" from ${r.chunks.length} chunks${capped ? ', finish_reason "length" and no delta.content string at all' : ''}`;
}

/** The judgement of one 2xx answer to POST /chat/completions; undefined when the rule has nothing to judge. */
export function judgeReplyContent(a: { method: string; path: string; status?: number; contentType?: string; text: string; streamData?: string[]; request?: unknown }): ContentJudgement | undefined {
  if (a.status === undefined || a.status < 200 || a.status >= 300) return undefined;
  if (a.method.toUpperCase() !== 'POST' || !/\/chat\/completions\/?$/.test(a.path)) return undefined;
  if (a.streamData || /^text\/event-stream/i.test(a.contentType ?? '')) {
    const r = readEvents((a.streamData ?? []).map((data) => ({ data })));
    // No chunk with choices (an error object where chunks belong): EV-2/EV-3/EV-6 say what broke.
    if (!r.chunks.some((c) => Array.isArray(c.choices))) return undefined;
    const seen = streamContentSeen(r, a.request);
    return { clause: 'EV-4', ...(seen ? { seen } : {}) };
  }
  let doc: unknown;
  try { doc = JSON.parse(a.text); } catch { return undefined; } // not JSON: SVC-1's (success-body.ts)
  if (!isObject(doc) || !Array.isArray(doc.choices)) return undefined;
  const seen = plainContentSeen(doc);
  return { clause: 'RES-MSG-1', ...(seen ? { seen } : {}) };
}
