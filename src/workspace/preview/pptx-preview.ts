import type { DOMParser } from '@xmldom/xmldom';
import type JSZip from 'jszip';
import path from 'node:path';
import type { FormatPreview } from './format-preview.js';

const SLIDE_PATH = /^ppt\/slides\/slide(\d+)\.xml$/;

type ParseXml = (text: string) => ReturnType<DOMParser['parseFromString']>;

/** Slide paths in presentation order (from `presentation.xml`), falling back to the numbers in the file names. */
async function slideOrder(zip: JSZip, parseXml: ParseXml): Promise<string[]> {
  const byNumber = Object.keys(zip.files)
    .filter((name) => SLIDE_PATH.test(name))
    .sort((a, b) => Number(SLIDE_PATH.exec(a)?.[1]) - Number(SLIDE_PATH.exec(b)?.[1]));
  const presentation = await zip.file('ppt/presentation.xml')?.async('string');
  const relations = await zip.file('ppt/_rels/presentation.xml.rels')?.async('string');
  if (!presentation || !relations) return byNumber;
  const targets = new Map<string, string>();
  const relationNodes = parseXml(relations).getElementsByTagName('Relationship');
  for (let index = 0; index < relationNodes.length; index += 1) {
    const node = relationNodes.item(index);
    const id = node?.getAttribute('Id');
    const target = node?.getAttribute('Target');
    if (id && target) targets.set(id, path.posix.normalize(path.posix.join('ppt', target)));
  }
  const ordered: string[] = [];
  const slideIds = parseXml(presentation).getElementsByTagName('p:sldId');
  for (let index = 0; index < slideIds.length; index += 1) {
    const target = targets.get(slideIds.item(index)?.getAttribute('r:id') ?? '');
    if (target && zip.file(target)) ordered.push(target);
  }
  return ordered.length > 0 ? ordered : byNumber;
}

function slideText(xml: string, parseXml: ParseXml): string {
  const paragraphs = parseXml(xml).getElementsByTagName('a:p');
  const lines: string[] = [];
  for (let index = 0; index < paragraphs.length; index += 1) {
    const runs = paragraphs.item(index)?.getElementsByTagName('a:t');
    let line = '';
    for (let run = 0; runs && run < runs.length; run += 1) line += runs.item(run)?.textContent ?? '';
    if (line.trim() !== '') lines.push(line.trim());
  }
  return lines.join('\n');
}

/** Slide-by-slide text of a PowerPoint presentation. */
export async function previewPptx(data: Uint8Array, maxChars: number): Promise<FormatPreview> {
  const [{ DOMParser }, { default: JSZip }] = await Promise.all([import('@xmldom/xmldom'), import('jszip')]);
  const parseXml: ParseXml = (text) => new DOMParser().parseFromString(text, 'text/xml');
  const zip = await JSZip.loadAsync(data);
  const slides = await slideOrder(zip, parseXml);
  const parts: string[] = [];
  let length = 0;
  for (const [index, slide] of slides.entries()) {
    if (length > maxChars) break;
    const xml = await zip.file(slide)?.async('string');
    const text = xml ? slideText(xml, parseXml) : '';
    const part = `--- slide ${index + 1} ---\n${text === '' ? '(no text)' : text}`;
    parts.push(part);
    length += part.length + 1;
  }
  return { details: `${slides.length} ${slides.length === 1 ? 'slide' : 'slides'}`, body: parts.join('\n') };
}
