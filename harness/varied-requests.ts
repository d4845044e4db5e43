// Requests as varied as real clients send, shared by the suites that send
// them plain and streamed: non-ASCII text, a long conversation, an oversize body.
import { chatBody } from './target.ts';

/** Non-ASCII text real users send: accents, CJK, Korean, emoji (with a skin tone and a ZWJ family), Hebrew, Arabic, combining marks. */
export const NON_ASCII_TEXT = 'Grüße aus Köln, naïve café. 日本語で答えてください 中文 한국어 🙂👍🏽👨‍👩‍👧 שלום עולם مرحبا بالعالم e\u0301 n\u0303 a\u030a';
export const NON_ASCII = [{ role: 'user', content: NON_ASCII_TEXT }];

/** A long conversation (about 30 000 tokens), not a sensible limit's size: a paid API bills every byte. */
export const NEAR_LIMIT_KIB = 128;
/** 8 times the common 1 MiB default of proxies and frameworks; small enough to send within TIMEOUT_MS on a loaded machine. */
export const OVERSIZE_MIB = 8;
/** A long conversation: alternating turns of ~8 KiB prose until NEAR_LIMIT_KIB. */
export function nearLimitBody(): Record<string, unknown> {
  const turn = 'The quick brown fox jumps over the lazy dog; '.repeat(180);
  const n = Math.floor((NEAR_LIMIT_KIB * 1024) / turn.length);
  const messages = Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: turn }));
  messages[messages.length - 1] = { role: 'user', content: turn };
  return chatBody({ messages });
}
export function oversizeBody(): Record<string, unknown> {
  return chatBody({ messages: [{ role: 'user', content: 'x'.repeat(OVERSIZE_MIB * 1024 * 1024) }] });
}
