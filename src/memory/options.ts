import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { describeIssues } from '../util/did-you-mean.js';
import { GPT_ENCODINGS, type Tokenizer } from './tokenizer.js';

const positiveInt = (fallback: number) => z.number().int().positive().default(fallback);

/** Options of {@link MemoryManager}, validated once in its constructor. */
export const MemoryOptionsSchema = z
  .strictObject({
    /** Fraction of the context window above which earlier rounds are summarised. @defaultValue 0.9 */
    compressAt: z.number().gt(0).max(1).default(DEFAULTS.compressAt),
    /** Fraction of the window above which history is pruned deterministically; no request exceeds it. @defaultValue 0.95 */
    emergencyAt: z.number().gt(0).max(1).default(DEFAULTS.emergencyAt),
    /** Rounds kept verbatim by a compression. @defaultValue 3 */
    keepRecentRounds: positiveInt(DEFAULTS.keepRecentRounds),
    /** Longest history summary, in characters. @defaultValue 8000 */
    maxSummaryChars: positiveInt(DEFAULTS.maxSummaryChars),
    /** A `visit` observation longer than this is summarised (plus a raw prefix). @defaultValue 20000 */
    visitSummaryThresholdChars: positiveInt(DEFAULTS.visitSummaryThresholdChars),
    /** Longest generic tool observation, in characters (head and tail kept). @defaultValue 8000 */
    toolMessageChars: positiveInt(DEFAULTS.toolMessageChars),
    /** Longest file preview, in characters. @defaultValue 10000 */
    filePreviewChars: positiveInt(DEFAULTS.filePreviewChars),
    /** Tokens of file previews one scope (subtask, synthesis, repair) may add in all. @defaultValue 20000 */
    fileParserTokens: positiveInt(DEFAULTS.fileParserTokens),
    /** gpt-tokenizer encoding used when no `tokenizer` is given. @defaultValue 'o200k_base' */
    encoding: z.enum(GPT_ENCODINGS).default('o200k_base'),
    /** Factor applied to every token count, to correct for a model whose tokenizer differs. @defaultValue 1 */
    calibration: z.number().min(0.1).max(10).default(1),
    /**
     * Opt-in: tool results older than the last `keepRecentRounds` rounds collapse to a one-line digest
     * naming the saved full output. Where the backend caches prompts (`promptCache.mode` `automatic` or `markers`),
     * they collapse in batches: once `batchRounds` old rounds hold results to collapse, or sooner when the request
     * would otherwise be compressed. @defaultValue false
     */
    observationAging: z
      .union([
        z.literal(false),
        z.strictObject({
          keepRecentRounds: positiveInt(DEFAULTS.keepRecentRounds),
          batchRounds: positiveInt(DEFAULTS.agingBatchRounds),
        }),
      ])
      .default(false),
  })
  .refine((o) => o.compressAt <= o.emergencyAt, {
    path: ['compressAt'],
    message: 'compressAt must not exceed emergencyAt',
  });

/** What users pass to `new MemoryManager(…)` (or `createHarness({ memory })`). */
export type MemoryManagerOptions = z.input<typeof MemoryOptionsSchema> & {
  /**
   * Your model's tokenizer; default: gpt-tokenizer with `encoding`. With `boundedByUtf8Bytes`, requests far below the
   * compression threshold are sent without a count.
   */
  tokenizer?: Tokenizer;
};

/** The options after defaults. */
export type ResolvedMemoryOptions = z.output<typeof MemoryOptionsSchema>;

const ALLOWED: Record<string, string> = {
  compressAt: 'a number in (0, 1], not above emergencyAt',
  emergencyAt: 'a number in (0, 1]',
  encoding: GPT_ENCODINGS.join(', '),
  calibration: 'a number from 0.1 to 10',
  observationAging: 'false or { keepRecentRounds?: positive integer, batchRounds?: positive integer }',
};

/** Parses memory options; a bad option throws `HarnessError('invalid-options')` naming it and its allowed range. */
export function parseMemoryOptions(options: MemoryManagerOptions = {}): ResolvedMemoryOptions {
  const { tokenizer, ...rest } = options;
  if (tokenizer !== undefined && typeof (tokenizer as Partial<Tokenizer> | null)?.count !== 'function') {
    throw new HarnessError(
      'invalid-options',
      'Invalid memory options. memory.tokenizer: must be an object with a count(text) method returning a number ' +
        '(allowed: a Tokenizer, or leave it out to use gpt-tokenizer with memory.encoding).',
    );
  }
  const parsed = MemoryOptionsSchema.safeParse(rest);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.flatMap((issue) => {
    // A misspelt option would otherwise be ignored silently and its default used.
    if (issue.code === 'unrecognized_keys') {
      return describeIssues([issue], {
        schema: MemoryOptionsSchema,
        prefix: 'memory',
        extraKeys: { '': ['tokenizer'] },
      });
    }
    const name = String(issue.path[0] ?? 'options');
    const allowed = ALLOWED[name] ?? 'a positive integer';
    return [`memory.${issue.path.join('.')}: ${issue.message} (allowed: ${allowed})`];
  });
  throw new HarnessError('invalid-options', `Invalid memory options. ${problems.join('; ')}.`);
}
