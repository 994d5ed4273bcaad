import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import type { EventInput } from '../../src/events.js';
import { verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { Verifier } from '../../src/verifier/verifier.js';
import {
  gifHeader,
  imagesOf,
  makeJpeg,
  makePdf,
  makePng,
  officeWithMedia,
  origin,
  tempWorkspace,
  TextOnlyBackend,
  textOf,
  userParts,
} from './support.js';

function hasPdftoppm(): boolean {
  try {
    execFileSync('pdftoppm', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('Verifier: images of the deliverable', () => {
  it('sends a delivered image as an image part after a text part naming its file', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('chart.png', makePng(64, 48), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend }).verify({
      request: 'Draw a chart',
      deliverable: { answer: 'See chart.png', files: ['chart.png'] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'passed', imagesSeen: 1, imagesSkipped: 0 });
    const images = imagesOf(backend.calls[0]);
    expect(images).toEqual([
      {
        caption: expect.stringContaining('chart.png (64×48 px)'),
        mediaType: 'image/png',
        width: 64,
        height: 48,
        bytes: expect.any(Number),
      },
    ]);
    // The instructions still close the message, after the images.
    expect(userParts(backend.calls[0]).at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Reply with the verdict JSON only'),
    });
  });

  it('sends the images embedded in delivered PPTX and DOCX files not rendered, naming file and entry, in entry order', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile(
      'deck.pptx',
      await officeWithMedia('pptx', {
        'image10.png': makePng(10, 10),
        'image2.png': makePng(20, 20),
        'image3.emf': Buffer.from('EMF'),
      }),
      origin,
    );
    await workspace.writeFile('memo.docx', await officeWithMedia('docx', { 'image1.jpeg': makeJpeg(30, 20) }), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    // Rendering turned off: the request says the pages were not seen, without counting them as images not seen.
    const result = await new Verifier({ backend, renderOffice: false }).verify({
      request: 'Make a deck and a memo with pictures',
      deliverable: { answer: 'done', files: ['deck.pptx', 'memo.docx'] },
      workspace,
    });
    const images = imagesOf(backend.calls[0]);
    expect(images.map((i) => [i.caption.replace(/ \(.*$/, ''), i.mediaType, i.width])).toEqual([
      ['Image 1 of 3: deck.pptx, embedded image ppt/media/image2.png', 'image/png', 20],
      ['Image 2 of 3: deck.pptx, embedded image ppt/media/image10.png', 'image/png', 10],
      ['Image 3 of 3: memo.docx, embedded image word/media/image1.jpeg', 'image/jpeg', 30],
    ]);
    // The EMF is an image the model did not see: counted, and named in the request.
    expect(result).toMatchObject({ imagesSeen: 3, imagesSkipped: 1 });
    expect(textOf(backend.calls[0])).toMatch(
      /1 image\(s\) of the delivered files were not seen[\s\S]*deck\.pptx, embedded image ppt\/media\/image3\.emf: it is not an image format/,
    );
    expect(textOf(backend.calls[0])).toContain(
      'memo.docx was not rendered as page images (rendering of office documents is turned off (renderOffice: false)), ' +
        'so how its pages look was not seen: judge it by its text preview and embedded images only',
    );
  });

  it('downscales an image over the budget, PNG as PNG and JPEG as JPEG', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('wide.png', makePng(3_200, 800), origin);
    await workspace.writeFile('photo.jpg', makeJpeg(1_500, 1_200), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: '', files: ['wide.png', 'photo.jpg'] },
      workspace,
    });
    const [wide, photo] = imagesOf(backend.calls[0]);
    expect(wide).toMatchObject({ mediaType: 'image/png', width: 1_568, height: 392 });
    expect(wide?.caption).toContain('downscaled from 3200×800');
    expect(photo?.mediaType).toBe('image/jpeg');
    expect(Math.max(photo!.width, photo!.height)).toBeLessThanOrEqual(1_568);
    expect(photo!.width * photo!.height).toBeLessThanOrEqual(1_150_000);
    expect(photo!.width / photo!.height).toBeCloseTo(1_500 / 1_200, 2);
    expect(result).toMatchObject({ imagesSeen: 2, imagesSkipped: 0 });
  });

  it('keeps to the image count and skips, counts and names what it cannot downscale', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('a.png', makePng(8, 8), origin);
    await workspace.writeFile('huge.gif', gifHeader(4_000, 3_000), origin);
    await workspace.writeFile('b.png', makePng(8, 8), origin);
    await workspace.writeFile('c.png', makePng(8, 8), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend, images: { maxImages: 2 } }).verify({
      request: 'r',
      deliverable: { answer: '', files: ['a.png', 'huge.gif', 'b.png', 'c.png'] },
      workspace,
    });
    expect(imagesOf(backend.calls[0]).map((i) => i.caption.replace(/ \(.*$/, ''))).toEqual([
      'Image 1 of 2: a.png',
      'Image 2 of 2: b.png',
    ]);
    expect(result).toMatchObject({ imagesSeen: 2, imagesSkipped: 2 });
    const text = textOf(backend.calls[0]);
    expect(text).toContain('- huge.gif: it is over the image budget (4000×3000 px');
    expect(text).toContain('GIF cannot be downscaled here');
    expect(text).toContain('- c.png: the budget of 2 images per request is used up');
  });

  it('sends no image to a backend that takes none and says how many were not seen', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('a.png', makePng(8, 8), origin);
    await workspace.writeFile('b.png', makePng(8, 8), origin);
    const backend = new TextOnlyBackend({ verify: [verdict(true)] });
    const events: EventInput[] = [];
    const result = await new Verifier({ backend, emit: (e) => events.push(e) }).verify({
      request: 'r',
      deliverable: { answer: '', files: ['a.png', 'b.png'] },
      workspace,
      runId: 'run-1',
    });
    expect(imagesOf(backend.calls[0])).toEqual([]);
    expect(typeof backend.calls[0]!.messages[1]!.content).toBe('string');
    expect(textOf(backend.calls[0])).toContain(
      '2 image(s) of the delivered files were not seen: the verify backend does not accept images',
    );
    expect(result).toMatchObject({ status: 'passed', imagesSeen: 0, imagesSkipped: 2 });
    expect(events.find((e) => e.type === 'run-warning')).toMatchObject({
      runId: 'run-1',
      code: 'images-not-seen',
      purpose: 'verify',
      scope: 'verify-1',
    });
  });

  it('resends once as text only when the backend rejects the request with images', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('a.png', makePng(8, 8), origin);
    const rejected = new HarnessError('bad-request', 'HTTP 400: image input is not supported by this model');
    const backend = new ScriptedBackend({ verify: [rejected, verdict(false, ['a.png has no axis labels'])] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: '', files: ['a.png'] },
      workspace,
    });
    expect(backend.calls).toHaveLength(2);
    expect(imagesOf(backend.calls[0])).toHaveLength(1);
    expect(imagesOf(backend.calls[1])).toHaveLength(0);
    expect(textOf(backend.calls[1])).toContain(
      '1 image(s) of the delivered files were not seen: the verify backend rejected the request with images (HTTP 400: image input is not supported',
    );
    expect(result).toMatchObject({ status: 'failed', imagesSeen: 0, imagesSkipped: 1 });

    // A bad request without images is not the images' fault: it propagates.
    const textOnly = new ScriptedBackend({ verify: [rejected] });
    await expect(
      new Verifier({ backend: textOnly }).verify({ request: 'r', deliverable: { answer: 'x', files: [] }, workspace }),
    ).rejects.toMatchObject({ code: 'bad-request' });
    expect(textOnly.calls).toHaveLength(1);
  });

  it('says in the request when no PDF renderer is available', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('report.pdf', makePdf(['PDF-TEXT on page one']), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend, renderPdfPages: async () => undefined }).verify({
      request: 'Write report.pdf',
      deliverable: { answer: '', files: ['report.pdf'] },
      workspace,
    });
    const text = textOf(backend.calls[0]);
    expect(text).toContain('PDF-TEXT on page one');
    expect(text).toContain(
      'report.pdf was not rendered as page images (no PDF renderer is available (the default one is pdftoppm, from ' +
        'poppler-utils)), so how its pages look was not seen: judge it by its text preview only',
    );
    expect(result).toMatchObject({ imagesSeen: 0, imagesSkipped: 1 });
  });

  it('renders each page of a delivered PDF with pdftoppm, as large as the image budget allows', async (context) => {
    context.skip(
      !hasPdftoppm() && !process.env.CI,
      'pdftoppm (poppler-utils) is not installed; this test runs wherever CI is set',
    );
    const workspace = await tempWorkspace();
    await workspace.writeFile('report.pdf', makePdf(['Quarterly figures', 'Appendix']), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend }).verify({
      request: 'Write report.pdf',
      deliverable: { answer: '', files: ['report.pdf'] },
      workspace,
    });
    const pages = imagesOf(backend.calls[0]);
    expect(pages.map((page) => page.caption.replace(/ \(\d.*$/, ''))).toEqual([
      'Image 1 of 2: report.pdf, page 1 (rendered)',
      'Image 2 of 2: report.pdf, page 2 (rendered)',
    ]);
    for (const page of pages) {
      expect(page.mediaType).toBe('image/png');
      // A US Letter page, as large as the image budget allows.
      expect(Math.max(page.width, page.height)).toBeLessThanOrEqual(1_568);
      expect(page.width * page.height).toBeLessThanOrEqual(1_150_000);
      expect(page.width * page.height).toBeGreaterThan(1_000_000);
      expect(page.width / page.height).toBeCloseTo(612 / 792, 2);
    }
    expect(result).toMatchObject({ imagesSeen: 2, imagesSkipped: 0 });
  });
});
