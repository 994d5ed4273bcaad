import type { FormatPreview } from './format-preview.js';

/** Page count and page-by-page text of a PDF. */
export async function previewPdf(data: Uint8Array, maxChars: number): Promise<FormatPreview> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  // pdf.js takes ownership of the buffer it is given, so it gets a copy.
  const document = await getDocumentProxy(new Uint8Array(data));
  try {
    const { totalPages, text } = await extractText(document, { mergePages: false });
    const details = `${totalPages} ${totalPages === 1 ? 'page' : 'pages'}`;
    const parts: string[] = [];
    let length = 0;
    for (const [index, pageText] of text.entries()) {
      if (length > maxChars) break;
      const part = `--- page ${index + 1} ---\n${pageText.trim()}`;
      parts.push(part);
      length += part.length + 1;
    }
    const hasText = text.some((pageText) => pageText.trim() !== '');
    const body = hasText ? parts.join('\n') : '(no extractable text: the PDF may consist of scanned images)';
    return { details, body };
  } finally {
    await document.destroy();
  }
}
