// Stryker disable all: [not-api] banner
// How a reply is served when the engine model is on: its text cut into o200k_base
// tokens (one SSE content chunk per token, usage counted in those tokens), and its
// chunks released as the model produces the tokens, instead of the fixed delays.
import { EngineModel, ENGINE_MAX_REPLY_TOKENS, loadTokenizer, type EngineJob, type EngineModelOptions, type Tokenizer } from './engine-model.ts';
import { contentText, generateReply } from './generate.ts';
import { SseWriter } from './sse-writer.ts';
import { untilAborted } from './latency.ts';
import type { StreamStep } from './stream-plan.ts';
import type { RequestContext } from './request-context.ts';

export interface EngineRuntime {
  model: EngineModel;
  tokenizer: Tokenizer;
}

export async function startEngine(opts: EngineModelOptions): Promise<EngineRuntime> {
  return { model: new EngineModel(opts), tokenizer: await loadTokenizer() };
}

/** Prompt tokens as the model counts them: the tokens of every message's text (no per-message framing). */
export function enginePromptTokens(e: EngineRuntime, messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : m;
    n += e.tokenizer.encode(contentText(content)).length;
  }
  return n;
}

/**
 * Choice `index`'s reply as tokens: the usual reply of `words` words, or, when
 * max_tokens is given, exactly that many tokens (as a benchmark run that ignores the
 * end of sequence), capped at ENGINE_MAX_REPLY_TOKENS.
 */
export function engineReplyTokens(e: EngineRuntime, messages: unknown[], words: number, index: number, maxTokens: number | undefined): { pieces: string[]; truncated: boolean } {
  const want = maxTokens === undefined ? undefined : Math.min(maxTokens, ENGINE_MAX_REPLY_TOKENS);
  // Every word is at least one token, so `want` words are enough.
  const text = generateReply(messages, want ?? words, index);
  let tokens = e.tokenizer.encode(text);
  if (want !== undefined) tokens = tokens.slice(0, want);
  return { pieces: tokens.map((t) => e.tokenizer.decode([t])), truncated: want !== undefined };
}

/** Streams the planned steps, each content chunk once its token exists; the role chunk goes with the first. */
export async function playEngineStream(ctx: RequestContext, steps: StreamStep[], job: EngineJob, choices: number): Promise<void> {
  const writer = new SseWriter(ctx);
  writer.start();
  let sent = 0;
  for (const step of steps) {
    if (ctx.signal.aborted) return;
    if (step.kind === 'hang') {
      await untilAborted(ctx.signal);
      return;
    }
    // Data step s: role chunks (s < choices) with token 1, then one round of content chunks per token.
    const need = Math.min(job.total, Math.max(1, Math.floor(sent / Math.max(1, choices))));
    if (!(await job.until(need))) return;
    await writer.send(step.payload);
    sent++;
  }
  await writer.end();
}

/** Waits for the whole generation (a non-stream reply); false when the request was aborted first. */
export function engineDone(job: EngineJob): Promise<boolean> {
  return job.until(job.total);
}
