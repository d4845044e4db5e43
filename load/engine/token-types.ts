// A request's token counts as a figure with its source: what an outcome carries
// (lean-client.ts) and what token-count.ts derives, in a file both import.
export type TokenSource = 'usage' | 'tokenizer' | 'none';

export interface TokenCounts {
  prompt?: number;
  promptSource: TokenSource;
  completion?: number;
  completionSource: TokenSource;
  /** The tokenizer's count of the message contents sent (beside usage, to check it). */
  promptSent?: number;
}
