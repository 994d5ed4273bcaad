/**
 * What the judge is shown besides the task: the attachments, the answer's files and the reference files parsed to
 * text, and the answer's images (image files, rendered PDF and office pages, embedded images) fitted to an image budget.
 * @module
 */
import { DEFAULTS } from '../../defaults.js';
import { toHarnessError } from '../../errors.js';
import { collectImages, type PreparedImage } from '../../verifier/images.js';
import { sofficeRenderer } from '../../verifier/office-render.js';
import { pdftoppmRenderer } from '../../verifier/pdf-page.js';
import { LocalWorkspace } from '../../workspace/local-workspace.js';
import { previewFile } from '../../workspace/preview/preview-file.js';
import type { TaskFile } from './dataset.js';

/** How much of each file the judge reads, in characters of its parsed preview. */
export interface JudgeMaterialLimits {
  /** Per attachment or reference file. @defaultValue 10 000 */
  inputFileChars: number;
  /** Per delivered file. @defaultValue 20 000 */
  answerFileChars: number;
}

/** Default {@link JudgeMaterialLimits}. */
export const JUDGE_MATERIAL_LIMITS: JudgeMaterialLimits = { inputFileChars: 10_000, answerFileChars: 20_000 };

/** A file parsed for the judge. */
export interface ParsedFile {
  name: string;
  preview: string;
}

/** The delivered files as the judge sees them. */
export interface AnswerMaterial {
  files: ParsedFile[];
  images: PreparedImage[];
  /** Facts about what could not be shown (a missing file, images skipped, a document not rendered). */
  notes: string[];
}

/** Parsed previews of task files (attachments or reference files), under their original names. */
export async function parseTaskFiles(files: readonly TaskFile[], maxChars: number): Promise<ParsedFile[]> {
  return Promise.all(
    files.map(async (file) => ({
      name: file.name,
      preview: await previewFile(file.path, { maxChars, displayName: file.name }),
    })),
  );
}

/**
 * Parses the delivered `files` (workspace-relative) of the run's workspace, and collects their images unless
 * `images` is false. A path outside the workspace or a missing file is shown as such, never read.
 */
export async function parseAnswerFiles(
  workspaceDir: string,
  files: readonly string[],
  options: { maxChars: number; images: boolean; signal?: AbortSignal | undefined },
): Promise<AnswerMaterial> {
  const material: AnswerMaterial = { files: [], images: [], notes: [] };
  if (files.length === 0) return material;
  const workspace = await LocalWorkspace.create({ dir: workspaceDir });
  const readable: string[] = [];
  for (const file of files) {
    try {
      const absolute = await workspace.resolve(file, 'read');
      material.files.push({
        name: file,
        preview: await previewFile(absolute, { maxChars: options.maxChars, displayName: file }),
      });
      readable.push(file);
    } catch (error) {
      material.files.push({ name: file, preview: `${file}: cannot be read (${toHarnessError(error).message}).` });
    }
  }
  if (options.images && readable.length) {
    const collected = await collectImages(workspace, readable, {
      budget: DEFAULTS.verifyImages,
      renderPdfPages: pdftoppmRenderer,
      renderOffice: sofficeRenderer(),
      signal: options.signal,
    });
    material.images = collected.images;
    material.notes.push(
      ...collected.notes,
      ...collected.skipped.map((s) => `Image ${s.label} not shown: ${s.reason}.`),
    );
  }
  return material;
}
