// What lets a client tell whose reply it got: the reference repeats a canary its request
// holds (as a model follows "begin your reply with the code ..."), unless never-echoes;
// usage-own-count counts prompt tokens its own way (legal: the spec fixes no tokenizer).
import type { RequestContext } from './request-context.ts';
import { contentText } from './generate.ts';

// Stryker disable next-line Regex: [reply] canary echo or not (never-echoes)
const CANARY = /\bCG[0-9A-Z]{10}\b/;

/** The reply begun with the request's canary (in place of its first word, so its length stays), when echoes are on. */
export function withCanary(ctx: RequestContext, messages: unknown[], reply: string): string {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [reply] canary echo or not (never-echoes)
  if (ctx.variant('never-echoes') || reply === '') return reply;
  // Stryker disable next-line BlockStatement: [reply] canary echo or not (never-echoes)
  for (const m of messages) {
    // Stryker disable next-line OptionalChaining: [unreached] a null message is refused 400 before a reply is planned
    const text = contentText((m as { content?: unknown } | null)?.content);
    const hit = text.match(CANARY)?.[0];
    // Stryker disable next-line ConditionalExpression,MethodExpression,StringLiteral: [reply] canary echo or not, the words after it
    if (hit) return [hit, ...reply.split(' ').slice(1)].join(' ');
  }
  return reply;
}

/** usage-own-count: one and a half of ours per token, five more for the framing. */
export function ownPromptCount(ctx: RequestContext, tokens: number): number {
  return ctx.variant('usage-own-count') ? Math.round(tokens * 1.5) + 5 : tokens;
}
