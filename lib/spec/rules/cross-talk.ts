// SVC-9: every reply answers its own request. Three kinds of evidence:
//  (a) canary: a reply that carries another request's canary and not its own answered
//      that request. No reply holds a random canary by chance, so this needs no lone
//      evidence (a reply cache one request behind never repeats its own canary); other
//      replies count as judged by canary where lone replies repeated their own;
//  (b) usage, where lone requests showed it: their usage.prompt_tokens follow the
//      client's own count of the prompt by a straight line (a target counts its own way:
//      any slope and offset), so a reply whose count fits another in-flight prompt and
//      not its own is a swap;
//  (c) ids, where lone requests showed it: they carry distinct completion ids, so two
//      concurrent replies with one id are one reply delivered twice (a mock answering one
//      fixed id is legal).
// With none of them, SVC-9 is inconclusive, naming why. No imports: the k6 bundles
// take this module whole.

/** A canary: a token no reply would hold by chance, one per request. */
export const CANARY_PATTERN = /\bCG[0-9A-Z]{10}\b/g;

/** A new canary (the caller's randomness: Math.random is enough, it only has to differ per request). */
export function makeCanary(random: () => number = Math.random): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let s = 'CG';
  for (let i = 0; i < 10; i++) s += alphabet[Math.floor(random() * alphabet.length)];
  return s;
}

/** Request `n`'s canary in a run salted `salt` (the load harness: unique per request, the same for the same seed). */
export function canaryFor(n: number, salt: number): string {
  const tail = Math.abs(Math.floor(n)).toString(36).toUpperCase().padStart(7, '0').slice(-7);
  const head = (Math.abs(Math.floor(salt)) % 46656).toString(36).toUpperCase().padStart(3, '0');
  return `CG${head}${tail}`;
}

/** The request number a canaryFor canary names (its last 7 characters: numbers past 36^7 wrap). */
export function requestOfCanary(canary: string): number {
  return parseInt(canary.slice(-7), 36);
}

/** The instruction a request carries its canary in. */
export function canaryInstruction(canary: string): string {
  return `Begin your reply with the code ${canary}.`;
}

/** The canaries a reply's text holds. */
export function canariesIn(text: string): string[] {
  return [...new Set(text.match(CANARY_PATTERN) ?? [])];
}

/**
 * The canaries of other requests a reply holds: none when it holds its own (a reply repeating
 * the whole conversation is its own), and never one its request's own messages hold (`held`).
 */
export function foreignCanaries(own: string, text: string, held: readonly string[] = []): string[] {
  const seen = canariesIn(text);
  return seen.includes(own) ? [] : seen.filter((c) => !held.includes(c));
}

export interface CrossTalkRequest {
  /** Which key sent it: a label, never the key. */
  key: string;
  canary?: string;
  /** Canaries the request's earlier messages hold (a session's history): its own too, though not the one it asks for. */
  held?: readonly string[];
  /** The client's own count of the prompt (a tokenizer's, words: any count that grows with it). */
  promptSize: number;
  /** A reproduction (curl line, redacted) for the report. */
  curl?: string;
  /** How reports name it (default "request <its position + 1>"). */
  label?: string;
  /** When it was sent and answered (ms, one clock), to know which were in flight together; absent: all were. */
  startMs?: number;
  endMs?: number;
}

export interface CrossTalkReply {
  content?: string;
  promptTokens?: number;
  id?: string;
}

export interface CrossTalkSample { request: CrossTalkRequest; reply: CrossTalkReply }

export interface UsageFit { slope: number; offset: number; tolerance: number }
/** A reply's count is its prompt's within this share of the expected count (or the fit's own tolerance, if wider). */
const USAGE_RELATIVE_TOLERANCE = 0.05;
/**
 * Prompts whose client counts are this close may differ only by their canaries: a canary's
 * 12 characters are 1 to 12 tokens in any tokenizer, the client's and the target's alike,
 * so usage never tells such prompts apart (o200k counted two prompts of the same words 27 and 31).
 */
export const CANARY_COUNT_SPREAD = 12;

export interface CrossTalkEvidence {
  echo: boolean;
  usage?: UsageFit;
  distinctIds: boolean;
  /** Lone replies that were other lone requests' (crossedLone): indices into the lone samples learned from. */
  crossed: CrossTalkFinding[];
  /** Per kind of evidence the target does not give: why. */
  missing: string[];
}

export interface CrossTalkFinding {
  kind: 'canary' | 'usage' | 'id';
  /** Indices into the samples judged: the reply's request, and the request whose reply it was. */
  request: number;
  other: number;
  detail: string;
}

export interface CrossTalkJudgement {
  findings: CrossTalkFinding[];
  /** Replies judged by each kind of evidence. */
  judged: { canary: number; usage: number; id: number };
  /** No evidence at all: why (never a pass). */
  inconclusive?: string;
}

/** Lone requests a probe sends to learn the evidence (distinct prompt sizes), and how many more while few echoed. */
export const LONE_SAMPLES = 6;
export const LONE_SAMPLES_MAX = 10;
/** Lone replies repeating their own canary that end the lone phase early. */
export const LONE_ECHOES_WANTED = 3;

/** What lone requests show the target gives: echoes, a usage fit, distinct ids. */
export function learnEvidence(lone: readonly CrossTalkSample[]): CrossTalkEvidence {
  const missing: string[] = [];
  // A lone reply that is another lone request's (crossedLone) teaches nothing.
  const crossedFindings = crossedLone(lone);
  const crossed = new Set(crossedFindings.map((f) => lone[f.request]));
  if (crossed.size > 0) missing.push(`${crossed.size} of ${lone.length} lone replies carry another lone request's canary, not their own (each the reply of another request)`);
  lone = lone.filter((s) => !crossed.has(s));
  const asked = lone.filter((s) => s.request.canary);
  const echoed = asked.filter((s) => canariesIn(s.reply.content ?? '').includes(s.request.canary!));
  // Two replies repeating their own random canary cannot be chance; the others may have met
  // other traffic on a shared (or broken) target.
  const echo = echoed.length >= 2;
  if (!echo) missing.push(asked.length < 2 ? 'no canary asked for alone' : `lone replies do not repeat their canary (${echoed.length} of ${asked.length} did)`);
  // Replies shown to be their own (their canary) teach the usage fit.
  const usage = fitUsage(echo ? echoed : lone);
  if (typeof usage === 'string') missing.push(usage);
  const ids = lone.map((s) => s.reply.id).filter((id): id is string => typeof id === 'string' && id !== '');
  const distinctIds = ids.length >= 2 && new Set(ids).size === ids.length;
  if (!distinctIds) missing.push(ids.length < 2 ? 'lone replies carry no completion id' : 'lone replies share a completion id (a fixed id is legal, so ids say nothing)');
  return { echo, ...(typeof usage === 'string' ? {} : { usage }), distinctIds, crossed: crossedFindings, missing };
}

/**
 * Lone replies that carry another lone request's canary and not their own: each is that
 * request's reply, though no other request of ours was in flight (a reply cache keyed on the
 * wrong thing). Indices into `lone`: the reply's request, and the request whose reply it was.
 */
export function crossedLone(lone: readonly CrossTalkSample[]): CrossTalkFinding[] {
  const byCanary = new Map<string, number>();
  lone.forEach((s, i) => { if (s.request.canary) byCanary.set(s.request.canary, i); });
  const out: CrossTalkFinding[] = [];
  lone.forEach((s, i) => {
    const own = s.request.canary;
    if (!own) return;
    const other = foreignCanaries(own, s.reply.content ?? '', s.request.held).map((c) => byCanary.get(c)).find((j) => j !== undefined && j !== i);
    if (other !== undefined) out.push({ kind: 'canary', request: i, other, detail: `the reply carries ${nameOf(lone, other)}'s canary ${lone[other]!.request.canary}, not its own ${own}` });
  });
  return out;
}

/**
 * A straight line from the client's prompt size to the target's prompt_tokens, or why there
 * is none. The line through two lone replies that the most others agree with (within two
 * tokens): a lone reply that met other traffic on the way does not bend it.
 */
export function fitUsage(lone: readonly CrossTalkSample[]): UsageFit | string {
  const pts = lone.filter((s) => Number.isFinite(s.reply.promptTokens)).map((s) => [s.request.promptSize, s.reply.promptTokens!] as const);
  if (pts.length < 2) return 'lone replies carry no usage.prompt_tokens';
  if (new Set(pts.map(([x]) => x)).size < 2) return 'lone requests of one prompt size cannot show how the target counts';
  let best: { slope: number; offset: number; inliers: Array<readonly [number, number]> } | undefined;
  for (let i = 0; i < pts.length; i++) {
    for (let j = i + 1; j < pts.length; j++) {
      const [x1, y1] = pts[i]!;
      const [x2, y2] = pts[j]!;
      if (x1 === x2) continue;
      const slope = (y2 - y1) / (x2 - x1);
      if (!(slope > 0)) continue; // a count that does not grow with the prompt tells no prompt from another
      const offset = y1 - slope * x1;
      const inliers = pts.filter(([x, y]) => Math.abs(y - (slope * x + offset)) <= 2);
      if (!best || inliers.length > best.inliers.length) best = { slope, offset, inliers };
    }
  }
  const need = Math.min(pts.length, Math.max(2, Math.ceil(pts.length / 2)));
  if (!best || best.inliers.length < need) return `lone replies' usage.prompt_tokens do not follow the prompt's size by one growing line (${best?.inliers.length ?? 0} of ${pts.length} on the best one)`;
  // Least squares over the replies that agree: the line a rounding counter follows.
  const ins = best.inliers;
  const mx = ins.reduce((a, [x]) => a + x, 0) / ins.length;
  const my = ins.reduce((a, [, y]) => a + y, 0) / ins.length;
  const sxx = ins.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const slope = sxx > 0 ? ins.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx : best.slope;
  const offset = my - slope * mx;
  const worst = Math.max(...ins.map(([x, y]) => Math.abs(y - (slope * x + offset))));
  // A count within two tokens of the line (or twice the agreeing replies' worst miss) is that prompt's.
  const tolerance = Math.max(2, worst * 2);
  const span = Math.max(...ins.map(([x]) => x)) - Math.min(...ins.map(([x]) => x));
  if (span * slope < 4 * tolerance) return 'lone prompts too alike in length for usage to tell one from another';
  return { slope, offset, tolerance };
}

function nameOf(samples: readonly CrossTalkSample[], i: number): string {
  return samples[i]!.request.label ?? `request ${i + 1}`;
}

function overlaps(a: CrossTalkRequest, b: CrossTalkRequest): boolean {
  if (a.startMs === undefined || a.endMs === undefined || b.startMs === undefined || b.endMs === undefined) return true;
  return a.startMs < b.endMs && b.startMs < a.endMs;
}

/** Judges concurrent samples with what the lone ones showed. */
export function judgeCrossTalk(ev: CrossTalkEvidence, samples: readonly CrossTalkSample[]): CrossTalkJudgement {
  const byCanary = new Map<string, number>();
  samples.forEach((s, i) => { if (s.request.canary) byCanary.set(s.request.canary, i); });
  const ledger = new CrossTalkLedger<number>(ev, (i) => samples[i]!, (i) => nameOf(samples, i));
  const all = samples.map((_, i) => i);
  for (const i of all) ledger.judge(i, (c) => byCanary.get(c), all);
  const findings = ledger.findings().map((f) => ({ kind: f.kind, request: f.request, other: f.other, detail: f.detail }));
  const any = ledger.judged.canary + ledger.judged.usage + ledger.judged.id;
  return {
    findings, judged: ledger.judged,
    ...(any === 0 ? { inconclusive: `no evidence of whose reply is whose: ${ev.missing.join('; ') || 'no concurrent reply carried a canary, usage or id'}` } : {}),
  };
}

export interface LedgerFinding<T> { kind: CrossTalkFinding['kind']; request: T; other: T; detail: string }

/**
 * SVC-9's judgement one reply at a time, in the order of their requests' start: a batch
 * judges every sample at once, a long load run each reply once what it needs is known
 * (the evidence, the replies in flight beside it, the request its canaries name), so it
 * can drop the reply after. `T` is how the caller names a reply.
 */
export class CrossTalkLedger<T> {
  readonly judged = { canary: 0, usage: 0, id: 0 };
  private readonly replyFindings: Array<LedgerFinding<T>> = [];
  private readonly idFindings: Array<LedgerFinding<T>> = [];
  private readonly firstById = new Map<string, T>();

  /** `onFinding`: each finding as it is made, not kept here (a long run keeps a bounded few). `maxIds`: ids remembered for (c), the oldest forgotten past it (a bounded run: a repeat that far apart was in flight with no first holder anyway). */
  constructor(readonly evidence: CrossTalkEvidence, private readonly sampleOf: (t: T) => CrossTalkSample, private readonly nameOf: (t: T) => string, private readonly maxIds = Infinity, private readonly onFinding?: (f: LedgerFinding<T>) => void) {}

  /**
   * Judges reply `t`, after every reply whose request started before it. `ownerOf`: the
   * judged reply whose request carried a canary (all of the batch's, wherever it is);
   * `partners`: replies in start order, at least every one whose time overlaps `t`'s.
   */
  judge(t: T, ownerOf: (canary: string) => T | undefined, partners: Iterable<T>): void {
    const ev = this.evidence;
    const s = this.sampleOf(t);
    let found: LedgerFinding<T> | undefined;
    // (a) another request's canary, and not its own: proof whatever the lone replies showed.
    if (s.request.canary && s.reply.content !== undefined) {
      const foreign = foreignCanaries(s.request.canary, s.reply.content, s.request.held);
      const other = foreign.map((c) => ownerOf(c)).find((j) => j !== undefined && j !== t);
      if (other !== undefined || (ev.echo && canariesIn(s.reply.content).includes(s.request.canary))) this.judged.canary++;
      if (other !== undefined) found = { kind: 'canary', request: t, other, detail: `the reply carries ${this.nameOf(other)}'s canary ${this.sampleOf(other).request.canary}, not its own ${s.request.canary}` };
    }
    // (b) prompt_tokens that fit another in-flight prompt and not its own.
    if (ev.usage && Number.isFinite(s.reply.promptTokens)) {
      const u = ev.usage;
      const expected = (r: CrossTalkRequest) => u.slope * r.promptSize + u.offset;
      const off = (r: CrossTalkRequest) => Math.abs(s.reply.promptTokens! - expected(r));
      // The tolerance grows with the prompt: a target's own tokenizer counts each random canary a few
      // tokens apart from ours (a legal target counted 103 where the line said 98, on a 106-token prompt).
      const tolerance = (r: CrossTalkRequest) => Math.max(u.tolerance, USAGE_RELATIVE_TOLERANCE * expected(r));
      const fits = (r: CrossTalkRequest) => off(r) <= tolerance(r);
      this.judged.usage++;
      // Far from its own prompt's count (twice the tolerance: a noisy count is no swap), close to that
      // of another whose prompt is longer or shorter by more than canaries can make it.
      if (!found && off(s.request) > 2 * tolerance(s.request)) {
        let other: T | undefined;
        for (const o of partners) {
          if (o === t) continue;
          const r = this.sampleOf(o).request;
          if (overlaps(s.request, r) && Math.abs(r.promptSize - s.request.promptSize) >= CANARY_COUNT_SPREAD && fits(r)) { other = o; break; }
        }
        if (other !== undefined) {
          const r = this.sampleOf(other).request;
          found = { kind: 'usage', request: t, other, detail: `usage.prompt_tokens ${s.reply.promptTokens} fits ${this.nameOf(other)}'s prompt (${r.promptSize}, expected about ${Math.round(u.slope * r.promptSize + u.offset)}), not its own (${s.request.promptSize}, expected about ${Math.round(u.slope * s.request.promptSize + u.offset)})` };
        }
      }
    }
    if (found) this.keep(found, this.replyFindings);
    // (c) one completion id on two concurrent replies: the first reply that carried it, if in flight beside this one.
    const id = s.reply.id;
    if (ev.distinctIds && typeof id === 'string' && id !== '') {
      this.judged.id++;
      const j = this.firstById.get(id);
      if (j === undefined) {
        this.firstById.set(id, t);
        if (this.firstById.size > this.maxIds) this.firstById.delete(this.firstById.keys().next().value!);
      } else if (!found && overlaps(s.request, this.sampleOf(j).request)) {
        this.keep({ kind: 'id', request: t, other: j, detail: `the reply carries completion id ${id}, as ${this.nameOf(j)}'s does` }, this.idFindings);
      }
    }
  }

  /** Kept here, or handed to `onFinding` (which then keeps what it needs). */
  private keep(f: LedgerFinding<T>, list: Array<LedgerFinding<T>>): void {
    if (this.onFinding) this.onFinding(f);
    else list.push(f);
  }

  /** The findings in the batch's order: by canary or usage, then by id; one per reply. */
  findings(): Array<LedgerFinding<T>> {
    return [...this.replyFindings, ...this.idFindings];
  }
}

/** Replies whose request overlapped no other request's time (lone), and the rest. */
export function splitLone<T extends { start: number; end: number }>(all: readonly T[]): { lone: T[]; busy: T[] } {
  const sorted = [...all].sort((a, b) => a.start - b.start);
  const lone: T[] = [];
  const busy: T[] = [];
  let maxEnd = -Infinity;
  sorted.forEach((s, i) => {
    const next = sorted[i + 1];
    if (s.start >= maxEnd && (!next || next.start >= s.end)) lone.push(s);
    else busy.push(s);
    maxEnd = Math.max(maxEnd, s.end);
  });
  return { lone, busy };
}

export interface TrafficJudgement extends CrossTalkJudgement {
  /** The replies judged: the findings' indices point here. */
  samples: CrossTalkSample[];
  /** Of the probe's replies, those whose request overlapped another's. */
  concurrent: number;
  lone: number;
  evidence: CrossTalkEvidence;
}

/**
 * A probe's concurrent traffic judged on its own: its requests that overlapped no other
 * (and `alone`, sent alone beforehand) teach the evidence, and the others are judged with
 * it; `judgeAll` judges those alone too (a probe that runs beside the rest of a run's
 * traffic, where a reply may be another's whatever its own probe did). A request without
 * times counts as overlapping every other.
 */
export function judgeTraffic(all: readonly CrossTalkSample[], alone: readonly CrossTalkSample[] = [], opts: { judgeAll?: boolean } = {}): TrafficJudgement {
  const timed = all.map((s) => ({ s, start: s.request.startMs ?? NaN, end: s.request.endMs ?? NaN }));
  const split = splitLone(timed.filter((x) => Number.isFinite(x.start) && Number.isFinite(x.end)));
  const lone = [...alone, ...split.lone.map((x) => x.s)];
  const loneSet = new Set(split.lone.map((x) => x.s));
  const busy = all.filter((s) => !loneSet.has(s));
  const samples = opts.judgeAll ? [...all] : busy;
  const evidence = learnEvidence(lone);
  const j: CrossTalkJudgement = lone.length === 0
    ? { findings: [], judged: { canary: 0, usage: 0, id: 0 }, inconclusive: 'no request ran alone to learn from (every one overlapped another): no evidence of whose reply is whose' }
    : samples.length === 0
      ? { findings: [], judged: { canary: 0, usage: 0, id: 0 }, inconclusive: 'no two requests were in flight together: nothing concurrent to judge' }
      : judgeCrossTalk(evidence, samples);
  return { ...j, samples, concurrent: busy.length, lone: lone.length, evidence };
}

/** One finding as a line: which request got whose reply, with the keys' labels and both curl lines. */
export function describeFinding(f: CrossTalkFinding, samples: readonly CrossTalkSample[]): string {
  const a = samples[f.request]!.request;
  const b = samples[f.other]!.request;
  const keys = a.key === b.key ? `both sent with the ${a.key} key` : `sent with the ${a.key} key, got the reply of a request sent with the ${b.key} key`;
  return `${nameOf(samples, f.request)} (${keys}): ${f.detail}${a.curl ? `\n  this request: ${a.curl}` : ''}${b.curl ? `\n  the other:    ${b.curl}` : ''}`;
}
