// Reads a stream's data payloads the way the OpenAI-style clients do: the [DONE]
// terminator, parsed chunks, content and finish_reason per choice. Fed event by event
// (the k6 scripts read streams as they arrive) or from a captured exchange (the suite,
// the fuzz phase). The EV rules (./stream-rules.ts) each judge one aspect of a reading.
// No imports but types: the k6 bundles take this module whole.
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

export function emptyReading(): StreamReading {
  return { payloads: [], chunks: [], afterDone: [], content: new Map(), finishes: new Map(), contentAfterFinish: new Map(), firstDelta: new Map() };
}

/** Adds one dispatched event to the reading; returns the parsed chunk (undefined for [DONE], after it, or not JSON). */
export function pushEvent(r: StreamReading, ev: { event?: string; data: string; atMs?: number }): Record<string, unknown> | undefined {
  const p: Payload = { index: r.payloads.length, event: ev.event, data: ev.data, atMs: ev.atMs ?? 0 };
  if (r.doneIndex !== undefined) { r.afterDone.push(p); r.payloads.push(p); return undefined; }
  if (ev.data.trim() === '[DONE]') { r.doneIndex = r.payloads.length; r.payloads.push(p); return undefined; }
  try { p.json = JSON.parse(ev.data); } catch (e) { p.parseError = (e as Error).message; }
  r.payloads.push(p);
  if (!p.json || typeof p.json !== 'object') return undefined;
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
  return chunk;
}

export function readEvents(events: ReadonlyArray<{ event?: string; data: string; atMs?: number }>): StreamReading {
  const r = emptyReading();
  for (const ev of events) pushEvent(r, ev);
  return r;
}

export function readStream(ex: Pick<Exchange, 'stream'>): StreamReading {
  return readEvents(ex.stream?.events ?? []);
}
