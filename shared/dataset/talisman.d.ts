/** The one module used from talisman, which ships no types. */
declare module 'talisman/tokenizers/words/treebank' {
  /** The Penn Treebank word tokenizer (the rules NLTK's word tokenizer starts from). */
  export default function tokenize(text: string): string[];
}
