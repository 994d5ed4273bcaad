/**
 * Rendering a PDF's pages for the verifier, with `pdfinfo` and `pdftoppm` (poppler-utils) when they are on the PATH.
 * @module
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Which pages {@link PdfPagesRenderer} renders, and how large. */
export interface PdfPagesRequest {
  /** Pixels of a page image's longer side. */
  maxLongSide: number;
  /** Pages rendered at most, from the first; 0 renders none (only the page count is read). */
  maxPages: number;
  signal?: AbortSignal | undefined;
}

/** The rendered pages of a PDF. */
export interface RenderedPdfPages {
  /** Pages the PDF has. */
  pageCount: number;
  /** PNG bytes of pages 1, 2, … (at most `maxPages` of them). */
  pages: Uint8Array[];
}

/**
 * Renders the first `maxPages` pages of the PDF at `absolutePath` as PNG images whose longer side is `maxLongSide`
 * pixels, and counts its pages. Resolves `undefined` when no renderer is available (the verify request then says so);
 * rejects when this PDF cannot be rendered.
 */
export type PdfPagesRenderer = (
  absolutePath: string,
  request: PdfPagesRequest,
) => Promise<RenderedPdfPages | undefined>;

/** Rendering that takes longer than this is given up (a hostile or broken PDF must not stall verification). */
const RENDER_TIMEOUT_MS = 60_000;
/** Largest output accepted from `pdfinfo`. */
const MAX_INFO_BYTES = 1024 * 1024;

/**
 * The default {@link PdfPagesRenderer}: `pdfinfo <file>` for the page count, then
 * `pdftoppm -png -f 1 -l <pages> -scale-to <maxLongSide> <file>` into a temporary directory, each with a 60-second
 * timeout.
 */
export const pdftoppmRenderer: PdfPagesRenderer = async (absolutePath, { maxLongSide, maxPages, signal }) => {
  const info = await run('pdfinfo', [absolutePath], signal);
  if (info === undefined) return undefined;
  const pageCount = Number(/^Pages:\s*(\d+)/m.exec(info.toString('utf8'))?.[1]);
  if (!Number.isInteger(pageCount)) throw new Error('pdfinfo did not report its number of pages');
  const last = Math.min(maxPages, pageCount);
  if (last < 1) return { pageCount, pages: [] };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-harness-pdf-'));
  try {
    const args = ['-png', '-f', '1', '-l', String(last), '-scale-to', String(maxLongSide), absolutePath];
    if ((await run('pdftoppm', [...args, path.join(dir, 'page')], signal)) === undefined) return undefined;
    // pdftoppm names them page-1.png … or page-01.png …, padded to the width of the last page number.
    const names = (await readdir(dir))
      .filter((name) => /^page-\d+\.png$/.test(name))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    return { pageCount, pages: await Promise.all(names.map((name) => readFile(path.join(dir, name)))) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** Runs a poppler tool; `undefined` when it is not installed. */
async function run(program: string, args: string[], signal: AbortSignal | undefined): Promise<Buffer | undefined> {
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { encoding: 'buffer', maxBuffer: MAX_INFO_BYTES, timeout: RENDER_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      (error, stdout, stderr) => {
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') resolve(undefined);
        else if (signal?.aborted) reject(signal.reason);
        else if (error) {
          const detail = (error as { killed?: boolean }).killed
            ? `it took longer than ${RENDER_TIMEOUT_MS / 1000} seconds`
            : stderr.toString('utf8').trim().split('\n')[0] || error.message;
          reject(new Error(`${program} could not render it: ${detail}`, { cause: error }));
        } else resolve(stdout);
      },
    );
  });
}
