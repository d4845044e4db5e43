// The per-stream rules (EV-*): each a small named function of one stream reading
// (./stream-reading.ts) that returns nothing, or what its clause expected and what the
// stream showed. The EV tests of suites/events.test.ts, the fuzz oracles and the k6
// stream scripts call these; none restates them. No imports but types: k6 bundles it.
import type { StreamReading } from './stream-reading.ts';

export interface StreamViolation {
  clause: 'EV-2' | 'EV-3' | 'EV-4' | 'EV-5' | 'EV-6';
  expected: string;
  seen: string;
}

/** Framing problems as the strict reader reports them (lib/spec/sse-framing.ts). */
export interface FramingProblem { kind: string; offset: number; detail: string }

/** EV-2: well-formed server-sent events, and at least one carries a data: field. */
export function framing(problems: readonly FramingProblem[], r: StreamReading): StreamViolation | undefined {
  if (problems.length) return { clause: 'EV-2', expected: 'well-formed server-sent events', seen: problems.slice(0, 3).map((p) => `${p.kind} at byte ${p.offset}: ${p.detail}`).join('; ') };
  if (r.payloads.length === 0) return { clause: 'EV-2', expected: 'at least one event with a data: field', seen: 'no data: payload' };
  return undefined;
}

/** The payloads EV-3 judges: every one but [DONE]. */
export const chunkPayloads = (r: StreamReading) => r.payloads.filter((p) => p.data.trim() !== '[DONE]');

/**
 * EV-3: every payload but [DONE] is a chat.completion.chunk. `validateChunk` is the
 * caller's schema check (ajv in Node, the standalone validators in k6); each payload's
 * problems come back, or the first broken payload's.
 */
export function chunkShapes(r: StreamReading, validateChunk: (json: unknown) => string[], all = false): StreamViolation[] {
  const out: StreamViolation[] = [];
  for (const p of chunkPayloads(r)) {
    const errors = p.parseError ? [`not JSON (${p.data.slice(0, 80)})`] : validateChunk(p.json);
    if (!errors.length) continue;
    out.push({ clause: 'EV-3', expected: p.parseError ? 'a JSON chunk' : 'a chat.completion.chunk', seen: `event ${p.index}: ${errors.slice(0, 3).join('; ')}` });
    if (!all) break;
  }
  return out;
}

/** EV-4: the concatenated delta.content of choice 0 is non-empty. */
export function content(r: StreamReading): StreamViolation | undefined {
  return (r.content.get(0) ?? '').length > 0 ? undefined : { clause: 'EV-4', expected: 'non-empty delta.content for choice 0', seen: `"" from ${r.chunks.length} chunks` };
}

/**
 * EV-5: exactly one finish_reason per choice and no content after it; with `stop`, that
 * reason is "stop" (a request that set max_tokens, stop or tools may legally end otherwise).
 */
export function finishes(r: StreamReading, opts: { stop?: boolean } = {}): StreamViolation[] {
  const out: StreamViolation[] = [];
  for (const i of new Set([...r.content.keys(), ...r.finishes.keys()])) {
    const f = r.finishes.get(i) ?? [];
    if (f.length !== 1) out.push({ clause: 'EV-5', expected: `one finish_reason for choice ${i}`, seen: `${f.length} (${f.map((x) => JSON.stringify(x.reason)).join(', ')})` });
    else if (opts.stop && f[0]!.reason !== 'stop') out.push({ clause: 'EV-5', expected: `finish_reason "stop" for choice ${i}`, seen: JSON.stringify(f[0]!.reason) });
    if (r.contentAfterFinish.has(i)) out.push({ clause: 'EV-5', expected: `no content after choice ${i} finished`, seen: `content in chunk ${r.contentAfterFinish.get(i)}` });
  }
  return out;
}

/** EV-6: a data: [DONE] payload, and no event after it. */
export function done(r: StreamReading): StreamViolation | undefined {
  if (r.doneIndex === undefined) return { clause: 'EV-6', expected: 'a data: [DONE] payload', seen: `no [DONE] in ${r.payloads.length} payloads` };
  if (r.afterDone.length) return { clause: 'EV-6', expected: 'nothing after [DONE]', seen: `${r.afterDone.length} more events, first: ${r.afterDone[0]!.data.slice(0, 80)}` };
  return undefined;
}

/** Non-empty `delta.content` strings in the chunks, all choices (EV-12's evidence count). */
export function contentDeltaCount(chunks: ReadonlyArray<unknown>): number {
  let n = 0;
  for (const c of chunks) {
    const choices = (c as { choices?: unknown } | null)?.choices;
    for (const ch of Array.isArray(choices) ? choices : []) {
      const text = (ch as { delta?: { content?: unknown } } | null)?.delta?.content;
      if (typeof text === 'string' && text !== '') n++;
    }
  }
  return n;
}
