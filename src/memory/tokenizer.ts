import { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { resolveEncoding } from 'gpt-tokenizer/resolveEncoding';

/** Counts the tokens of a text; plug in your model's own tokenizer through `MemoryManager`'s `tokenizer` option. */
export interface Tokenizer {
  count(text: string): number;
}

/** The gpt-tokenizer encodings `gptTokenizer` accepts. */
export const GPT_ENCODINGS = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base'] as const;

/** A gpt-tokenizer encoding name. */
export type GptEncodingName = (typeof GPT_ENCODINGS)[number];

// Building an encoder costs tens of megabytes; share one per encoding across managers.
const encoders = new Map<GptEncodingName, GptEncoding>();
// Tool output is untrusted text: a literal "<|endoftext|>" must count as text, not throw.
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** A {@link Tokenizer} backed by gpt-tokenizer (default encoding `o200k_base`); the encoder is built on first use. */
export function gptTokenizer(encoding: GptEncodingName = 'o200k_base'): Tokenizer {
  return {
    count(text: string): number {
      if (text.length === 0) return 0;
      let encoder = encoders.get(encoding);
      if (!encoder) {
        encoder = GptEncoding.getEncodingApi(encoding, resolveEncoding);
        encoders.set(encoding, encoder);
      }
      return encoder.countTokens(text, NO_SPECIAL_TOKENS);
    },
  };
}
