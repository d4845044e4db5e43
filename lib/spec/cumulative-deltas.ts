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
// A single delta that restates the reply so far (a finishing chunk that repeats the whole
// text: every client shows the reply twice) breaks it too: once at least MIN_EARLIER
// deltas and MIN_RESTATED characters came before it, a delta that starts with all of
// them combined is no chance repetition. Adjacent identical short deltas stay legal.
//
// Incremental, so the load driver and k6 can feed it delta by delta with bounded
// memory: once both readings are disproved (after two or three deltas of an ordinary
// stream) it keeps nothing but the first deltas it shows in its message. Imports
// nothing (esbuild bundles it for k6: ES2017, no Node APIs).

export const MIN_DELTAS = 3;
/** A restatement needs this many earlier deltas, holding this many characters together. */
export const MIN_EARLIER = 3;
export const MIN_RESTATED = 16;
/** Characters of each delta a finding quotes. */
const QUOTE = 60;

export type SnapshotStyle = 'prefix of all earlier deltas combined' | 'prefix of the previous delta' | 'restatement of all earlier deltas combined';

export interface SnapshotFinding {
  choice: number;
  /** Non-empty content deltas of the choice, all of them snapshots (growing, or repeating the one before). */
  deltas: number;
  style: SnapshotStyle;
  /** The first three deltas, each cut to QUOTE characters. */
  first: string[];
  /** One delta restated the reply so far: its position (1-based), how many deltas and characters it repeated, its start. */
  restated?: { delta: number; earlier: number; chars: number; text: string };
}

const quote = (s: string) => (s.length > QUOTE ? `${s.slice(0, QUOTE)}…` : s);

/** One reading (combined, or previous delta): whether it holds, and how often the text grew under it. */
interface Reading { holds: boolean; grew: number }

// Two moduli near 2^30 and small bases: every product stays an exact double.
const B1 = 131;
const M1 = 1000000007;
const B2 = 137;
const M2 = 998244353;

/**
 * The text of all deltas so far, in bounded memory: its length, its first MIN_RESTATED
 * characters and two polynomial hashes (a delta restating it must match all of them).
 */
class CombinedText {
  length = 0;
  head = '';
  private h1 = 0;
  private h2 = 0;

  add(text: string): void {
    let h1 = this.h1;
    let h2 = this.h2;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = mod(h1 * B1 + c, M1);
      h2 = mod(h2 * B2 + c, M2);
    }
    this.h1 = h1;
    this.h2 = h2;
    if (this.head.length < MIN_RESTATED) this.head = (this.head + text).slice(0, MIN_RESTATED);
    this.length += text.length;
  }

  /** Whether `text` starts with the combined text. */
  startsOf(text: string): boolean {
    if (text.length < this.length || !text.startsWith(this.head)) return false;
    let a = 0;
    let b = 0;
    for (let i = 0; i < this.length; i++) {
      const c = text.charCodeAt(i);
      a = mod(a * B1 + c, M1);
      b = mod(b * B2 + c, M2);
    }
    return a === this.h1 && b === this.h2;
  }
}


/** x % m for 0 <= x < 2^40: exact (x / m is never within rounding of the next integer), and without the float remainder's library call, which every content character of every stream paid twice. */
function mod(x: number, m: number): number {
  return x - Math.floor(x / m) * m;
}

/** One choice's deltas, fed in order. */
class ChoiceWatch {
  count = 0;
  first: string[] = [];
  restated?: SnapshotFinding['restated'];
  private prev = '';
  private combined = '';
  private readonly all = new CombinedText();
  private readonly byCombined: Reading = { holds: true, grew: 0 };
  private readonly byPrev: Reading = { holds: true, grew: 0 };

  push(text: string): void {
    if (text === '') return; // empty deltas carry no text: neither for nor against
    if (this.count > 0) {
      judge(this.byCombined, this.combined, text);
      judge(this.byPrev, this.prev, text);
    }
    if (!this.restated && this.count >= MIN_EARLIER && this.all.length >= MIN_RESTATED && this.all.startsOf(text)) {
      this.restated = { delta: this.count + 1, earlier: this.count, chars: this.all.length, text: quote(text) };
    }
    if (!this.restated) this.all.add(text);
    this.count++;
    if (this.first.length < 3) this.first.push(quote(text));
    // Keep the text only while a reading can still hold: a legal stream drops it early.
    this.combined = this.byCombined.holds ? this.combined + text : '';
    this.prev = this.byPrev.holds ? text : '';
  }

  finding(choice: number): SnapshotFinding | undefined {
    if (this.count < MIN_DELTAS) return undefined;
    const snapshot = (r: Reading) => r.holds && r.grew >= MIN_DELTAS - 1;
    if (!snapshot(this.byCombined) && !snapshot(this.byPrev)) {
      if (!this.restated) return undefined;
      return { choice, deltas: this.count, first: this.first.slice(), style: 'restatement of all earlier deltas combined', restated: { ...this.restated } };
    }
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
  /** Choice 0's watch, also in `choices`: nearly every chunk is choice 0's, and the load driver feeds every one. */
  private zero: ChoiceWatch | undefined;

  /** One chunk's `delta.content` for a choice; anything but a string is ignored (other clauses judge types). */
  push(choice: number, content: unknown): void {
    if (typeof content !== 'string') return;
    let w = choice === 0 ? this.zero : this.choices.get(choice);
    if (!w) {
      w = new ChoiceWatch();
      this.choices.set(choice, w);
      if (choice === 0) this.zero = w;
    }
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
  if (f.style === 'restatement of all earlier deltas combined' && f.restated) {
    const r = f.restated;
    return `choice ${f.choice}: delta ${r.delta} of ${f.deltas} restates the reply so far (the ${r.earlier} deltas before it, ${r.chars} characters) instead of new text: ${JSON.stringify(r.text)}; the first three: ${f.first.map((d) => JSON.stringify(d)).join(', ')}`;
  }
  return `choice ${f.choice}: ${f.deltas} content deltas, each one a ${f.style} (cumulative snapshots, not new text); the first three: ${f.first.map((d) => JSON.stringify(d)).join(', ')}`;
}
