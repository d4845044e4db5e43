// Synthetic prompt text of an exact token count: common English words that are one
// token each (with their leading space) in the chosen encoding, drawn from a seeded
// generator. The encodings' pre-tokenizers split text before each " word", so n such
// words are n tokens; the count is still checked with the tokenizer on the first
// CHECKED texts of a run (and always in the self-tests), where a surprise would show,
// and not on every request, where counting 4,096 tokens cost the driver more than the
// request (bench/workload.ts).
import type { Tokenizer } from './tokenizer.ts';

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'her she there been one all we their has would when if so no will more other its time about up out them some could what ' +
  'into than only new two may first then do any like these over such our man me even most made after also did many before ' +
  'must through back years where much your way well down should because each just those people how too little state good very ' +
  'make world still own see men work long get here between both life being under never day same another know while last might ' +
  'us great old year off come since against go came right used take three house water light green table river stone cloud ' +
  'signal orbit pixel city power music field paper story point place group number system market model service answer reply'
).split(' ');

const CHECKED = 32;

export class SyntheticText {
  private readonly vocabulary: string[];
  private checked = 0;

  constructor(private readonly tokenizer: Tokenizer) {
    this.vocabulary = WORDS.filter((w) => tokenizer.count(` ${w}`) === 1);
    if (this.vocabulary.length < 16) throw new Error(`encoding ${tokenizer.name}: too few one-token words for synthetic prompts`);
  }

  /** Text of exactly `tokens` tokens (0 gives ""), words drawn with `random`. */
  text(tokens: number, random: () => number): string {
    if (tokens <= 0) return '';
    const v = this.vocabulary;
    const parts = new Array<string>(tokens);
    for (let i = 0; i < tokens; i++) parts[i] = ` ${v[Math.floor(random() * v.length)]}`;
    const text = parts.join('');
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
