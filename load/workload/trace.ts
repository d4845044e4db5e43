// Trace replay input: one request per record, at its timestamp, with its prompt and
// reply length. JSONL ({"timestamp": ms, "input_length": n, "output_length": n}, the
// Mooncake trace's names; "prompt_tokens"/"output_tokens" also read) or CSV with a
// header naming the same columns. Offsets count from the first record, so epoch
// milliseconds and offsets from 0 both work.
import { inputError } from './input-error.ts';

export interface TraceRecord {
  /** ms after the first record. */
  offsetMs: number;
  promptTokens: number;
  outputTokens: number;
}

const FIX = 'each record needs "timestamp" (ms, not decreasing), "input_length" (or "prompt_tokens") and "output_length" (or "output_tokens"), whole numbers of at least 1 for the lengths';

export function parseTrace(text: string, source: string): TraceRecord[] {
  const lines = text.split(/\r?\n/);
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) throw inputError(source, 0, 'the trace holds no record', FIX);
  const csv = !lines[first]!.trim().startsWith('{');
  let header: string[] = [];
  if (csv) header = lines[first]!.split(',').map((h) => h.trim().toLowerCase());
  const out: TraceRecord[] = [];
  let t0: number | undefined;
  let last = -Infinity;
  for (let i = csv ? first + 1 : first; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const n = i + 1;
    let rec: Record<string, unknown>;
    if (csv) {
      const cells = line.split(',').map((c) => c.trim());
      if (cells.length !== header.length) throw inputError(source, n, `${cells.length} columns where the header has ${header.length}`, FIX);
      rec = Object.fromEntries(header.map((h, k) => [h, cells[k] === '' ? undefined : Number(cells[k])]));
    } else {
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw inputError(source, n, 'not a JSON object (JSONL: one object per line)', FIX);
      }
      if (!rec || typeof rec !== 'object' || Array.isArray(rec)) throw inputError(source, n, 'not a JSON object', FIX);
    }
    const ts = rec.timestamp ?? rec.timestamp_ms;
    const p = rec.input_length ?? rec.prompt_tokens;
    const o = rec.output_length ?? rec.output_tokens;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) throw inputError(source, n, `timestamp ${JSON.stringify(ts)} is not a number of 0 or more (ms)`, FIX);
    if (ts < last) throw inputError(source, n, `timestamp ${ts} is before the previous record's ${last}`, 'sort the trace by timestamp');
    for (const [name, v] of [['input_length', p], ['output_length', o]] as const) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw inputError(source, n, `${name} ${JSON.stringify(v)} is not a whole number of at least 1`, FIX);
    }
    last = ts;
    t0 ??= ts;
    out.push({ offsetMs: ts - t0, promptTokens: p as number, outputTokens: o as number });
  }
  if (out.length === 0) throw inputError(source, 0, 'the trace holds no record', FIX);
  return out;
}
