/**
 * What the single-shot roles (plan, verify) show of workspace files, and how their requests shrink to fit a window:
 * bounded preview sections within a character budget, and the detail steps a request is built at until one fits.
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Message, Purpose } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { ContextOverflowError, HarnessError, toHarnessError } from '../errors.js';
import { reservedOutputTokens } from '../llm/call-model.js';
import type { DataMark } from '../prompts/datamark.js';
import { fitChars } from '../workspace/preview/bounded-text.js';
import type { Workspace } from '../workspace/types.js';

/** A workspace file previewed once, at the largest size a request may show; smaller requests cut it. */
export interface CollectedPreview {
  /** Workspace-relative path. */
  path: string;
  /** True when the file does not exist in the workspace (`text` is then empty). */
  missing: boolean;
  text: string;
}

/** How much of the collected previews one request shows. */
export interface PreviewBudget {
  /** Characters of one file's preview. */
  fileChars: number;
  /** Characters of all previews of the request together. */
  totalChars: number;
}

/** The preview options of the plan and verify roles. */
export const PreviewOptionsSchema = z.object({
  /** Characters of one file's preview. */
  previewChars: z.number().int().min(1).default(DEFAULTS.filePreviewChars),
  /** Characters of all previews of one request: the paper's 20 000-token parser budget at ~4 characters per token. */
  previewBudgetChars: z
    .number()
    .int()
    .min(1)
    .default(DEFAULTS.fileParserTokens * 4),
});

/** Parses a role's options once; a bad value throws `invalid-options` naming the option. */
export function parseRoleOptions<S extends z.ZodType>(role: string, schema: S, options: unknown): z.output<S> {
  const parsed = schema.safeParse(options);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'} ${issue.message}`);
  throw new HarnessError('invalid-options', `Invalid ${role} option: ${problems.join('; ')}.`, { cause: parsed.error });
}

/** Below this many characters a preview or an answer is not worth sending; it is named or described instead. */
export const MIN_SHOWN_CHARS = 200;

/**
 * Previews each path once (duplicates dropped), each at most `maxChars` long. A missing file is marked, not previewed;
 * a preview that throws becomes a one-line note saying why, so one unreadable file never fails the role.
 */
export async function collectPreviews(
  workspace: Workspace,
  paths: readonly string[],
  maxChars: number,
): Promise<CollectedPreview[]> {
  const previews: CollectedPreview[] = [];
  for (const path of new Set(paths)) {
    if (!(await workspace.exists(path))) {
      previews.push({ path, missing: true, text: '' });
      continue;
    }
    let text: string;
    try {
      text = await workspace.preview(path, { maxChars });
    } catch (error) {
      text = `(preview failed: ${toHarnessError(error).message})`;
    }
    // A custom Workspace may ignore maxChars; the budget must hold anyway.
    previews.push({ path, missing: false, text: fitChars(text, maxChars) });
  }
  return previews;
}

/** The sections of {@link previewSections} and the characters of the budget they left unused. */
export interface PreviewSections {
  sections: string[];
  charsLeft: number;
}

/**
 * One `### File <path>` section per preview, in order, sharing `budget.totalChars`: each preview is cut to what is
 * left (and to `budget.fileChars`); once less than {@link MIN_SHOWN_CHARS} is left, files are only named. `missingNote`
 * is shown for a file that does not exist. Paths and previews are untrusted: both are marked with `mark`.
 */
export function previewSections(
  previews: readonly CollectedPreview[],
  budget: PreviewBudget,
  missingNote: string,
  mark: DataMark,
): PreviewSections {
  let left = budget.totalChars;
  const sections = previews.map((preview) => {
    const head = `### File ${mark.inline(preview.path)}`;
    if (preview.missing) return `${head}\n(${missingNote})`;
    const maxChars = Math.min(budget.fileChars, left);
    if (maxChars < MIN_SHOWN_CHARS) {
      return `${head}\n(preview left out: the overall preview budget of this request is used up)`;
    }
    const text = fitChars(preview.text, maxChars);
    left -= text.length;
    return `${head}\n${mark.block(text)}`;
  });
  return { sections, charsLeft: left };
}

/** The preview budget of a request built at `detail` (see {@link DETAIL_STEPS}). */
export function scaledPreviewBudget(full: PreviewBudget, detail: number): PreviewBudget {
  return { fileChars: Math.floor(full.fileChars * detail), totalChars: Math.floor(full.totalChars * detail) };
}

/**
 * The shares of their full content (previews, answers, images) that plan and verify requests are built at, in turn,
 * until one fits. The last, 0, is the minimum: system prompt, original request, file names and the reply instructions.
 */
export const DETAIL_STEPS: readonly number[] = [1, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 0];

/** A single-shot request that can be built at several levels of detail. */
export interface ShrinkingRequest<T> {
  purpose: Extract<Purpose, 'plan' | 'verify'>;
  backend: LlmBackend;
  /** The original request, for the sizes named when even the minimum cannot fit. */
  originalRequest: string;
  /** Output tokens reserved for the answer (the role's `maxOutputTokens`). @defaultValue reservedOutputTokens() */
  maxOutputTokens?: number | undefined;
  /** The details to try, largest first; the last is the minimum. @defaultValue {@link DETAIL_STEPS} */
  steps?: readonly number[];
  /** The messages at `detail` (1 = everything, 0 = the minimum). */
  build(detail: number): Message[];
  /** Tokens of built messages, images included. */
  count(messages: readonly Message[]): number;
  /** Sends the messages; may throw a `ContextOverflowError` (from the fitter) or `context-length-exceeded`. */
  send(messages: Message[], detail: number): Promise<T>;
}

/**
 * Sends the request at the largest detail whose messages fit the budget, and tries the next smaller detail whenever
 * the fitter or the provider still finds it too long (a step no smaller than a refused request is not sent). Only when
 * even the minimum does not fit does it throw a `ContextOverflowError` naming the sizes: system prompt, original
 * request, the rest, and the budget. Other errors (aborts, provider errors) propagate at once.
 */
export async function sendShrinking<T>(request: ShrinkingRequest<T>): Promise<T> {
  const steps = request.steps ?? DETAIL_STEPS;
  const budget = budgetOf(request);
  let refused: { tokens: number; error: HarnessError } | undefined;
  for (const [index, detail] of steps.entries()) {
    const messages = request.build(detail);
    const tokens = request.count(messages);
    const last = index === steps.length - 1;
    if (tokens > budget.input || (refused && tokens >= refused.tokens)) {
      if (last) throw minimumOverflow(request, budget, messages, tokens, refused);
      continue;
    }
    try {
      return await request.send(messages, detail);
    } catch (error) {
      if (!isOverflow(error)) throw error;
      refused = { tokens, error };
      if (last) throw minimumOverflow(request, budget, messages, tokens, refused);
    }
  }
  throw new HarnessError('internal', `sendShrinking needs at least one detail step; got ${steps.length}.`);
}

/**
 * Input tokens a plan or verify request may use: its backend's window less the output reserve, and no more than the
 * memory's compression threshold (the fitter protects the whole request, so above it there is nothing to compress).
 */
function budgetOf<T>(request: ShrinkingRequest<T>): { window: number; reserved: number; input: number } {
  const window = windowOf(request.backend);
  const reserved = request.maxOutputTokens ?? reservedOutputTokens(window);
  return {
    window,
    reserved,
    input: Math.max(0, Math.min(Math.floor(DEFAULTS.compressAt * window), window - reserved)),
  };
}

function minimumOverflow<T>(
  request: ShrinkingRequest<T>,
  budget: { window: number; reserved: number; input: number },
  minimum: readonly Message[],
  tokens: number,
  refused?: { tokens: number; error: HarnessError },
): ContextOverflowError {
  const system = minimum[0] ? request.count([minimum[0]]) : 0;
  const original = request.count([{ role: 'user', content: request.originalRequest }]);
  const { backend } = request;
  return new ContextOverflowError(
    `The ${request.purpose} request cannot fit the ${budget.window}-token context window of ` +
      `${backend.provider}/${backend.modelId} even with every preview, answer and image left out: it needs ${tokens} ` +
      `tokens (system prompt ${system}, original request ${original}, file names and instructions ` +
      `${Math.max(0, tokens - system - original)}), and ${budget.input} tokens are available for input ` +
      `(the window less the ${budget.reserved} tokens reserved for the answer, at most ${DEFAULTS.compressAt} × ` +
      `the window). Give this role a backend with a larger window (roles.${request.purpose}) or shorten the request.` +
      (refused ? ` A ${refused.tokens}-token version was refused: ${refused.error.message}` : ''),
    { requestTokens: tokens, budgetTokens: budget.input },
  );
}

/** The fitter found the request too long, or the provider did. */
function isOverflow(error: unknown): error is HarnessError {
  return (
    HarnessError.isInstance(error) && (error.code === 'context-overflow' || error.code === 'context-length-exceeded')
  );
}

function windowOf(backend: LlmBackend): number {
  const window = backend.contextWindow;
  return Number.isFinite(window) && window > 0 ? window : DEFAULTS.contextWindow;
}
