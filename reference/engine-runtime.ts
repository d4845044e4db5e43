// Stryker disable all: [not-api] banner
// The engine model as one running server holds it (the model and its o200k_base
// tokenizer), and the prompt and reply tokens it counts; the reply layer serves them.
import { EngineModel, ENGINE_MAX_REPLY_TOKENS, loadTokenizer, type EngineModelOptions, type Tokenizer } from './engine-model.ts';
import { contentText, generateReply } from './generate.ts';

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
