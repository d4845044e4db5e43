// What lets a client tell whose reply it got: the reference repeats a canary its request
// holds (as a model follows "begin your reply with the code ..."), unless never-echoes;
// usage-own-count counts prompt tokens its own way (legal: the spec fixes no tokenizer).
import type { RequestContext } from './request-context.ts';
import { contentText } from './generate.ts';

const CANARY = /\bCG[0-9A-Z]{10}\b/;

/** The reply begun with the request's canary (in place of its first word, so its length stays), when echoes are on. */
export function withCanary(ctx: RequestContext, messages: unknown[], reply: string): string {
  if (ctx.variant('never-echoes') || reply === '') return reply;
  for (const m of messages) {
    const hit = contentText((m as { content?: unknown } | null)?.content).match(CANARY);
    if (hit) return [hit[0], ...reply.split(' ').slice(1)].join(' ');
  }
  return reply;
}

/** usage-own-count: one and a half of ours per token, five more for the framing. */
export function ownPromptCount(ctx: RequestContext, tokens: number): number {
  return ctx.variant('usage-own-count') ? Math.round(tokens * 1.5) + 5 : tokens;
}
