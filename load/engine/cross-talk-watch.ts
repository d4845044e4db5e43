// SVC-9 and EV-13 over one phase of a load run. Requests that overlapped no other are
// the "lone" ones: they teach what evidence the target gives (its canary echo, its usage
// count, its ids: lib/spec/rules/cross-talk.ts); every other success is judged with it.
// Each reply is judged as soon as what the rule needs of it is known, then dropped, so a
// long run keeps what is in flight, not every reply: see CrossTalkWatch.
// Each stream's delivery is judged by lib/spec/rules/stream-delivery.ts from its figures.
import { canariesIn, CrossTalkLedger, foreignCanaries, learnEvidence, type CrossTalkEvidence, type CrossTalkSample, type LedgerFinding } from '../../lib/spec/rules/cross-talk.ts';
import { judgeDeliveryFigures } from '../../lib/spec/rules/stream-delivery.ts';
import type { Findings } from '../report/findings.ts';
import type { LeanRequest, Outcome } from './lean-client.ts';

/** Lone replies of a phase the evidence is learned from (with those sent before it); the rule's usage fit costs their cube. */
export const LONE_LEARN_MAX = 64;
/** Replies held while the evidence is still being learned; past it, the evidence is what the lone ones so far showed. */
export const MAX_HELD = 2048;
/** Judged replies kept for a later reply carrying their canary, and ids kept for a repeat (c), besides those in flight. */
export const RECENT_JUDGED = 1024;
/** Requests kept for curl lines besides those in flight: the last ones answered (a swap's partner was in flight beside it). */
export const RECENT_REQUESTS = 256;
/** Replies that showed another's canary or a repeated id whose two requests get curl lines (the first ones). */
export const MAX_REPRODUCED = 10;
/** Findings of each kind kept to choose the example from (the rest are counted). */
const KEPT_FINDINGS = 64;

type Sample = CrossTalkSample & { start: number; end: number; seq: number };
/** A reply while the watch holds it. */
interface Rec { s: Sample }
interface KeptFinding { kind: LedgerFinding<Rec>['kind']; order: number; seq: number; otherSeq: number; example: string }

export interface CrossTalkSummary {
  /** judged: at least one kind of evidence; inconclusive: why not. */
  verdict: 'judged' | 'inconclusive';
  why?: string;
  replies: number;
  lone: number;
  judged_by: { canary: number; usage: number; id: number };
  /** Replies that were another request's. */
  findings: number;
  /** Replies not judged (none: each is judged, then dropped). */
  not_kept: number;
}

export interface DeliverySummary {
  /** Streams long and slow enough to judge (>= 32 content chunks, >= 1 s). */
  judged: number;
  /** Of those, delivered in one burst at their end. */
  one_burst: number;
  one_burst_share: number | null;
}

/**
 * SVC-9 judged as the run goes, with the same rule and the same findings as judging every
 * reply at the end on the same evidence (lib/spec/rules/cross-talk.ts, CrossTalkLedger); a
 * reply carries only canaries of requests sent before it ended. A reply is settled when
 * no request in flight can have started before it ended (every request is told by `sent`
 * first): then it is known to be lone or not, and every reply overlapping it is known.
 * Settled replies are taken in their start order; lone ones teach the evidence, the others
 * wait for it (until LONE_LEARN_MAX lone ones, MAX_HELD waiting, or the phase's end), then
 * each is judged once the request its canaries name is settled too, and kept only while a
 * later reply may overlap it. An outcome never announced by `sent` makes the watch hold
 * everything to the end (the batch judgement, with its memory).
 */
export class CrossTalkWatch {
  /** Requests in flight: the earliest their reply can say it started (intendedAt), the request for curl lines, its canary. */
  private readonly inFlight = new Map<number, { from: number; req: LeanRequest | undefined; canary: string | undefined }>();
  private readonly recent = new Map<number, LeanRequest>();
  private readonly recentIds = new Map<string, number>();
  private readonly curls = new Map<number, string>();
  private reproduced = 0;
  /** Answered, not yet settled; start order. */
  private readonly pending = new Queue<Rec>();
  /** Settled, not lone, waiting for the evidence or their judgement; start order. */
  private readonly ready = new Queue<Rec>();
  /** Judged, kept while a later reply may overlap them; start order. */
  private readonly live: Rec[] = [];
  /** live.length after its last walk. */
  private liveKept = 0;
  /** Replies not yet dropped by canary, and judged ones a while after. */
  private readonly byCanary = new Map<string, Rec>();
  private readonly judgedByCanary = new Map<string, Rec>();
  private readonly lone: Sample[] = [];
  private learned = 0;
  private loneCount = 0;
  private replies = 0;
  private maxEndTaken = -Infinity;
  private inOrder = true;
  private lastFrom = -Infinity;
  private untracked = false;
  private ledger: CrossTalkLedger<Rec> | undefined;
  private evidence: CrossTalkEvidence | undefined;
  private order = 0;
  private findingCount = 0;
  private readonly kept: KeptFinding[] = [];
  private readonly countsByKind = new Map<KeptFinding['kind'], number>();
  private notKept = 0;
  private judgedStreams = 0;
  private bursts = 0;
  private burstExample: string | undefined;

  private readonly learnMax: number;
  private readonly heldMax: number;

  /** `curlOf`: a request's curl line (keys masked); without it, findings carry none. `onFinding`: each SVC-9 finding as it is made. `limits`: LONE_LEARN_MAX and MAX_HELD (self-tests). */
  constructor(private readonly curlOf?: (req: LeanRequest) => string, private readonly onFinding?: (f: { kind: KeptFinding['kind']; seq: number; otherSeq: number; detail: string }) => void, limits: { learn?: number; held?: number } = {}) {
    this.learnMax = limits.learn ?? LONE_LEARN_MAX;
    this.heldMax = limits.held ?? MAX_HELD;
  }

  /** Requests sent alone before the phase (not measured): they teach the evidence first. */
  alone(before: readonly Outcome[]): void {
    for (const o of before) if (o.ok) { this.lone.push(sampleOf(o)); this.loneCount++; }
  }

  /** A request handed to the pool: in flight until its outcome; kept a while after, for the curl lines of a finding. */
  sent(req: LeanRequest): void {
    // Its reply's start (sentAt, wireAt) is never before its due time: the driver sends what is due.
    const from = req.intendedAt;
    if (from < this.lastFrom) this.inOrder = false;
    this.lastFrom = from;
    // One shape for every entry (no spread objects: this runs once per request).
    this.inFlight.set(req.seq, { from, req: this.curlOf ? req : undefined, canary: req.work?.canary || undefined });
  }

  add(o: Outcome): void {
    const flight = this.inFlight.get(o.seq);
    if (flight) {
      this.inFlight.delete(o.seq);
      if (flight.req) {
        this.recent.set(o.seq, flight.req);
        if (this.recent.size > RECENT_REQUESTS) this.recent.delete(this.recent.keys().next().value!);
      }
    } else this.untracked = true;
    if (o.ok) {
      if (flight?.req && this.reproduced < MAX_REPRODUCED) this.keepCurls(o, flight.req);
      this.judgeDelivery(o);
      this.replies++;
      this.hold({ s: sampleOf(o) });
    }
    if (!this.untracked) this.settle(this.earliestInFlight());
  }

  private hold(r: Rec): void {
    this.pending.insert(r, (x) => x.s.start > r.s.start);
    if (r.s.request.canary) this.byCanary.set(r.s.request.canary, r);
  }

  /** The earliest start a reply still to come can have. */
  private earliestInFlight(): number {
    if (this.inFlight.size === 0) return Infinity;
    if (this.inOrder) return this.inFlight.values().next().value!.from;
    let m = Infinity;
    for (const f of this.inFlight.values()) m = Math.min(m, f.from);
    return m;
  }

  /** Takes every reply that ended by `until` (nothing still to come started before it), in start order; judges what it can. */
  private settle(until: number, end = false): void {
    while (this.pending.length && this.pending.first!.s.end <= until) {
      const r = this.pending.shift()!;
      const next = this.pending.first;
      // lib/spec/rules/cross-talk.ts splitLone, one reply at a time: nothing before it ends after its start, nothing after starts before its end.
      const isLone = r.s.start >= this.maxEndTaken && (!next || next.s.start >= r.s.end);
      this.maxEndTaken = Math.max(this.maxEndTaken, r.s.end);
      if (!isLone) { this.ready.push(r); continue; }
      this.loneCount++;
      this.drop(r);
      if (!this.ledger && this.learned < this.learnMax) { this.learned++; this.lone.push(r.s); }
    }
    if (!this.ledger && (end || this.learned >= this.learnMax || this.ready.length >= this.heldMax)) this.freeze();
    if (!this.ledger) return;
    while (this.ready.length && (end || this.ownersSettled(this.ready.first!))) {
      const r = this.ready.shift()!;
      this.ledger.judge(r, this.ownerOfFn, this.partnerView);
      this.live.push(r);
    }
    // A judged reply stays while one not yet judged may overlap it. The walk runs once the
    // list doubled (a thousand streams keep about a thousand here: a walk per reply was O(n)).
    if (!end && this.live.length < 2 * this.liveKept + 64) return;
    const from = Math.min(this.ready.first?.s.start ?? Infinity, this.pending.first?.s.start ?? Infinity, end ? Infinity : until);
    let k = 0;
    for (const r of this.live) if (r.s.end > from) this.live[k++] = r; else this.leave(r);
    this.live.length = k;
    this.liveKept = k;
  }

  private freeze(): void {
    this.evidence = learnEvidence(this.lone);
    // A lone reply that is another lone request's: a finding though nothing else was in flight.
    for (const f of this.evidence.crossed) this.found({ kind: f.kind, request: { s: this.lone[f.request]! }, other: { s: this.lone[f.other]! }, detail: f.detail });
    this.ledger = new CrossTalkLedger<Rec>(this.evidence, (r) => r.s, (r) => r.s.request.label ?? `request #${r.s.seq}`, RECENT_JUDGED, (f) => this.found(f));
  }

  /** The replies a canary in this one names are settled (in flight or unsettled, they may yet be another's reply of it). */
  private ownersSettled(r: Rec): boolean {
    const own = r.s.request.canary;
    if (!own || !r.s.reply.content) return true;
    for (const c of foreignCanaries(own, r.s.reply.content, r.s.request.held)) {
      const holder = this.byCanary.get(c);
      if (holder && this.pending.includes(holder)) return false;
      for (const f of this.inFlight.values()) if (f.canary === c) return false;
    }
    return true;
  }

  /** The judged or waiting reply (never a lone one) whose request carried this canary. */
  private ownerOf(canary: string): Rec | undefined {
    return this.byCanary.get(canary) ?? this.judgedByCanary.get(canary);
  }

  private readonly ownerOfFn = (c: string) => this.ownerOf(c);
  /** Made into a walk only where the rule looks (a reply far from its own prompt's count). */
  private readonly partnerView: Iterable<Rec> = { [Symbol.iterator]: () => this.partners() };

  /** In start order: the judged replies still kept, those waiting, those unsettled. */
  private *partners(): Generator<Rec> {
    yield* this.live;
    yield* this.ready;
    yield* this.pending;
  }

  /** A judged reply leaves the window: its canary stays findable a while. */
  private leave(r: Rec): void {
    this.drop(r);
    const c = r.s.request.canary;
    if (c) {
      this.judgedByCanary.set(c, r);
      if (this.judgedByCanary.size > RECENT_JUDGED) this.judgedByCanary.delete(this.judgedByCanary.keys().next().value!);
    }
  }

  private drop(r: Rec): void {
    const c = r.s.request.canary;
    if (c && this.byCanary.get(c) === r) this.byCanary.delete(c);
  }

  /** One finding: counted; the first few of each kind kept to choose the example from. */
  private found(f: LedgerFinding<Rec>): void {
    const order = this.order++ + (f.kind === 'id' ? 1e15 : 0);
    this.findingCount++;
    this.onFinding?.({ kind: f.kind, seq: f.request.s.seq, otherSeq: f.other.s.seq, detail: f.detail });
    const n = (this.countsByKind.get(f.kind) ?? 0) + 1;
    this.countsByKind.set(f.kind, n);
    if (n > KEPT_FINDINGS) return;
    const a = f.request.s.request;
    const b = f.other.s.request;
    this.kept.push({ kind: f.kind, order, seq: f.request.s.seq, otherSeq: f.other.s.seq, example: `${a.label} (${a.key} key) got the reply of ${b.label} (${b.key} key): ${f.detail}` });
  }

  /** A reply that carries another request's canary, or an id a recent reply carried: both requests' curl lines, while they are at hand. */
  private keepCurls(o: Outcome, req: LeanRequest): void {
    const own = o.work?.canary;
    const foreign = own ? foreignCanaries(own, o.replyHead ?? o.reply ?? '', o.work?.heldCanaries)[0] : undefined;
    let partner = foreign ? [...[...this.inFlight.values()].map((f) => f.req), ...this.recent.values()].find((r) => r?.work?.canary === foreign)?.seq : undefined;
    if (o.completionId !== undefined) {
      partner ??= this.recentIds.get(o.completionId);
      this.recentIds.set(o.completionId, o.seq);
      if (this.recentIds.size > RECENT_REQUESTS) this.recentIds.delete(this.recentIds.keys().next().value!);
    }
    const other = partner === undefined || partner === o.seq ? undefined : this.inFlight.get(partner)?.req ?? this.recent.get(partner);
    if (!other) return;
    this.reproduced++;
    this.curls.set(o.seq, this.curlOf!(req));
    this.curls.set(other.seq, this.curlOf!(other));
  }

  private judgeDelivery(o: Outcome): void {
    const from = o.wireAt ?? o.sentAt;
    if (o.stream && o.firstContentAt !== undefined && o.lastContentAt !== undefined) {
      const d = judgeDeliveryFigures({ contentChunks: o.contentChunks, firstMs: o.firstContentAt - from, lastMs: o.lastContentAt - from, reads: o.contentReads ?? o.contentChunks });
      if (d.verdict !== 'inconclusive') this.judgedStreams++;
      if (d.verdict === 'burst') {
        this.bursts++;
        this.burstExample ??= `request #${o.seq}: ${d.why}`;
      }
    }
  }

  /** Replies (and requests in flight) the watch holds now: what its memory grows with. */
  get held(): number {
    return this.pending.length + this.ready.length + this.live.length + this.inFlight.size;
  }

  /** Judges what is left of the phase and adds its findings (SVC-9 a MUST, EV-13 a SHOULD); `phase` names a step. */
  finish(findings: Findings, phase?: string): { cross_talk: CrossTalkSummary; delivery: DeliverySummary } {
    const where = phase ? ` (${phase})` : '';
    this.settle(Infinity, true);
    const ledger = this.ledger!;
    const inconclusive = this.loneCount === 0
      ? 'no request ran alone to learn from (every one overlapped another): no evidence of whose reply is whose'
      : ledger.judged.canary + ledger.judged.usage + ledger.judged.id === 0
        ? `no evidence of whose reply is whose: ${this.evidence!.missing.join('; ') || 'no concurrent reply carried a canary, usage or id'}`
        : undefined;
    // Each kind's example is the first finding whose two requests have curl lines, where one has.
    const curlsOf = (f: KeptFinding) => {
      const a = this.curls.get(f.seq);
      const b = this.curls.get(f.otherSeq);
      return a && b ? [`this request: ${a}`, `the other: ${b}`] : undefined;
    };
    const counts = new Map<string, number>();
    const ordered = [...this.kept].sort((x, y) => Number(!!curlsOf(y)) - Number(!!curlsOf(x)) || x.order - y.order);
    const what = (k: KeptFinding['kind']) => k === 'canary' ? 'another request\'s canary' : k === 'usage' ? 'another request\'s prompt count (usage.prompt_tokens)' : 'another request\'s completion id';
    for (const f of ordered) {
      counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
      findings.add('SVC-9', `a reply under concurrent load carried ${what(f.kind)}${where}`, f.example, undefined, curlsOf(f));
    }
    // Findings past those kept: counted on their kind's line.
    for (const [kind, n] of this.countsByKind) {
      for (let i = counts.get(kind) ?? 0; i < n; i++) findings.add('SVC-9', `a reply under concurrent load carried ${what(kind)}${where}`);
    }
    if (this.bursts > 0) {
      findings.add('EV-13', `${this.bursts} of ${this.judgedStreams} long streams (${pct(this.bursts, this.judgedStreams)}) delivered in one burst at their end, as through a buffering proxy${where}`, this.burstExample);
    }
    return {
      cross_talk: {
        verdict: inconclusive ? 'inconclusive' : 'judged',
        ...(inconclusive ? { why: inconclusive } : {}),
        replies: this.replies, lone: this.loneCount, judged_by: { ...ledger.judged }, findings: this.findingCount, not_kept: this.notKept,
      },
      delivery: { judged: this.judgedStreams, one_burst: this.bursts, one_burst_share: this.judgedStreams ? this.bursts / this.judgedStreams : null },
    };
  }
}

/** What SVC-9 keeps of an answered request while it judges it. */
export function sampleOf(o: Outcome): Sample {
  const from = o.wireAt ?? o.sentAt;
  return {
    start: from, end: o.endAt, seq: o.seq,
    request: { key: o.key, label: `request #${o.seq}`, promptSize: o.work?.promptTokens ?? NaN, startMs: from, endMs: o.endAt, ...(o.work?.canary ? { canary: o.work.canary } : {}), ...(o.work?.heldCanaries ? { held: o.work.heldCanaries } : {}) },
    reply: {
      // Only the canaries the rule looks for: the reply's head is a chain of one string per chunk,
      // which kept 16 strings a request alive for the rest of the run (a long hold grew 1 MiB a minute).
      ...(o.replyHead !== undefined || o.reply !== undefined ? { content: canariesIn(o.replyHead ?? o.reply ?? '').join(' ') } : {}),
      ...(o.usagePromptTokens !== undefined ? { promptTokens: o.usagePromptTokens } : {}),
      ...(o.completionId !== undefined ? { id: o.completionId } : {}),
    },
  };
}

/** A first-in-first-out list in an array: taking the first is O(1), inserting near the end is cheap. */
class Queue<T> implements Iterable<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number { return this.items.length - this.head; }
  get first(): T | undefined { return this.items[this.head]; }
  push(x: T): void { this.items.push(x); }
  shift(): T | undefined {
    const x = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) { this.items = this.items.slice(this.head); this.head = 0; }
    return x;
  }
  /** Inserts before the trailing items that `after` says go after it (stable: equal ones stay first). */
  insert(x: T, after: (y: T) => boolean): void {
    let k = this.items.length;
    while (k > this.head && after(this.items[k - 1]!)) k--;
    this.items.splice(k, 0, x);
  }
  includes(x: T): boolean { return this.items.indexOf(x, this.head) >= 0; }
  *[Symbol.iterator](): Iterator<T> { for (let i = this.head; i < this.items.length; i++) yield this.items[i]!; }
}

function pct(a: number, b: number): string {
  return `${((100 * a) / b).toFixed(1)} %`;
}
