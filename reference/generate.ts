// Deterministic replies and token counts. Same messages in, same reply out, so a
// test can compare runs; "tokens" are whitespace-separated words, so a client can
// recount them from the reply it got.
import { createHash } from 'node:crypto';

const VOCABULARY = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
  'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa',
  'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray',
  'yankee', 'zulu', 'reference', 'reply', 'answer', 'service', 'model', 'stream',
  'token', 'window', 'river', 'stone', 'cloud', 'signal', 'harbor', 'lantern',
  'meadow', 'orbit', 'pixel', 'quartz', 'ripple', 'summit', 'timber', 'velvet',
];

/** Per-message overhead added to prompt tokens, like role and framing tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

export function countWords(text: string): number {
  const t = text.trim();
  return t === '' ? 0 : t.split(/\s+/).length;
}

/** The text of a request message's content, whatever form it takes (string, parts, other). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join(' ');
  }
  if (content === null || content === undefined) return '';
  return String(typeof content === 'object' ? JSON.stringify(content) : content);
}

export function promptTokens(messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : m;
    n += countWords(contentText(content)) + MESSAGE_OVERHEAD_TOKENS;
  }
  return n;
}

/** A reply of exactly `words` words, derived from the messages and the choice index. */
export function generateReply(messages: unknown[], words: number, choiceIndex = 0): string {
  let seed = createHash('sha256').update(JSON.stringify(messages) ?? '').update(`#${choiceIndex}`).digest();
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    if (i > 0 && i % seed.length === 0) seed = createHash('sha256').update(seed).digest();
    out.push(VOCABULARY[seed[i % seed.length]! % VOCABULARY.length]!);
  }
  if (out.length) {
    out[0] = out[0]!.charAt(0).toUpperCase() + out[0]!.slice(1);
    out[out.length - 1] += '.';
  }
  return out.join(' ');
}

/** Cuts a reply to at most `maxTokens` words (max_tokens); `truncated` decides finish_reason "length". */
export function truncateWords(text: string, maxTokens: number | undefined): { text: string; truncated: boolean } {
  if (maxTokens === undefined) return { text, truncated: false };
  const words = text.split(' ');
  if (words.length <= maxTokens) return { text, truncated: false };
  return { text: words.slice(0, maxTokens).join(' '), truncated: true };
}
