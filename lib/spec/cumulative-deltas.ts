// EV-12 in one place for the suite, the load harness and the k6 bundles: a stream's
// `delta.content` must be new text only. A front that re-emits the reply so far in
// every chunk ("Hel", "Hello", "Hello wor") hands every client (they all concatenate)
// a garbled reply while each chunk on its own looks fine.
//
// Judged on snapshots, not on repetition: over at least MIN_DELTAS non-empty content
// deltas of one choice, every delta after the first starts with either the text of all
// deltas before it combined, or the delta just before it; it either grows past it or
// repeats it exactly (a closing chunk with the whole reply, a duplicated finish chunk:
// a gateway's snapshot stream stays one), and the text grows at least MIN_DELTAS - 1
// times. Repeated words ("ha", "ha"), one-character deltas of a repetitive reply ("a",
// "a", "a"), a single chunk, empty deltas, a role-only first chunk and a usage-only last
// chunk never match: repeats alone never grow, and growth needs three distinct deltas.
//
// Incremental, so the load driver and k6 can feed it delta by delta with bounded
// memory: once both readings are disproved (after two or three deltas of an ordinary
// stream) it keeps nothing but the first deltas it shows in its message. Imports
// nothing (esbuild bundles it for k6: ES2017, no Node APIs).

export const MIN_DELTAS = 3;
/** Characters of each delta a finding quotes. */
const QUOTE = 60;

export type SnapshotStyle = 'prefix of all earlier deltas combined' | 'prefix of the previous delta';

export interface SnapshotFinding {
  choice: number;
  /** Non-empty content deltas of the choice, all of them snapshots (growing, or repeating the one before). */
  deltas: number;
  style: SnapshotStyle;
  /** The first three deltas, each cut to QUOTE characters. */
  first: string[];
}

const quote = (s: string) => (s.length > QUOTE ? `${s.slice(0, QUOTE)}…` : s);

/** One reading (combined, or previous delta): whether it holds, and how often the text grew under it. */
interface Reading { holds: boolean; grew: number }

/** One choice's deltas, fed in order. */
class ChoiceWatch {
  count = 0;
  first: string[] = [];
  private prev = '';
  private combined = '';
  private readonly byCombined: Reading = { holds: true, grew: 0 };
  private readonly byPrev: Reading = { holds: true, grew: 0 };

  push(text: string): void {
    if (text === '') return; // empty deltas carry no text: neither for nor against
    if (this.count > 0) {
      judge(this.byCombined, this.combined, text);
      judge(this.byPrev, this.prev, text);
    }
    this.count++;
    if (this.first.length < 3) this.first.push(quote(text));
    // Keep the text only while a reading can still hold: a legal stream drops it early.
    this.combined = this.byCombined.holds ? this.combined + text : '';
    this.prev = this.byPrev.holds ? text : '';
  }

  finding(choice: number): SnapshotFinding | undefined {
    if (this.count < MIN_DELTAS) return undefined;
    const snapshot = (r: Reading) => r.holds && r.grew >= MIN_DELTAS - 1;
    if (!snapshot(this.byCombined) && !snapshot(this.byPrev)) return undefined;
    return {
      choice, deltas: this.count, first: this.first.slice(),
      style: snapshot(this.byCombined) ? 'prefix of all earlier deltas combined' : 'prefix of the previous delta',
    };
  }
}

/** A delta under one reading: it grows past `before` or repeats it exactly; anything else disproves the reading. */
function judge(r: Reading, before: string, text: string): void {
  if (!r.holds) return;
  if (text.length > before.length && text.startsWith(before)) r.grew++;
  else if (text !== before) r.holds = false;
}

/** Watches one stream, choice by choice; `finding()` says whether it broke EV-12. */
export class DeltaSnapshotWatch {
  private choices = new Map<number, ChoiceWatch>();

  /** One chunk's `delta.content` for a choice; anything but a string is ignored (other clauses judge types). */
  push(choice: number, content: unknown): void {
    if (typeof content !== 'string') return;
    let w = this.choices.get(choice);
    if (!w) { w = new ChoiceWatch(); this.choices.set(choice, w); }
    w.push(content);
  }

  /** Feeds one parsed chunk: every choice's `delta.content`. */
  pushChunk(chunk: unknown): void {
    if (chunk === null || typeof chunk !== 'object') return;
    const choices = (chunk as { choices?: unknown }).choices;
    if (!Array.isArray(choices)) return;
    for (const ch of choices) {
      if (ch === null || typeof ch !== 'object') continue;
      const c = ch as { index?: unknown; delta?: unknown };
      const delta = c.delta !== null && typeof c.delta === 'object' ? (c.delta as { content?: unknown }) : undefined;
      if (delta) this.push(typeof c.index === 'number' ? c.index : 0, delta.content);
    }
  }

  /** The first choice whose deltas are snapshots, or undefined. */
  finding(): SnapshotFinding | undefined {
    for (const [choice, w] of [...this.choices].sort(([a], [b]) => a - b)) {
      const f = w.finding(choice);
      if (f) return f;
    }
    return undefined;
  }
}

/** The EV-12 finding for a whole list of one choice's deltas, or undefined. */
export function snapshotDeltas(deltas: readonly unknown[], choice = 0): SnapshotFinding | undefined {
  const w = new DeltaSnapshotWatch();
  for (const d of deltas) w.push(choice, d);
  return w.finding();
}

/** The finding in words: what a report's "seen" shows. */
export function describeSnapshots(f: SnapshotFinding): string {
  return `choice ${f.choice}: ${f.deltas} content deltas, each one a ${f.style} (cumulative snapshots, not new text); the first three: ${f.first.map((d) => JSON.stringify(d)).join(', ')}`;
}
