// The words of synthetic prompts and the text built from them, without a tokenizer, so
// the k6 bundles can build prompts of an exact token count without the encodings'
// ranks. Every word is one token, with its leading space, in o200k_base, cl100k_base,
// p50k_base and r50k_base, and the encodings' pre-tokenizers split text before each
// " word", so n words are n tokens. The Node side (synthetic.ts) still counts its first
// texts with the real tokenizer; selftest/unit/k6-scripts.test.ts counts the k6 bundle's.

export const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'her she there been one all we their has would when if so no will more other its time about up out them some could what ' +
  'into than only new two may first then do any like these over such our man me even most made after also did many before ' +
  'must through back years where much your way well down should because each just those people how too little state good very ' +
  'make world still own see men work long get here between both life being under never day same another know while last might ' +
  'us great old year off come since against go came right used take three house water light green table river stone cloud ' +
  'signal orbit pixel city power music field paper story point place group number system market model service answer reply'
).split(' ');

/** What builds a prompt text of a token count: SyntheticText (checked against a tokenizer) or wordTextSource (k6). */
export interface TextSource {
  text(tokens: number, random: () => number): string;
}

/** `tokens` words of `vocabulary`, each with its leading space, drawn with `random`. */
export function wordText(vocabulary: readonly string[], tokens: number, random: () => number): string {
  if (tokens <= 0) return '';
  const parts = new Array<string>(tokens);
  for (let i = 0; i < tokens; i++) parts[i] = ` ${vocabulary[Math.floor(random() * vocabulary.length)]}`;
  return parts.join('');
}

/** Texts of every word of WORDS, not counted by a tokenizer (k6 has none; the self-tests count them). */
export function wordTextSource(): TextSource {
  return { text: (tokens, random) => wordText(WORDS, tokens, random) };
}
