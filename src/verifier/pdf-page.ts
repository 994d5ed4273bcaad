/**
 * Rendering a PDF's first page for the verifier, with `pdftoppm` (poppler-utils) when it is on the PATH.
 * @module
 */

/**
 * Renders the first page of the PDF at `absolutePath` as PNG bytes whose longer side is `maxLongSide` pixels.
 * Resolves `undefined` when no renderer is available (the verify request then says so); rejects when this PDF cannot
 * be rendered.
 */
export type PdfPageRenderer = (
  absolutePath: string,
  maxLongSide: number,
  signal?: AbortSignal,
) => Promise<Uint8Array | undefined>;

/** A page that takes longer than this to render is given up (a hostile or broken PDF must not stall verification). */
const RENDER_TIMEOUT_MS = 60_000;
/** Largest PNG accepted from the renderer; a 1 568-pixel page is far smaller. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** The default {@link PdfPageRenderer}: `pdftoppm -png -singlefile -f 1 -l 1 -scale-to <maxLongSide> <file>`. */
export const pdftoppmRenderer: PdfPageRenderer = async (absolutePath, maxLongSide, signal) => {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    execFile(
      'pdftoppm',
      ['-png', '-singlefile', '-f', '1', '-l', '1', '-scale-to', String(maxLongSide), absolutePath],
      { encoding: 'buffer', maxBuffer: MAX_OUTPUT_BYTES, timeout: RENDER_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      (error, stdout, stderr) => {
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') resolve(undefined);
        else if (error) {
          const detail = stderr.toString('utf8').trim().split('\n')[0] || error.message;
          reject(new Error(`pdftoppm could not render it: ${detail}`, { cause: error }));
        } else resolve(stdout);
      },
    );
  });
};
