// Synthetic prompt text of an exact token count: common English words that are one
// token each (with their leading space) in the chosen encoding, drawn from a seeded
// generator. The encodings' pre-tokenizers split text before each " word", so n such
// words are n tokens; the count is still checked with the tokenizer on the first
// CHECKED texts of a run (and always in the self-tests), where a surprise would show,
// and not on every request, where counting 4,096 tokens cost the driver more than the
// request (bench/workload.ts). The words and the text builder are in synthetic-words.ts
// (no tokenizer: the k6 bundles use them).
//
// A text is a window of a pool of words drawn once per run (one draw per text, not one per
// word: a 4,096-token prompt took 0.28 ms of string building per request, about 7 % of the
// driver's CPU in the bench's realistic shape). Windows start at a random word, so prompts
// share no prefix a cache could serve, as independent draws do not. The k6 bundles keep wordText: a pool in
// every VU's runtime would cost more memory than the draws cost time there.
import type { Tokenizer } from './tokenizer.ts';
import { WORDS, wordText, type TextSource } from './synthetic-words.ts';
import { seededRandom } from '../../lib/run/seeded-random.ts';

const CHECKED = 32;
/** Words in the pool: 65,536 (about 360 KB of text, kept twice over so any window is one slice). */
const POOL_WORDS = 1 << 16;
const POOL_SEED = 0x5eed;

export class SyntheticText implements TextSource {
  private readonly vocabulary: string[];
  private checked = 0;
  /** The pool twice over and where each of its words starts, its end last (built on first use). */
  private pool: { text: string; starts: Uint32Array } | undefined;

  constructor(private readonly tokenizer: Tokenizer) {
    this.vocabulary = WORDS.filter((w) => tokenizer.count(` ${w}`) === 1);
    if (this.vocabulary.length < 16) throw new Error(`encoding ${tokenizer.name}: too few one-token words for synthetic prompts`);
  }

  /** Text of exactly `tokens` tokens (0 gives ""), words drawn with `random`. */
  text(tokens: number, random: () => number): string {
    if (tokens <= 0) return '';
    const text = this.window(tokens, random);
    if (this.checked >= CHECKED) return text;
    this.checked++;
    const n = this.tokenizer.count(text);
    if (n === tokens) return text;
    // A merge across words (not seen with these words, but not ruled out): cut or pad by tokens.
    return this.exact(text, tokens, random);
  }

  /** `tokens` consecutive words of the pool from a random word on (longer texts: several windows). */
  private window(tokens: number, random: () => number): string {
    const pool = (this.pool ??= buildPool(this.vocabulary));
    let out = '';
    for (let left = tokens; left > 0; left -= POOL_WORDS) {
      const n = Math.min(left, POOL_WORDS);
      const at = Math.floor(random() * POOL_WORDS);
      out += pool.text.slice(pool.starts[at]!, pool.starts[at + n]!);
    }
    return out;
  }

  private exact(text: string, tokens: number, random: () => number): string {
    let ids = this.tokenizer.encode(text);
    for (let round = 0; round < 8; round++) {
      if (ids.length > tokens) ids = ids.slice(0, tokens);
      const t = this.tokenizer.decode(ids);
      const n = this.tokenizer.count(t);
      if (n === tokens) return t;
      ids = n < tokens ? this.tokenizer.encode(t + ` ${this.vocabulary[Math.floor(random() * this.vocabulary.length)]}`.repeat(tokens - n)) : this.tokenizer.encode(t);
    }
    throw new Error(`could not build a text of exactly ${tokens} tokens with ${this.tokenizer.name}`);
  }
}

function buildPool(vocabulary: readonly string[]): { text: string; starts: Uint32Array } {
  const once = wordText(vocabulary, POOL_WORDS, seededRandom(POOL_SEED));
  const starts = new Uint32Array(2 * POOL_WORDS + 1);
  let w = 0;
  const text = once + once;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0x20) starts[w++] = i;
  starts[w] = text.length;
  return { text, starts };
}
