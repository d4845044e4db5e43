// SVC-9 and EV-13 over one phase of a load run. Requests that overlapped no other are
// the "lone" ones: they teach what evidence the target gives (its canary echo, its usage
// count, its ids: lib/spec/rules/cross-talk.ts); every other success is judged with it.
// Each stream's delivery is judged by lib/spec/rules/stream-delivery.ts from its figures.
import { canariesIn, judgeCrossTalk, learnEvidence, splitLone, type CrossTalkJudgement, type CrossTalkSample } from '../../lib/spec/rules/cross-talk.ts';
import { judgeDeliveryFigures } from '../../lib/spec/rules/stream-delivery.ts';
import type { Findings } from '../report/findings.ts';
import type { LeanRequest, Outcome } from './lean-client.ts';

/** Replies a phase keeps for the judgement (about 400 bytes each); later ones are counted, not judged. */
export const MAX_CROSS_TALK_SAMPLES = 100_000;
/** Requests kept for curl lines besides those in flight: the last ones answered (a swap's partner was in flight beside it). */
export const RECENT_REQUESTS = 256;
/** Replies that showed another's canary or a repeated id whose two requests get curl lines (the first ones). */
export const MAX_REPRODUCED = 10;

type Sample = CrossTalkSample & { start: number; end: number; seq: number };

export interface CrossTalkSummary {
  /** judged: at least one kind of evidence; inconclusive: why not. */
  verdict: 'judged' | 'inconclusive';
  why?: string;
  replies: number;
  lone: number;
  judged_by: { canary: number; usage: number; id: number };
  /** Replies that were another request's. */
  findings: number;
  not_kept: number;
}

export interface DeliverySummary {
  /** Streams long and slow enough to judge (>= 32 content chunks, >= 1 s). */
  judged: number;
  /** Of those, delivered in one burst at their end. */
  one_burst: number;
  one_burst_share: number | null;
}

export class CrossTalkWatch {
  private readonly samples: Sample[] = [];
  private readonly inFlight = new Map<number, LeanRequest>();
  private readonly recent = new Map<number, LeanRequest>();
  private readonly recentIds = new Map<string, number>();
  private readonly curls = new Map<number, string>();
  private reproduced = 0;

  /** `curlOf`: a request's curl line (keys masked); without it, findings carry none. */
  constructor(private readonly curlOf?: (req: LeanRequest) => string) {}

  /** A request handed to the pool: kept while in flight and a while after, for the curl lines of a finding. */
  sent(req: LeanRequest): void {
    if (this.curlOf) this.inFlight.set(req.seq, req);
  }
  private notKept = 0;
  private judgedStreams = 0;
  private bursts = 0;
  private burstExample: string | undefined;

  add(o: Outcome): void {
    const req = this.inFlight.get(o.seq);
    if (req) {
      this.inFlight.delete(o.seq);
      this.recent.set(o.seq, req);
      if (this.recent.size > RECENT_REQUESTS) this.recent.delete(this.recent.keys().next().value!);
    }
    if (!o.ok) return;
    if (req && this.reproduced < MAX_REPRODUCED) this.keepCurls(o, req);
    this.judgeDelivery(o);
    if (this.samples.length >= MAX_CROSS_TALK_SAMPLES) { this.notKept++; return; }
    this.samples.push(sampleOf(o));
  }

  /** A reply that carries another request's canary, or an id a recent reply carried: both requests' curl lines, while they are at hand. */
  private keepCurls(o: Outcome, req: LeanRequest): void {
    const own = o.work?.canary;
    const foreign = own ? canariesIn(o.replyHead ?? o.reply ?? '').find((c) => c !== own) : undefined;
    let partner = foreign ? [...this.inFlight.values(), ...this.recent.values()].find((r) => r.work?.canary === foreign)?.seq : undefined;
    if (o.completionId !== undefined) {
      partner ??= this.recentIds.get(o.completionId);
      this.recentIds.set(o.completionId, o.seq);
      if (this.recentIds.size > RECENT_REQUESTS) this.recentIds.delete(this.recentIds.keys().next().value!);
    }
    const other = partner === undefined || partner === o.seq ? undefined : this.inFlight.get(partner) ?? this.recent.get(partner);
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

  /** Judges the phase and adds its findings (SVC-9 a MUST, EV-13 a SHOULD); `phase` names a step. */
  finish(findings: Findings, phase?: string, before: readonly Outcome[] = []): { cross_talk: CrossTalkSummary; delivery: DeliverySummary } {
    const where = phase ? ` (${phase})` : '';
    const split = splitLone(this.samples);
    // The requests sent alone before the run, and any of the run's that overlapped no other.
    const lone = [...before.filter((o) => o.ok).map(sampleOf), ...split.lone];
    const busy = split.busy;
    const evidence = learnEvidence(lone);
    const j: CrossTalkJudgement = lone.length === 0
      ? { findings: [], judged: { canary: 0, usage: 0, id: 0 }, inconclusive: 'no request ran alone to learn from (every one overlapped another): no evidence of whose reply is whose' }
      : judgeCrossTalk(evidence, busy);
    // Each kind's example is the first finding whose two requests have curl lines, where one has.
    const curlsOf = (f: (typeof j.findings)[number]) => {
      const a = this.curls.get(busy[f.request]!.seq);
      const b = this.curls.get(busy[f.other]!.seq);
      return a && b ? [`this request: ${a}`, `the other: ${b}`] : undefined;
    };
    const ordered = [...j.findings].sort((x, y) => Number(!!curlsOf(y)) - Number(!!curlsOf(x)));
    for (const f of ordered) {
      const what = f.kind === 'canary' ? 'another request\'s canary' : f.kind === 'usage' ? 'another request\'s prompt count (usage.prompt_tokens)' : 'another request\'s completion id';
      findings.add('SVC-9', `a reply under concurrent load carried ${what}${where}`, `${busy[f.request]!.request.label} (${busy[f.request]!.request.key} key) got the reply of ${busy[f.other]!.request.label} (${busy[f.other]!.request.key} key): ${f.detail}`, undefined, curlsOf(f));
    }
    if (this.bursts > 0) {
      findings.add('EV-13', `${this.bursts} of ${this.judgedStreams} long streams (${pct(this.bursts, this.judgedStreams)}) delivered in one burst at their end, as through a buffering proxy${where}`, this.burstExample);
    }
    return {
      cross_talk: {
        verdict: j.inconclusive ? 'inconclusive' : 'judged',
        ...(j.inconclusive ? { why: j.inconclusive } : {}),
        replies: this.samples.length, lone: lone.length, judged_by: j.judged, findings: j.findings.length, not_kept: this.notKept,
      },
      delivery: { judged: this.judgedStreams, one_burst: this.bursts, one_burst_share: this.judgedStreams ? this.bursts / this.judgedStreams : null },
    };
  }
}

function sampleOf(o: Outcome): Sample {
  const from = o.wireAt ?? o.sentAt;
  return {
    start: from, end: o.endAt, seq: o.seq,
    request: { key: o.key, label: `request #${o.seq}`, promptSize: o.work?.promptTokens ?? NaN, startMs: from, endMs: o.endAt, ...(o.work?.canary ? { canary: o.work.canary } : {}) },
    reply: {
      // Only the canaries the rule looks for: the reply's head is a chain of one string per chunk,
      // which kept 16 strings a request alive for the rest of the run (a long hold grew 1 MiB a minute).
      ...(o.replyHead !== undefined || o.reply !== undefined ? { content: canariesIn(o.replyHead ?? o.reply ?? '').join(' ') } : {}),
      ...(o.usagePromptTokens !== undefined ? { promptTokens: o.usagePromptTokens } : {}),
      ...(o.completionId !== undefined ? { id: o.completionId } : {}),
    },
  };
}

function pct(a: number, b: number): string {
  return `${((100 * a) / b).toFixed(1)} %`;
}
