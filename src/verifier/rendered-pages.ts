/**
 * The pages of a delivered PDF or office document as images, the way a person sees them: a PDF's pages rendered
 * directly, an office document's after LibreOffice turned it into a PDF, as many as the image budget leaves room for.
 * @module
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { toHarnessError } from '../errors.js';
import { formatBytes } from '../workspace/preview/bounded-text.js';
import { PARSE_LIMIT_BYTES } from '../workspace/preview/preview-file.js';
import type { Workspace } from '../workspace/types.js';
import { OFFICE_FORMATS, type OfficeFormat, type OfficeRenderer } from './office-render.js';
import type { PdfPagesRenderer, RenderedPdfPages } from './pdf-page.js';

/** The renderers of {@link renderPages}; `false` turns one off. */
export interface PageRenderers {
  renderPdfPages: PdfPagesRenderer | false;
  renderOffice: OfficeRenderer | false;
}

/** What {@link renderPages} needs besides the file. */
export interface RenderPagesOptions extends PageRenderers {
  /** Pixels of a page image's longer side. */
  maxLongSide: number;
  /** Images the budget has room for; pages past them are not rendered. */
  room: number;
  /** The budget of images per request, named when it is used up. */
  maxImages: number;
  signal?: AbortSignal | undefined;
}

/** A document's page images, the pages left out, or why it was not rendered. */
export interface RenderedPages {
  /** PNG bytes of its first pages, each labelled (`deck.pptx, slide 2 (rendered)`). */
  pages: Array<{ label: string; data: Uint8Array }>;
  /** Pages past the budget, which were not rendered. */
  overBudget: Array<{ label: string; reason: string }>;
  /** Why the document was not rendered at all. */
  unrendered?: { reason: string; turnedOff: boolean };
}

/**
 * Renders the first pages of `file` (a PDF, or an office document of `format`) that the budget has room for. Rejects
 * only on abort: a renderer that fails or is missing makes the document `unrendered`, with the reason.
 */
export async function renderPages(
  workspace: Workspace,
  file: string,
  format: 'pdf' | OfficeFormat,
  options: RenderPagesOptions,
): Promise<RenderedPages> {
  const unrendered = (reason: string, turnedOff = false): RenderedPages => ({
    pages: [],
    overBudget: [],
    unrendered: { reason, turnedOff },
  });
  const { renderPdfPages, renderOffice } = options;
  if (!renderPdfPages) return unrendered(TURNED_OFF.pdf, true);
  if (format !== 'pdf' && renderOffice && options.room < 1) {
    // Starting LibreOffice to count pages that will not be shown is not worth its seconds.
    return unrendered(budgetUsedUp(options.maxImages));
  }
  let rendered: RenderedPdfPages | string;
  try {
    if (format === 'pdf') rendered = await renderPdf(renderPdfPages, await workspace.resolve(file, 'read'), options);
    else if (renderOffice) {
      rendered = await renderOfficePdf(renderOffice, renderPdfPages, { workspace, file, format }, options);
    } else return unrendered(TURNED_OFF.office, true);
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return unrendered(`it could not be rendered (${toHarnessError(error).message})`);
  }
  if (typeof rendered === 'string') return unrendered(rendered);
  const page = format === 'pdf' ? 'page' : OFFICE_FORMATS[format].page;
  const label = (number: number) => `${file}, ${page} ${number} (rendered)`;
  const overBudget = [];
  for (let number = rendered.pages.length + 1; number <= rendered.pageCount; number += 1) {
    overBudget.push({ label: label(number), reason: budgetUsedUp(options.maxImages) });
  }
  return { pages: rendered.pages.map((data, i) => ({ label: label(i + 1), data })), overBudget };
}

/** Why a document is not rendered when the host turned its renderer off. */
const TURNED_OFF = {
  pdf: 'rendering of PDF pages is turned off (renderPdfPages: false)',
  office: 'rendering of office documents is turned off (renderOffice: false)',
} as const;

const NO_PDF_RENDERER = 'no PDF renderer is available (the default one is pdftoppm, from poppler-utils)';

/** Why an image is not sent when the budget of images is used up. */
export function budgetUsedUp(maxImages: number): string {
  return `the budget of ${maxImages} images per request is used up`;
}

/** The PDF's pages, or why there are none. */
async function renderPdf(
  render: PdfPagesRenderer,
  absolutePath: string,
  { maxLongSide, room, signal }: RenderPagesOptions,
): Promise<RenderedPdfPages | string> {
  return (await render(absolutePath, { maxLongSide, maxPages: room, signal })) ?? NO_PDF_RENDERER;
}

/** The office document's pages (through its PDF, in a temporary directory), or why there are none. */
async function renderOfficePdf(
  render: OfficeRenderer,
  renderPdfPages: PdfPagesRenderer,
  { workspace, file, format }: { workspace: Workspace; file: string; format: OfficeFormat },
  options: RenderPagesOptions,
): Promise<RenderedPdfPages | string> {
  const { size } = await stat(await workspace.resolve(file, 'read'));
  if (size > PARSE_LIMIT_BYTES) return `it is larger than ${formatBytes(PARSE_LIMIT_BYTES)}`;
  const rendering = await render({ data: await workspace.readFile(file), format }, options.signal);
  if ('unavailable' in rendering) return rendering.unavailable;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-harness-pages-'));
  try {
    const pdf = path.join(dir, 'document.pdf');
    await writeFile(pdf, rendering.pdf);
    const pages = await renderPdf(renderPdfPages, pdf, options);
    return typeof pages === 'string' ? `its PDF could not be turned into images: ${pages}` : pages;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The request's note on a document whose pages were not seen: which, why, and that its layout must not be assumed.
 */
export function unrenderedNote(file: string, reason: string, embeddedImages: boolean): string {
  const judged = embeddedImages ? 'its text preview and embedded images' : 'its text preview';
  return (
    `${file} was not rendered as page images (${reason}), so how its pages look was not seen: judge it by ${judged} ` +
    'only, and do not assume anything about its visual layout.'
  );
}
