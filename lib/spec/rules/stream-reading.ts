// Reads a captured SSE exchange the way the OpenAI-style clients do: data payloads,
// the [DONE] terminator, parsed chunks, content and finish_reason per choice.
// The EV-* tests each judge one aspect of this reading.
import type { Exchange } from '../../http/http-client.ts';

export interface Payload { index: number; event?: string; data: string; json?: unknown; parseError?: string; atMs: number }

export interface StreamReading {
  payloads: Payload[];            // every event with data, in order, including [DONE]
  chunks: Array<Record<string, unknown>>; // parsed JSON payloads before [DONE]
  doneIndex?: number;             // index into payloads of [DONE]
  afterDone: Payload[];           // payloads that came after [DONE]
  content: Map<number, string>;   // concatenated delta.content per choice index
  finishes: Map<number, Array<{ reason: unknown; chunk: number }>>; // non-null finish_reason per choice
  contentAfterFinish: Map<number, number>; // per choice: first chunk carrying content after its finish
  firstDelta: Map<number, Record<string, unknown>>;
  usageChunk?: Record<string, unknown>;
}

export function readStream(ex: Exchange): StreamReading {
  const events = ex.stream?.events ?? [];
  const r: StreamReading = {
    payloads: [], chunks: [], afterDone: [], content: new Map(), finishes: new Map(),
    contentAfterFinish: new Map(), firstDelta: new Map(),
  };
  events.forEach((ev, i) => {
    const p: Payload = { index: i, event: ev.event, data: ev.data, atMs: ev.atMs };
    if (r.doneIndex !== undefined) { r.afterDone.push(p); r.payloads.push(p); return; }
    if (ev.data.trim() === '[DONE]') { r.doneIndex = r.payloads.length; r.payloads.push(p); return; }
    try { p.json = JSON.parse(ev.data); } catch (e) { p.parseError = (e as Error).message; }
    r.payloads.push(p);
    if (!p.json || typeof p.json !== 'object') return;
    const chunk = p.json as Record<string, unknown>;
    const n = r.chunks.push(chunk) - 1;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    if (choices.length === 0 && chunk.usage) r.usageChunk = chunk;
    for (const ch of choices as Array<Record<string, unknown>>) {
      const idx = typeof ch?.index === 'number' ? ch.index : 0;
      const delta = (ch?.delta && typeof ch.delta === 'object' ? ch.delta : {}) as Record<string, unknown>;
      if (!r.firstDelta.has(idx)) r.firstDelta.set(idx, delta);
      const text = typeof delta.content === 'string' ? delta.content : '';
      if (text && r.finishes.has(idx) && !r.contentAfterFinish.has(idx)) r.contentAfterFinish.set(idx, n);
      r.content.set(idx, (r.content.get(idx) ?? '') + text);
      if (ch?.finish_reason !== null && ch?.finish_reason !== undefined) {
        const list = r.finishes.get(idx) ?? [];
        list.push({ reason: ch.finish_reason, chunk: n });
        r.finishes.set(idx, list);
      }
    }
  });
  return r;
}
