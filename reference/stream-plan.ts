// The sequence of SSE payloads that make up one streamed reply, OpenAI-style:
// a role chunk, one chunk per word, a finish chunk, the optional usage chunk, then
// [DONE]. Every chunk-content defect and variant is applied here; framing is the
// SSE writer's job.
import type { RequestContext } from './request-context.ts';
import { randomSuffix, usageBody, type ReplyPlan } from './completion.ts';
import { DONE, type StreamStep } from './sse-writer.ts';

export function planStream(ctx: RequestContext, plan: ReplyPlan): StreamStep[] {
  const d = (name: Parameters<RequestContext['defect']>[0]) => ctx.defect(name);
  const extra = ctx.variant('extra-fields');
  // Stryker disable next-line ConditionalExpression,LogicalOperator: [usage] EV-9
  const withUsage = plan.includeUsage && !ctx.variant('no-usage-chunk');
  let seq = 0;

  const chunkId = (): string => {
    if (d('stream-ids-change')) return `chatcmpl-${randomSuffix()}`;
    if (d('stream-id-no-prefix')) return plan.id.replace(/^chatcmpl-/, 'cmpl-');
    return plan.id;
  };

  const choice = (index: number, delta: Record<string, unknown>, finish: string | null): Record<string, unknown> => {
    if (extra) delta = { ...delta, x_reference_delta: seq };
    const out: Record<string, unknown> = {
      index,
      // stream-delta-not-object: the content itself where the delta object belongs.
      delta: d('stream-delta-not-object') ? String(delta.content ?? '') : delta,
      logprobs: null,
      finish_reason: finish,
    };
    if (extra) out.x_reference_choice = true;
    return out;
  };

  const chunk = (choices: Record<string, unknown>[], usage: Record<string, unknown> | null = null): StreamStep => {
    const c: Record<string, unknown> = {
      id: chunkId(),
      object: d('stream-wrong-chunk-object') ? 'chat.completion' : 'chat.completion.chunk',
      created: plan.created,
      model: plan.model,
      choices,
    };
    // OpenAI: with include_usage every chunk carries usage (null until the last one).
    // Stryker disable next-line ConditionalExpression: [usage] EV-9
    if (withUsage) c.usage = usage;
    if (extra) {
      c.system_fingerprint = 'fp_reference';
      c.x_reference_seq = seq;
    }
    // Stryker disable next-line UpdateOperator: [gate] extra-fields
    seq++;
    return { kind: 'data', payload: JSON.stringify(c) };
  };

  const finishOf = (reason: string): string | null => {
    if (d('stream-no-finish-reason')) return null;
    if (d('stream-finish-length') && reason === 'stop') return 'length';
    return reason;
  };

  const steps: StreamStep[] = [];
  const roleDelta = (): Record<string, unknown> => {
    // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4; killed: EV-8
    const delta: Record<string, unknown> = { role: 'assistant', content: ctx.variant('role-chunk-null-content') ? null : '' };
    if (d('stream-no-role')) delete delta.role;
    if (ctx.variant('repetitive-deltas')) delete delta.content; // a role-only first delta
    return delta;
  };
  // cumulative-deltas: every content delta is the reply so far, as some fronts re-emit it.
  const sent = new Map<number, string>();
  const snapshotGateway = d('snapshot-deltas-gateway');
  const contentOf = (index: number, piece: string): string => {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: [gate] cumulative-deltas, snapshot-deltas-gateway EV-12
    if (!d('cumulative-deltas') && !snapshotGateway) return piece;
    // Stryker disable next-line LogicalOperator,StringLiteral: [gate] cumulative-deltas EV-12
    const so = (sent.get(index) ?? '') + piece;
    sent.set(index, so);
    return so;
  };

  if (ctx.variant('one-chunk')) {
    for (const c of plan.choices) {
      const delta = roleDelta();
      delta.content = d('stream-empty-content') ? '' : c.text;
      steps.push(chunk([choice(c.index, delta, finishOf(c.finishReason))]));
    }
  } else {
    for (const c of plan.choices) steps.push(chunk([choice(c.index, roleDelta(), null)]));
    const split = (text: string) => (ctx.variant('repetitive-deltas') ? [...REPETITIVE_OPENING, ...splitContent(text, false)] : splitContent(text, ctx.variant('char-per-chunk')));
    // The engine model plans its pieces (tokens); otherwise the text is cut into words.
    // Stryker disable next-line ConditionalExpression: [gate] stream-utf8-split EV-4
    const pieces = plan.choices.map((c) => (c.pieces ?? (d('stream-utf8-split') ? split(c.text).flatMap(splitBytes) : split(c.text))));
    const longest = Math.max(0, ...pieces.map((p) => p.length));
    // Stryker disable next-line EqualityOperator: [equiv] past reply; killed: BRAIN-5
    for (let k = 0; k < longest; k++) {
      plan.choices.forEach((c, i) => {
        const piece = pieces[i]![k];
        // Stryker disable next-line ConditionalExpression: [not-shown] empty delta; killed: BRAIN-5
        if (piece === undefined) return;
        steps.push(chunk([choice(c.index, { content: d('stream-empty-content') ? '' : contentOf(c.index, piece) }, null)]));
      });
    }
    for (const c of plan.choices) {
      // snapshot-deltas-gateway: a closing chunk, then the finish chunk, each with the whole reply again.
      // Stryker disable next-line all: [unreached] snapshot-deltas-gateway EV-12
      if (snapshotGateway) steps.push(chunk([choice(c.index, { content: c.text }, null)]));
      // Stryker disable next-line ConditionalExpression: [unreached] snapshot-deltas-gateway EV-12
      // finish-chunk-restates-reply: ordinary deltas, then the finish chunk carries the whole reply again.
      // Stryker disable next-line ConditionalExpression,LogicalOperator: [gate] finish-chunk-restates-reply EV-12
      steps.push(chunk([choice(c.index, snapshotGateway || d('finish-chunk-restates-reply') ? { content: c.text } : {}, finishOf(c.finishReason))]));
      if (d('stream-two-finish-reasons')) steps.push(chunk([choice(c.index, {}, finishOf(c.finishReason))]));
      if (d('stream-content-after-finish')) steps.push(chunk([choice(c.index, { content: ' Postscript.' }, null)]));
    }
  }
  // Stryker disable next-line ConditionalExpression: [usage] EV-9
  if (withUsage) steps.push(chunk([], usageBody(ctx, plan)));
  if (d('stream-chunk-not-json')) steps.splice(Math.min(2, steps.length), 0, { kind: 'data', payload: 'hello' });
  if (!d('stream-no-done')) steps.push({ kind: 'data', payload: DONE });
  if (d('stream-data-after-done')) steps.push(chunk([choice(0, { content: ' Late.' }, null)]));
  // usage-data-after-done: the usage chunk is sent again after [DONE] on include_usage streams.
  // Stryker disable next-line all: [gate] usage-data-after-done EV-6
  if (d('usage-data-after-done') && withUsage) steps.push(chunk([], usageBody(ctx, plan)));
  if (d('stream-never-closes')) steps.push({ kind: 'hang' });
  if (d('stream-stalls')) {
    steps.splice(2);
    steps.push({ kind: 'hang' });
  }
  return steps;
}

/**
 * repetitive-deltas: the reply opens with a word repeated on purpose, one delta each
 * ("ha", "ha", "ha"), an empty delta, then one-character deltas of a repetitive run
 * ("a", "a", "a"), then the words; legal streams a snapshot rule must not mistake.
 */
// Stryker disable next-line StringLiteral,ArrayDeclaration: [gate] repetitive-deltas
const REPETITIVE_OPENING = ['ha', 'ha', 'ha', '', ' ', 'a', 'a', 'a', '', ' ', 'hahaha aaa '];

/**
 * stream-utf8-split: a piece with a multi-byte character is cut inside it, by bytes, and
 * each half decoded alone (both halves carry U+FFFD), as a byte-level detokenizer does.
 */
// Stryker disable all: [gate] stream-utf8-split EV-4
function splitBytes(piece: string): string[] {
  const bytes = Buffer.from(piece, 'utf8');
  const at = bytes.findIndex((b) => b >= 0x80);
  if (at === -1) return [piece];
  return [bytes.subarray(0, at + 1).toString('utf8'), bytes.subarray(at + 1).toString('utf8')];
}
// Stryker restore all

/** Content pieces whose concatenation is the text: words (with their leading space) or characters. */
export function splitContent(text: string, perChar: boolean): string[] {
  // Stryker disable next-line ConditionalExpression,StringLiteral,ArrayDeclaration: [gate] capped-empty-reply; killed: BRAIN-5
  if (text === '') return [];
  // Stryker disable next-line ConditionalExpression: [gate] char-per-chunk
  if (perChar) return Array.from(text);
  // Stryker disable next-line StringLiteral,ConditionalExpression,EqualityOperator: [reply] RES-MSG-1 EV-4
  return text.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`));
}
