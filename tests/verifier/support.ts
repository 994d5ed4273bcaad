import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { imageSize } from 'image-size';
import { encode as encodeJpeg } from 'jpeg-js';
import JSZip from 'jszip';
import { afterEach } from 'vitest';
import type { ContentPart, GenerateRequest, Message } from '../../src/backend/types.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';

export { makePdf, makePng } from '../workspace/support/make-files.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A fresh workspace in a temp directory, removed after the test. */
export async function tempWorkspace(): Promise<LocalWorkspace> {
  const dir = await mkdtemp(path.join(tmpdir(), 'verifier-test-'));
  dirs.push(dir);
  return LocalWorkspace.create({ dir });
}

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'verifier-test-'));
  dirs.push(dir);
  return dir;
}

export const origin = { tool: 'host' };

/** A scripted backend whose model takes no images. */
export class TextOnlyBackend extends ScriptedBackend {
  readonly supportsImages = false;
}

/** A solid-colour baseline JPEG. */
export function makeJpeg(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4, 180);
  return encodeJpeg({ width, height, data }, 80).data;
}

/** The header of a GIF of the given size (enough for its size to be read; the pixels are never decoded). */
export function gifHeader(width: number, height: number): Buffer {
  const header = Buffer.from('GIF89a\0\0\0\0\0\0\0', 'latin1');
  header.writeUInt16LE(width, 6);
  header.writeUInt16LE(height, 8);
  return header;
}

/** An Office-style ZIP (PPTX or DOCX) holding the given media entries beside a placeholder part. */
export async function officeWithMedia(kind: 'pptx' | 'docx', media: Record<string, Uint8Array>): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(kind === 'pptx' ? 'ppt/presentation.xml' : 'word/document.xml', '<?xml version="1.0"?><x/>');
  for (const [name, data] of Object.entries(media)) zip.file(`${kind === 'pptx' ? 'ppt' : 'word'}/media/${name}`, data);
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** The content parts of a request's user message (a string content is one text part). */
export function userParts(request: GenerateRequest | undefined): ContentPart[] {
  const user = request?.messages.find((m): m is Extract<Message, { role: 'user' }> => m.role === 'user');
  if (!user) return [];
  return typeof user.content === 'string' ? [{ type: 'text', text: user.content }] : user.content;
}

/** The image parts of a request, each with the text part just before it and its decoded size. */
export function imagesOf(
  request: GenerateRequest | undefined,
): Array<{ caption: string; mediaType: string; width: number; height: number; bytes: number }> {
  const parts = userParts(request);
  return parts.flatMap((part, i) => {
    if (part.type !== 'image') return [];
    const before = parts[i - 1];
    const data = Buffer.from(part.data, 'base64');
    const size = imageSize(data);
    return [
      {
        caption: before?.type === 'text' ? unmarked(before.text) : '',
        mediaType: part.mediaType,
        width: size.width,
        height: size.height,
        bytes: data.length,
      },
    ];
  });
}

/** All text of a request's messages, without the run's data markers (tests/security checks those). */
export function textOf(request: GenerateRequest | undefined): string {
  return unmarked(
    (request?.messages ?? [])
      .map((m) =>
        typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n'),
      )
      .join('\n'),
  );
}

/** `text` without the `⟦data-…⟧`/`⟦/data-…⟧` markers of untrusted data. */
export function unmarked(text: string): string {
  return text.replace(/⟦\/?data-[0-9a-f]{16}⟧/g, '');
}
