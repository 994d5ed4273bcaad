/**
 * The verifier: judges a candidate deliverable by content against the original request (purpose `verify`).
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Message } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { askJson } from '../json/ask-json.js';
import { parseJsonReply } from '../json/parse-json-reply.js';
import {
  callModel,
  estimateRequestTokens,
  type CallSettings,
  type ModelCallContext,
  type RequestFitter,
  type RequestTokenCounter,
} from '../llm/call-model.js';
import { IMAGE_TOKENS } from '../memory/token-counter.js';
import { saveLongAnswer } from '../handoff/answers.js';
import type { VerifierLike, VerifyInput } from '../contracts/roles.js';
import {
  collectPreviews,
  parseRoleOptions,
  PreviewOptionsSchema,
  sendShrinking,
} from '../memory/single-shot-previews.js';
import type { Defect, Verdict } from '../contracts/work.js';
import { DataMark } from '../prompts/datamark.js';
import { VERIFIER_PROMPT } from '../prompts/verifier.js';
import { collectImages, describeNotSeen, type ImageBudget } from './images.js';
import { sofficeRenderer, type OfficeRenderer } from './office-render.js';
import { pdftoppmRenderer, type PdfPagesRenderer } from './pdf-page.js';
import { buildVerifyRequest, type BuiltVerifyRequest, type VerifyMaterial } from './request.js';
import { withInstructions } from '../prompts/instructions.js';

const VerdictReplySchema = z.object({
  passed: z.boolean(),
  defects: z
    .array(
      z.object({
        description: z.string().trim().min(1),
        artifact: z.string().trim().min(1).optional(),
      }),
    )
    .default([]),
});
type VerdictReply = z.output<typeof VerdictReplySchema>;

const VerifierOptionsSchema = PreviewOptionsSchema.extend({
  images: z
    .object({
      maxImages: z.number().int().min(0).default(DEFAULTS.verifyImages.maxImages),
      maxLongSide: z.number().int().min(1).default(DEFAULTS.verifyImages.maxLongSide),
      maxPixels: z.number().int().min(1).default(DEFAULTS.verifyImages.maxPixels),
      maxBytes: z.number().int().min(1).default(DEFAULTS.verifyImages.maxBytes),
    })
    .prefault({}),
  renderPdfPages: z
    .custom<PdfPagesRenderer | false>(
      (value) => value === false || typeof value === 'function',
      'must be a function or false',
    )
    .default(() => pdftoppmRenderer),
  renderOffice: z
    .custom<OfficeRenderer | false>(
      (value) => value === false || typeof value === 'function',
      'must be a function or false',
    )
    .default(() => sofficeRenderer()),
});

/** Options of {@link Verifier}. */
export interface VerifierOptions {
  backend: LlmBackend;
  /** System prompt. Default {@link VERIFIER_PROMPT}. */
  prompt?: string;
  /** The application's instructions, appended to the prompt under a heading of their own. */
  instructions?: string;
  /** Characters of one file preview. @defaultValue DEFAULTS.filePreviewChars (10 000) */
  previewChars?: number;
  /**
   * Characters of all previews of one request together: the paper's shared 20 000-token parser budget at ~4
   * characters per token. Smaller when the request must shrink to fit the window.
   * @defaultValue DEFAULTS.fileParserTokens × 4 (80 000)
   */
  previewBudgetChars?: number;
  /**
   * Images per request and the largest size of each; any field left out keeps its default.
   * @defaultValue DEFAULTS.verifyImages (`{ maxImages: 8, maxLongSide: 1568, maxPixels: 1150000, maxBytes: 3750000 }`)
   */
  images?: Partial<ImageBudget>;
  /**
   * Renders the pages of a delivered PDF (and of the PDF an office document was rendered to), as many as the image
   * budget has room for; `false` renders none. @defaultValue {@link pdftoppmRenderer}
   */
  renderPdfPages?: PdfPagesRenderer | false;
  /**
   * Renders a delivered office document (PPTX, DOCX, XLSX, ODP, ODT, ODS, …) to PDF, whose pages are then shown;
   * `false` renders none. @defaultValue `sofficeRenderer()` (headless LibreOffice in a sandbox without network)
   */
  renderOffice?: OfficeRenderer | false;
  emit?: EmitEvent;
  countTokens?: RequestTokenCounter;
  /** Fits each request into the window (the harness passes its memory); requests go out unchanged without it. */
  fit?: RequestFitter;
  now?: () => number;
  /** Sampling, output reserve and usage observer of the calls (the harness passes the verify role's). */
  call?: CallSettings;
}

/** The model's judgement, or why there is none. */
type Judgement = { ok: true; reply: VerdictReply } | { ok: false; reason: string };

const EMPTY_DEFECTS_REASK =
  'You replied that the deliverable did not pass but listed no defects, so nothing can be repaired. List every ' +
  'defect you found, each concrete and fixable. Reply again with only the JSON object in the required shape.';

const NO_DEFECTS_REASON =
  'The verifier failed the deliverable without naming a defect, also when asked once more, ' +
  'so there is nothing to repair.';

const FRESH_CALL_NOTE = 'A fresh verify request, sent after the first dialogue gave no verdict, gave none either.';

/** Characters of a provider's rejection quoted in the text-only request. */
const REJECTION_CHARS = 200;

/**
 * Checks a deliverable against the original request, the subtask answers and the attachments, by content: the model
 * sees bounded previews of every delivered and attached file and the images of the delivered files (image files, the
 * rendered pages of PDFs and office documents, or the images embedded in a PPTX or DOCX that could not be rendered).
 * A delivered path that does not exist is a defect found without asking the model. The request shrinks until it fits
 * the backend's window. A reply that stays malformed after one re-ask, or that fails the deliverable without naming a
 * defect even when asked once more, is asked again in a fresh request (the same way); when that gives no verdict
 * either, the verdict is `unverified` (unless missing files already make it `failed`), and `reason` says why.
 *
 * @example
 * ```ts
 * const verifier = new Verifier({ backend });
 * const verdict = await verifier.verify({ request, deliverable: { answer, files: ['report.md'] }, workspace });
 * if (!verdict.passed) console.log(verdict.defects, verdict.imagesSeen);
 * ```
 */
export class Verifier implements VerifierLike {
  private readonly options: VerifierOptions;
  private readonly settings: z.output<typeof VerifierOptionsSchema>;

  constructor(options: VerifierOptions) {
    if (typeof options?.backend?.generate !== 'function') {
      throw new HarnessError('invalid-options', 'Verifier needs `backend`: an LlmBackend with a generate() method.');
    }
    this.options = options;
    this.settings = parseRoleOptions('Verifier', VerifierOptionsSchema, options);
  }

  /**
   * Verifies one deliverable. Backend errors (and aborts) propagate, and so does a `context-overflow` when the request
   * cannot fit even at its minimum.
   */
  async verify(input: VerifyInput): Promise<Verdict> {
    const attempt = input.attempt ?? 1;
    const runId = input.runId ?? 'verify';
    const scope = `verify-${attempt}`;
    const { workspace } = input;
    const delivered = await collectPreviews(workspace, input.deliverable.files, this.settings.previewChars);
    const missing: Defect[] = delivered
      .filter((file) => file.missing)
      .map((file) => ({
        description:
          // JSON quoting keeps a name with line breaks on one line of the repair instructions.
          `The deliverable claims the file ${JSON.stringify(file.path)}, but it does not exist in the workspace. ` +
          'Create it or remove the claim.',
        artifact: file.path,
      }));
    const material: VerifyMaterial = {
      system: withInstructions(this.options.prompt ?? VERIFIER_PROMPT, this.options.instructions),
      request: input.request,
      answer: input.deliverable.answer,
      answerFile: await saveLongAnswer(workspace, `deliverable-${attempt}`, input.deliverable.answer, {
        runId,
        emit: this.options.emit,
        scope,
      }),
      delivered,
      attached: await collectPreviews(workspace, input.attachments ?? [], this.settings.previewChars),
      subtaskAnswers: input.subtaskAnswers ?? [],
      interrupted: input.deliverable.interruptedCalls ?? [],
      images: await collectImages(
        workspace,
        delivered.filter((file) => !file.missing).map((file) => file.path),
        {
          budget: this.settings.images,
          renderPdfPages: this.settings.renderPdfPages,
          renderOffice: this.settings.renderOffice,
          signal: input.signal,
        },
      ),
      previews: { fileChars: this.settings.previewChars, totalChars: this.settings.previewBudgetChars },
      mark: input.dataMark ?? DataMark.random(),
    };
    const context: ModelCallContext = {
      backend: this.options.backend,
      purpose: 'verify',
      runId,
      scope,
      emit: this.options.emit,
      countTokens: this.options.countTokens,
      fit: this.options.fit,
      now: this.options.now,
      signal: input.signal,
      ...this.options.call,
    };
    // With missing files the verdict is `failed` whatever the model says: its "failed" is explained already, and a
    // reply it cannot give is not asked for again.
    const { judgement, request } = await this.judgeFitting(material, context, missing.length === 0);
    const images = { imagesSeen: request.sent.length, imagesSkipped: request.notSeen.length };
    if (images.imagesSkipped) this.warnImagesNotSeen(request, runId, scope);
    if (!judgement.ok) {
      return missing.length
        ? { attempt, status: 'failed', passed: false, defects: missing, ...images }
        : { attempt, status: 'unverified', passed: false, defects: [], ...images, reason: judgement.reason };
    }
    const modelDefects: Defect[] = judgement.reply.defects.map((d) =>
      d.artifact === undefined ? { description: d.description } : { description: d.description, artifact: d.artifact },
    );
    const defects = [...missing, ...modelDefects];
    // A model that says "passed" while listing defects has not passed.
    const passed = judgement.reply.passed && defects.length === 0;
    return { attempt, status: passed ? 'passed' : 'failed', passed, defects, ...images };
  }

  /**
   * Sends the verify request at the largest detail that fits (see `sendShrinking`). Images go out unless the backend
   * says it takes none; a request with images that the provider rejects as a bad request is sent once more as text
   * only.
   */
  private async judgeFitting(
    material: VerifyMaterial,
    context: ModelCallContext,
    unexplained: boolean,
  ): Promise<{ judgement: Judgement; request: BuiltVerifyRequest }> {
    const { backend } = this.options;
    let withheld = backend.supportsImages === false ? 'the verify backend does not accept images' : undefined;
    const built = new WeakMap<readonly Message[], BuiltVerifyRequest>();
    const build = (detail: number): BuiltVerifyRequest => {
      const request = buildVerifyRequest(material, detail, withheld);
      built.set(request.messages, request);
      return request;
    };
    const countText = this.options.countTokens ?? estimateRequestTokens;
    return sendShrinking({
      purpose: 'verify',
      backend,
      originalRequest: material.request,
      maxOutputTokens: context.maxOutputTokens,
      build: (detail) => build(detail).messages,
      // Providers bill an image by its pixels (about 750 per token), which a text tokenizer cannot see.
      count: (messages) =>
        countText(textOnly(messages), []) +
        (built.get(messages)?.sent ?? []).reduce(
          (sum, image) => sum + Math.max(IMAGE_TOKENS, Math.ceil((image.width * image.height) / 750)),
          0,
        ),
      send: async (messages, detail) => {
        const request = built.get(messages) as BuiltVerifyRequest;
        try {
          return { judgement: await this.judgeAfresh(context, messages, unexplained), request };
        } catch (error) {
          if (!request.sent.length || !HarnessError.isInstance(error) || error.code !== 'bad-request') throw error;
          const why = error.message.split('\n')[0]?.slice(0, REJECTION_CHARS);
          withheld = `the verify backend rejected the request with images (${why}), so it was sent as text only`;
          const textOnlyRequest = build(detail);
          return {
            judgement: await this.judgeAfresh(context, textOnlyRequest.messages, unexplained),
            request: textOnlyRequest,
          };
        }
      },
    });
  }

  /**
   * Asks for the verdict; when that gives none and the verdict rests on the model alone (`unexplained`: no missing file
   * makes it `failed` already), asks once more in a fresh request (the same messages, without the replies that could
   * not be used), since a dialogue that went wrong tends to stay wrong.
   */
  private async judgeAfresh(context: ModelCallContext, messages: Message[], unexplained: boolean): Promise<Judgement> {
    const first = await this.judge(context, messages, unexplained);
    if (first.ok || !unexplained) return first;
    const fresh = await this.judge(context, messages, unexplained);
    if (fresh.ok) return fresh;
    return { ok: false, reason: `${fresh.reason} ${FRESH_CALL_NOTE}` };
  }

  /** Asks for the verdict (re-asked once when malformed, and once when it fails the deliverable naming no defect). */
  private async judge(context: ModelCallContext, messages: Message[], unexplained: boolean): Promise<Judgement> {
    const reply = await askJson(context, messages, VerdictReplySchema);
    if (!reply.ok) return { ok: false, reason: `The verify reply stayed malformed after one re-ask: ${reply.error}` };
    if (reply.value.passed || reply.value.defects.length || !unexplained) return { ok: true, reply: reply.value };
    const again = await callModel(context, {
      messages: [
        ...messages,
        { role: 'assistant', content: JSON.stringify(reply.value) },
        { role: 'user', content: EMPTY_DEFECTS_REASK },
      ],
      responseFormat: { type: 'json' },
    });
    const parsed = parseJsonReply(again.message.content, VerdictReplySchema);
    if (parsed.ok && parsed.value.defects.length) {
      return { ok: true, reply: { passed: false, defects: parsed.value.defects } };
    }
    return { ok: false, reason: NO_DEFECTS_REASON };
  }

  private warnImagesNotSeen(request: BuiltVerifyRequest, runId: string, scope: string): void {
    const { sent, notSeen } = request;
    const reasons = describeNotSeen(notSeen);
    this.options.emit?.({
      type: 'run-warning',
      runId,
      code: 'images-not-seen',
      message:
        `The verifier did not see ${notSeen.length} of the ${sent.length + notSeen.length} image(s) of the ` +
        `deliverable (${reasons}).`,
      purpose: 'verify',
      scope,
    });
  }
}

/** The messages without their image parts (counted separately, by size). */
function textOnly(messages: readonly Message[]): Message[] {
  return messages.map((message) =>
    message.role === 'user' && Array.isArray(message.content)
      ? { ...message, content: message.content.filter((part) => part.type === 'text') }
      : message,
  );
}
