// What a reply is (plan) and how a non-stream chat completion looks on the wire,
// with every resource-shape defect applied here and nowhere else.
import { randomBytes } from 'node:crypto';
import type { RequestContext } from './request-context.ts';
import type { ChatRequest } from './chat-request.ts';
import { contentText, countWords, generateReply, promptTokens, truncateWords } from './generate.ts';
import { enginePromptTokens, engineReplyTokens } from './engine-runtime.ts';
import { ownPromptCount, withCanary } from './reply-identity.ts';

export interface PlannedChoice {
  index: number;
  text: string;
  finishReason: string;
  /** Engine model: the reply's tokens, one content chunk each (their concatenation is the text). */
  pieces?: string[];
}

export interface ReplyPlan {
  id: string;
  created: number;
  model: string;
  choices: PlannedChoice[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  includeUsage: boolean;
}

// Stryker disable next-line StringLiteral: [id-suffix] RES-CC-1
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomSuffix(length = 24): string {
  const bytes = randomBytes(length);
  // Stryker disable next-line StringLiteral: [id-suffix] RES-CC-1
  let s = '';
  // Stryker disable next-line ArithmeticOperator: [id-suffix] RES-CC-1
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return s;
}

/** Finish reasons as the server means them; ch-finish-nonstandard renames "length". */
function finishReasonFor(ctx: RequestContext, truncated: boolean): string {
  // Stryker disable next-line ConditionalExpression: [chat-8] max_tokens; killed: EV-5
  if (!truncated) return 'stop';
  return ctx.defect('ch-finish-nonstandard') ? 'max_tokens' : 'length';
}

/**
 * reply-in-kind (and the defects that need a non-ASCII reply): a request holding non-ASCII
 * words gets up to eight of them back after the reply, as a model answers in the user's language.
 */
function inKind(ctx: RequestContext, messages: unknown[], reply: string): string {
  // Stryker disable next-line all: [reply] RES-MSG-1 EV-4
  if (!ctx.variant('reply-in-kind') && !ctx.defect('content-length-chars') && !ctx.defect('stream-utf8-split')) return reply;
  // Stryker disable all: [gate] reply-in-kind, content-length-chars, stream-utf8-split
  const words = messages.flatMap((m) => contentText((m as { content?: unknown } | null)?.content).split(/\s+/)).filter((w) => /[^\x00-\x7f]/.test(w));
  return words.length ? `${reply} ${words.slice(0, 8).join(' ')}` : reply;
  // Stryker restore all
}

export function planReply(ctx: RequestContext, req: ChatRequest, model: string): ReplyPlan {
  const choices: PlannedChoice[] = [];
  let completion = 0;
  const engine = ctx.state.engine;
  const n = ctx.variant('n-ignored') ? 1 : req.n;
  for (let i = 0; i < n; i++) {
    // Stryker disable all: [unreached]
    if (engine) {
      const { pieces, truncated } = engineReplyTokens(engine, req.messages, ctx.state.opts.replyWords, i, req.maxTokens);
      completion += pieces.length;
      choices.push({ index: i, text: pieces.join(''), finishReason: finishReasonFor(ctx, truncated), pieces });
      continue;
    }
    // Stryker restore all
    const full = withCanary(ctx, req.messages, inKind(ctx, req.messages, generateReply(req.messages, ctx.state.opts.replyWords, i)));
    // capped-empty-reply: a capped request spends its budget before any visible text.
    const { text, truncated } = ctx.variant('capped-empty-reply') && req.maxTokens !== undefined ? { text: '', truncated: true } : truncateWords(full, req.maxTokens);
    completion += countWords(text);
    choices.push({ index: i, text, finishReason: finishReasonFor(ctx, truncated) });
  }
  // Stryker disable next-line all: [unreached]
  const prompt = engine ? enginePromptTokens(engine, req.messages) : ownPromptCount(ctx, promptTokens(req.messages));
  return {
    id: `chatcmpl-${randomSuffix()}`,
    created: Math.floor(Date.now() / 1000),
    model,
    choices,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    includeUsage: req.includeUsage,
  };
}

function completionId(ctx: RequestContext, plan: ReplyPlan): string {
  if (ctx.defect('cc-id-no-prefix')) return plan.id.replace(/^chatcmpl-/, 'cmpl-');
  if (ctx.defect('cc-id-empty-suffix')) return 'chatcmpl-';
  if (ctx.defect('flaky-cc-id')) {
    // Deterministic flakiness: the 1st, 3rd, 5th ... non-stream completion is wrong.
    const n = ++ctx.state.counters.jsonCompletions;
    if (n % 2 === 1) return 'cmpl-x';
  }
  return plan.id;
}

export function usageBody(ctx: RequestContext, plan: ReplyPlan): Record<string, unknown> {
  const u: Record<string, unknown> = { ...plan.usage };
  const { prompt_tokens: p, completion_tokens: c } = plan.usage;
  if (ctx.defect('usage-tokens-string')) {
    u.prompt_tokens = String(p);
    u.completion_tokens = String(c);
    u.total_tokens = String(p + c);
  }
  if (ctx.defect('usage-negative')) {
    u.prompt_tokens = -1;
    u.total_tokens = c - 1;
  }
  if (ctx.defect('usage-float')) {
    u.completion_tokens = 12.5;
    u.total_tokens = p + 12.5;
  }
  if (ctx.defect('usage-total-mismatch')) u.total_tokens = p + c + 7;
  if (ctx.defect('usage-zero-completion')) {
    u.completion_tokens = 0;
    u.total_tokens = p;
  }
  if (ctx.variant('extra-fields')) {
    u.prompt_tokens_details = { cached_tokens: 0 };
    u.x_reference_tokenizer = 'whitespace';
  }
  return u;
}

export function completionBody(ctx: RequestContext, plan: ReplyPlan): Record<string, unknown> {
  const extra = ctx.variant('extra-fields');
  const choices = plan.choices.map((c) => {
    const message: Record<string, unknown> = { role: 'assistant', content: c.text };
    if (ctx.defect('ch-role-user')) message.role = 'user';
    if (ctx.defect('msg-content-parts')) message.content = [{ type: 'text', text: c.text }];
    if (ctx.defect('msg-content-null')) message.content = null;
    if (extra) {
      message.refusal = null;
      message.x_reference_voice = 'plain';
    }
    let finish: string | null = c.finishReason;
    if (finish === 'stop' && ctx.defect('ch-finish-null')) finish = null;
    if (finish === 'stop' && ctx.defect('ch-finish-done')) finish = 'done';
    let index: unknown = c.index;
    if (ctx.defect('ch-index-string')) index = String(c.index);
    if (ctx.defect('ch-index-from-1')) index = c.index + 1;
    if (ctx.defect('ch-index-repeated')) index = 0;
    const choice: Record<string, unknown> = { index, message, logprobs: null, finish_reason: finish };
    if (ctx.defect('ch-message-missing')) delete choice.message;
    if (extra) choice.x_reference_score = 1;
    return choice;
  });

  const body: Record<string, unknown> = {
    id: completionId(ctx, plan),
    object: ctx.defect('cc-object-wrong') ? 'text_completion' : 'chat.completion',
    created: plan.created,
    model: ctx.defect('cc-model-empty') ? '' : plan.model,
    choices: ctx.defect('cc-choices-empty') ? [] : choices,
    usage: usageBody(ctx, plan),
  };
  if (ctx.defect('cc-model-missing')) delete body.model;
  if (ctx.defect('cc-usage-missing')) delete body.usage;
  if (extra) {
    body.system_fingerprint = 'fp_reference';
    body.x_reference_trace = randomSuffix(12);
  }
  if (ctx.defect('cc-not-a-completion')) return { reply: choices.map((c) => (c as { message?: { content?: unknown } }).message?.content).join('') };
  return body;
}
