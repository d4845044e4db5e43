// A request's prompt and completion tokens with their source: the target's usage when
// it reported them, else the tokenizer's count of what was sent (the workload counted
// it when it built the request) or received (the reply's text). Never chunks.
import type { Outcome } from './lean-client.ts';
import type { Tokenizer } from '../workload/tokenizer.ts';
import type { TokenCounts } from './token-types.ts';

export function tokenCounts(o: Outcome, tokenizer: Tokenizer | undefined): TokenCounts {
  const promptSent = o.work?.promptTokens;
  const out: TokenCounts = { promptSource: 'none', completionSource: 'none' };
  if (promptSent !== undefined) out.promptSent = promptSent;
  if (o.usagePromptTokens !== undefined) {
    out.prompt = o.usagePromptTokens;
    out.promptSource = 'usage';
  } else if (promptSent !== undefined && o.status !== undefined) {
    out.prompt = promptSent;
    out.promptSource = 'tokenizer';
  }
  if (o.usageTokens !== undefined) {
    out.completion = o.usageTokens;
    out.completionSource = 'usage';
  } else if (o.ok && tokenizer && o.reply !== undefined) {
    out.completion = tokenizer.count(o.reply);
    out.completionSource = 'tokenizer';
  }
  return out;
}
