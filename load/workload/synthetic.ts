// Synthetic prompt text of an exact token count: common English words that are one
// token each (with their leading space) in the chosen encoding, drawn from a seeded
// generator. The encodings' pre-tokenizers split text before each " word", so n such
// words are n tokens; the count is still checked with the tokenizer on the first
// CHECKED texts of a run (and always in the self-tests), where a surprise would show,
// and not on every request, where counting 4,096 tokens cost the driver more than the
// request (bench/workload.ts). The words and the text builder are in synthetic-words.ts
// (no tokenizer: the k6 bundles use them).
import type { Tokenizer } from './tokenizer.ts';
import { WORDS, wordText, type TextSource } from './synthetic-words.ts';

const CHECKED = 32;

export class SyntheticText implements TextSource {
  private readonly vocabulary: string[];
  private checked = 0;

  constructor(private readonly tokenizer: Tokenizer) {
    this.vocabulary = WORDS.filter((w) => tokenizer.count(` ${w}`) === 1);
    if (this.vocabulary.length < 16) throw new Error(`encoding ${tokenizer.name}: too few one-token words for synthetic prompts`);
  }

  /** Text of exactly `tokens` tokens (0 gives ""), words drawn with `random`. */
  text(tokens: number, random: () => number): string {
    if (tokens <= 0) return '';
    const text = wordText(this.vocabulary, tokens, random);
    if (this.checked >= CHECKED) return text;
    this.checked++;
    const n = this.tokenizer.count(text);
    if (n === tokens) return text;
    // A merge across words (not seen with these words, but not ruled out): cut or pad by tokens.
    return this.exact(text, tokens, random);
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
