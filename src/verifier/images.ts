/**
 * The images of a deliverable the verifier shows the model: image files, the rendered pages of PDFs and office
 * documents (or, where an office document cannot be rendered, the images embedded in PPTX and DOCX files), each fitted
 * to the image budget.
 * @module
 */
import { stat } from 'node:fs/promises';
import { toHarnessError } from '../errors.js';
import { formatBytes } from '../workspace/preview/bounded-text.js';
import { detectKind } from '../workspace/preview/file-kind.js';
import { describeImage } from '../workspace/preview/image-preview.js';
import { PARSE_LIMIT_BYTES } from '../workspace/preview/preview-file.js';
import type { Workspace } from '../workspace/types.js';
import { fitImage, MAX_DECODE_PIXELS } from './downscale.js';
import { officeFormatOf } from './office-render.js';
import { budgetUsedUp, type PageRenderers, renderPages, unrenderedNote } from './rendered-pages.js';

/** How many images one verify request carries, and how large each may be (see `DEFAULTS.verifyImages`). */
export interface ImageBudget {
  /** Images per verify request; 0 sends none. */
  maxImages: number;
  /** Pixels of an image's longer side; a larger image is downscaled. */
  maxLongSide: number;
  /** Pixels of an image in all (width × height); a larger image is downscaled. */
  maxPixels: number;
  /** Bytes of an encoded image; a larger one is re-encoded, and skipped when it stays larger. */
  maxBytes: number;
}

/** An image ready to be sent, fitted to the budget. */
export interface PreparedImage {
  /** Which file, and which image in it: `chart.png`, `deck.pptx, embedded image ppt/media/image2.png`, …. */
  label: string;
  /** Base64. */
  data: string;
  mediaType: string;
  width: number;
  height: number;
  /** The size before downscaling, when it was downscaled. */
  original?: { width: number; height: number };
}

/** An image of the deliverable that will not be sent, and why. */
export interface SkippedImage {
  label: string;
  reason: string;
}

/** Every image of a deliverable: those ready to send, those skipped, and notes for the prompt. */
export interface CollectedImages {
  images: PreparedImage[];
  skipped: SkippedImage[];
  /** Facts the model should know, e.g. that a document's pages could not be rendered. */
  notes: string[];
}

/** What {@link collectImages} needs besides the files: the budget, and the renderers of PDF and office pages. */
export interface CollectImagesOptions extends PageRenderers {
  budget: ImageBudget;
  signal?: AbortSignal | undefined;
}

/** Media types the common vision APIs accept. */
const SENDABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Where Office files keep their embedded images. */
const MEDIA_FOLDERS = { pptx: 'ppt/media/', docx: 'word/media/' } as const;

/** One image source: its label and how to get its bytes. */
interface Source {
  label: string;
  load: () => Promise<Uint8Array>;
}

/**
 * Collects the images of the delivered `files` (existing, workspace-relative paths) in file order, at most
 * `budget.maxImages`; every other image found is listed as skipped with its reason. A PDF or office document shows
 * its rendered pages; a document that could not be rendered is listed as skipped (unless its renderer is turned
 * off) and noted, and a PPTX or DOCX then shows its embedded images. Decides a file's kind by its name.
 */
export async function collectImages(
  workspace: Workspace,
  files: readonly string[],
  options: CollectImagesOptions,
): Promise<CollectedImages> {
  const collected: CollectedImages = { images: [], skipped: [], notes: [] };
  for (const file of files) {
    let sources: Source[];
    try {
      sources = await sourcesOf(workspace, file, options, collected);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      collected.notes.push(`${file} could not be opened for its images (${toHarnessError(error).message}).`);
      continue;
    }
    for (const source of sources) {
      if (collected.images.length >= options.budget.maxImages) {
        collected.skipped.push({ label: source.label, reason: budgetUsedUp(options.budget.maxImages) });
        continue;
      }
      let data: Uint8Array;
      try {
        data = await source.load();
      } catch (error) {
        collected.skipped.push({
          label: source.label,
          reason: `it could not be read (${toHarnessError(error).message})`,
        });
        continue;
      }
      const prepared = await prepareImage(source.label, data, options.budget);
      if ('reason' in prepared) collected.skipped.push(prepared);
      else collected.images.push(prepared);
    }
  }
  return collected;
}

async function sourcesOf(
  workspace: Workspace,
  file: string,
  options: CollectImagesOptions,
  collected: CollectedImages,
): Promise<Source[]> {
  const kind = detectKind(file, new Uint8Array());
  if (kind === 'image') return [{ label: file, load: () => workspace.readFile(file) }];
  const format = kind === 'pdf' ? 'pdf' : officeFormatOf(file);
  if (format) {
    const { budget } = options;
    const rendered = await renderPages(workspace, file, format, {
      ...options,
      maxLongSide: budget.maxLongSide,
      maxImages: budget.maxImages,
      room: Math.max(0, budget.maxImages - collected.images.length),
    });
    collected.skipped.push(...rendered.overBudget);
    if (!rendered.unrendered) return rendered.pages.map(({ label, data }) => ({ label, load: async () => data }));
    const { reason, turnedOff } = rendered.unrendered;
    // The host chose not to render: said in the request, not counted as an image not seen.
    if (!turnedOff) collected.skipped.push({ label: `${file} (rendered pages)`, reason });
    collected.notes.push(unrenderedNote(file, reason, kind === 'pptx' || kind === 'docx'));
  }
  if (kind !== 'pptx' && kind !== 'docx') return [];
  const absolute = await workspace.resolve(file, 'read');
  const { size } = await stat(absolute);
  if (size > PARSE_LIMIT_BYTES) {
    collected.notes.push(
      `${file} was not opened for its embedded images: it is larger than ${formatBytes(PARSE_LIMIT_BYTES)}.`,
    );
    return [];
  }
  const { default: JSZip } = await import('jszip');
  const zip = await JSZip.loadAsync(await workspace.readFile(file));
  const folder = MEDIA_FOLDERS[kind];
  return Object.values(zip.files)
    .filter((entry) => !entry.dir && entry.name.startsWith(folder))
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }))
    .map((entry) => ({ label: `${file}, embedded image ${entry.name}`, load: () => entry.async('uint8array') }));
}

/** Images named per reason by {@link describeNotSeen}; the rest are counted. */
const NAMED_PER_REASON = 5;

/** The images not seen, grouped by reason, each naming its first images: `why: a.png, b.png and 3 more; why2: …`. */
export function describeNotSeen(notSeen: readonly SkippedImage[]): string {
  const byReason = new Map<string, string[]>();
  for (const { label, reason } of notSeen) {
    const labels = byReason.get(reason) ?? [];
    labels.push(label);
    byReason.set(reason, labels);
  }
  return [...byReason]
    .map(([reason, labels]) => {
      const more = labels.length > NAMED_PER_REASON ? ` and ${labels.length - NAMED_PER_REASON} more` : '';
      return `${reason}: ${labels.slice(0, NAMED_PER_REASON).join(', ')}${more}`;
    })
    .join('; ');
}

/** The image as it will be sent, or why it will not be. */
async function prepareImage(
  label: string,
  data: Uint8Array,
  budget: ImageBudget,
): Promise<PreparedImage | SkippedImage> {
  let info: Awaited<ReturnType<typeof describeImage>>;
  try {
    info = await describeImage(data);
  } catch {
    return { label, reason: 'it is not an image format that can be read' };
  }
  const { width, height, mediaType } = info;
  if (!SENDABLE.has(mediaType)) {
    return { label, reason: `${info.type.toUpperCase()} is not sent (only PNG, JPEG, GIF and WEBP are)` };
  }
  const withinBox =
    Math.max(width, height) <= budget.maxLongSide &&
    width * height <= budget.maxPixels &&
    data.byteLength <= budget.maxBytes;
  if (withinBox) return { label, data: base64(data), mediaType, width, height };
  const size = `${width}×${height} px, ${formatBytes(data.byteLength)}`;
  if (mediaType !== 'image/png' && mediaType !== 'image/jpeg') {
    return {
      label,
      reason: `it is over the image budget (${size}) and ${info.type.toUpperCase()} cannot be downscaled here`,
    };
  }
  if (width * height > MAX_DECODE_PIXELS) return { label, reason: `it is too large to decode and downscale (${size})` };
  let fitted: Awaited<ReturnType<typeof fitImage>>;
  try {
    fitted = await fitImage(data, mediaType, budget);
  } catch (error) {
    return {
      label,
      reason: `it is over the image budget (${size}) and could not be decoded (${toHarnessError(error).message})`,
    };
  }
  if (!fitted) return { label, reason: `it is still over ${formatBytes(budget.maxBytes)} after downscaling (${size})` };
  return {
    label,
    data: base64(fitted.data),
    mediaType: fitted.mediaType,
    width: fitted.width,
    height: fitted.height,
    original: { width, height },
  };
}

function base64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}
