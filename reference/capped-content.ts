// capped-content-null: a request with a token cap gets its reply without text as a
// string: message.content null in a completion, no delta.content in any chunk of a
// stream (as servers that count a reasoning budget against the cap do).
import type { ChatRequest } from './chat-request.ts';
import type { RequestContext } from './request-context.ts';
import type { StreamStep } from './sse-writer.ts';
// Stryker disable all: [gate] capped-content-null RES-MSG-1 EV-4

export function contentDropped(ctx: RequestContext, req: ChatRequest): boolean {
  return ctx.defect('capped-content-null') && req.maxTokens !== undefined;
}

/** Every choice's message.content null. */
export function nullContent(body: Record<string, unknown>): Record<string, unknown> {
  for (const ch of (body.choices as Array<{ message?: Record<string, unknown> }> | undefined) ?? []) if (ch.message) ch.message.content = null;
  return body;
}

/** Every chunk without delta.content. */
export function withoutContent(steps: StreamStep[]): StreamStep[] {
  return steps.map((s) => {
    if (s.kind !== 'data' || !s.payload.startsWith('{')) return s;
    const chunk = JSON.parse(s.payload) as { choices?: Array<{ delta?: Record<string, unknown> }> };
    for (const ch of chunk.choices ?? []) if (ch.delta) delete ch.delta.content;
    return { ...s, payload: JSON.stringify(chunk) };
  });
}
