// SVC-9 and EV-13 over one phase of a load run. Requests that overlapped no other are
// the "lone" ones: they teach what evidence the target gives (its canary echo, its usage
// count, its ids: lib/spec/rules/cross-talk.ts); every other success is judged with it.
// Each stream's delivery is judged by lib/spec/rules/stream-delivery.ts from its figures.
import { judgeCrossTalk, learnEvidence, splitLone, type CrossTalkJudgement, type CrossTalkSample } from '../../lib/spec/rules/cross-talk.ts';
import { judgeDeliveryFigures } from '../../lib/spec/rules/stream-delivery.ts';
import type { Findings } from '../report/findings.ts';
import type { Outcome } from './lean-client.ts';

/** Replies a phase keeps for the judgement (about 200 bytes each); later ones are counted, not judged. */
export const MAX_CROSS_TALK_SAMPLES = 100_000;

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
  private readonly samples: Array<CrossTalkSample & { start: number; end: number }> = [];
  private notKept = 0;
  private judgedStreams = 0;
  private bursts = 0;
  private burstExample: string | undefined;

  add(o: Outcome): void {
    if (!o.ok) return;
    this.judgeDelivery(o);
    if (this.samples.length >= MAX_CROSS_TALK_SAMPLES) { this.notKept++; return; }
    this.samples.push(sampleOf(o));
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
    for (const f of j.findings) {
      const what = f.kind === 'canary' ? 'another request\'s canary' : f.kind === 'usage' ? 'another request\'s prompt count (usage.prompt_tokens)' : 'another request\'s completion id';
      findings.add('SVC-9', `a reply under concurrent load carried ${what}${where}`, `${busy[f.request]!.request.label} (${busy[f.request]!.request.key} key) got the reply of ${busy[f.other]!.request.label} (${busy[f.other]!.request.key} key): ${f.detail}`);
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

function sampleOf(o: Outcome): CrossTalkSample & { start: number; end: number } {
  const from = o.wireAt ?? o.sentAt;
  return {
    start: from, end: o.endAt,
    request: { key: o.key, label: `request #${o.seq}`, promptSize: o.work?.promptTokens ?? NaN, startMs: from, endMs: o.endAt, ...(o.work?.canary ? { canary: o.work.canary } : {}) },
    reply: {
      ...(o.replyHead !== undefined || o.reply !== undefined ? { content: o.replyHead ?? o.reply } : {}),
      ...(o.usagePromptTokens !== undefined ? { promptTokens: o.usagePromptTokens } : {}),
      ...(o.completionId !== undefined ? { id: o.completionId } : {}),
    },
  };
}

function pct(a: number, b: number): string {
  return `${((100 * a) / b).toFixed(1)} %`;
}
