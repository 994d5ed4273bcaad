import type { FormatPreview } from './format-preview.js';

/** The running text of a Word document, paragraphs separated by blank lines. */
export async function previewDocx(data: Buffer): Promise<FormatPreview> {
  const { default: mammoth } = await import('mammoth');
  const { value } = await mammoth.extractRawText({ buffer: data });
  const body = value.replace(/\n{3,}/g, '\n\n').trim();
  const words = body === '' ? 0 : body.split(/\s+/).length;
  return { details: `${words} words`, body: body === '' ? '(no text)' : body };
}
