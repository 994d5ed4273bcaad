import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PNG } from 'pngjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest } from '../../src/backend/types.js';
import type { EventInput } from '../../src/events.js';
import { createHarness } from '../../src/index.js';
import { submit, toolCall, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { OFFICE_FORMATS, sofficeRenderer } from '../../src/verifier/office-render.js';
import { pdftoppmRenderer } from '../../src/verifier/pdf-page.js';
import { Verifier } from '../../src/verifier/verifier.js';
import { makeWorkbook } from '../workspace/support/make-files.js';
import { makeDeck } from './make-deck.js';
import { imagesOf, makePdf, makePng, origin, tempDir, tempWorkspace, textOf, userParts } from './support.js';

function installed(program: string, versionFlag: string): boolean {
  try {
    execFileSync(program, [versionFlag], { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** Whether `program` is an executable on the PATH (without running it: `soffice --version` writes into `$HOME`). */
function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const CI = process.env.CI === 'true';
const hasPdftoppm = installed('pdftoppm', '-v');
/** What the default office renderer needs: LibreOffice, poppler-utils, and a usable bubblewrap (its sandbox). */
const canRenderOffice = hasPdftoppm && onPath('soffice') && probeBwrap().available;
const sandbox = probeBwrap().available ? 'bwrap' : 'none';

/** The picture the decks are about: a solid green the white slides and black text do not have. */
const GREEN: [number, number, number] = [0, 160, 60];

/** Pixels of a PNG close to {@link GREEN}. */
function greenPixels(png: Buffer): number {
  const { data } = PNG.sync.read(png);
  let count = 0;
  for (let i = 0; i < data.length; i += 4) {
    const [r, g, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number];
    if (r < 60 && g > 120 && g < 200 && b > 20 && b < 110) count += 1;
  }
  return count;
}

/** The image parts of a request: caption and PNG bytes. */
function pageImages(request: GenerateRequest | undefined): Array<{ caption: string; png: Buffer }> {
  const captions = imagesOf(request).map((image) => image.caption);
  return userParts(request)
    .filter((part) => part.type === 'image')
    .map((part, i) => ({ caption: captions[i] ?? '', png: Buffer.from(part.data, 'base64') }));
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('Verifier: rendered pages of delivered PDFs', () => {
  it('sends every page of a multi-page PDF that the image budget has room for, and names the rest', async (context) => {
    context.skip(!hasPdftoppm && !CI, 'pdftoppm (poppler-utils) is not installed; this test runs wherever CI is set');
    const workspace = await tempWorkspace();
    await workspace.writeFile('cover.png', makePng(40, 30), origin);
    await workspace.writeFile('report.pdf', makePdf(['One', 'Two two', 'Three three three', 'Four', 'Five']), origin);
    const asked: number[] = [];
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const events: EventInput[] = [];
    const result = await new Verifier({
      backend,
      images: { maxImages: 4 },
      renderPdfPages: (file, request) => {
        asked.push(request.maxPages);
        return pdftoppmRenderer(file, request);
      },
      emit: (event) => events.push(event),
    }).verify({
      request: 'Write report.pdf with a cover image',
      deliverable: { answer: '', files: ['cover.png', 'report.pdf'] },
      workspace,
    });
    // The cover took one image of four: three pages are rendered, not five.
    expect(asked).toEqual([3]);
    const images = pageImages(backend.calls[0]);
    expect(images.map((image) => image.caption.replace(/ \(\d.*$/, ''))).toEqual([
      'Image 1 of 4: cover.png',
      'Image 2 of 4: report.pdf, page 1 (rendered)',
      'Image 3 of 4: report.pdf, page 2 (rendered)',
      'Image 4 of 4: report.pdf, page 3 (rendered)',
    ]);
    // Each page is its own rendering.
    expect(new Set(images.map((image) => image.png.toString('base64'))).size).toBe(4);
    expect(result).toMatchObject({ imagesSeen: 4, imagesSkipped: 2 });
    const text = textOf(backend.calls[0]);
    expect(text).toContain('- report.pdf, page 4 (rendered): the budget of 4 images per request is used up');
    expect(text).toContain('- report.pdf, page 5 (rendered): the budget of 4 images per request is used up');
    expect(events.find((event) => event.type === 'run-warning')).toMatchObject({
      code: 'images-not-seen',
      message: expect.stringContaining(
        'the budget of 4 images per request is used up: report.pdf, page 4 (rendered), report.pdf, page 5 (rendered)',
      ),
    });
  });
});

describe('Verifier: office documents without LibreOffice', () => {
  it('says which delivered documents were not rendered and why, and shows what it can instead', async () => {
    // A PATH without soffice: the machine has no LibreOffice.
    vi.stubEnv('PATH', await tempDir());
    const workspace = await tempWorkspace();
    const picture = makePng(40, 30, GREEN);
    await workspace.writeFile('deck.pptx', await makeDeck([{ title: 'Chart', picture }]), origin);
    await workspace.writeFile('sheet.xlsx', makeWorkbook({ Sales: [['region', 'revenue']] }), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const events: EventInput[] = [];
    const result = await new Verifier({ backend, emit: (event) => events.push(event) }).verify({
      request: 'Make a deck with the chart and a sales sheet',
      deliverable: { answer: '', files: ['deck.pptx', 'sheet.xlsx'] },
      workspace,
      runId: 'run-1',
    });
    const text = textOf(backend.calls[0]);
    const missing = 'LibreOffice (soffice) is not installed; install it to let the verifier see the pages';
    expect(text).toContain(
      `deck.pptx was not rendered as page images (${missing} (Debian/Ubuntu: apt-get install libreoffice-impress ` +
        'libreoffice-writer libreoffice-calc)), so how its pages look was not seen: judge it by its text preview and ' +
        'embedded images only, and do not assume anything about its visual layout.',
    );
    expect(text).toContain(`sheet.xlsx was not rendered as page images (${missing}`);
    expect(text).toContain('judge it by its text preview only, and do not assume anything about its visual layout.');
    // The deck's embedded picture is still shown.
    expect(imagesOf(backend.calls[0]).map((image) => image.caption.replace(/ \(\d.*$/, ''))).toEqual([
      'Image 1 of 1: deck.pptx, embedded image ppt/media/image1.png',
    ]);
    expect(result).toMatchObject({ imagesSeen: 1, imagesSkipped: 2 });
    const warning = events.find((event) => event.type === 'run-warning');
    expect(warning).toMatchObject({ runId: 'run-1', code: 'images-not-seen', purpose: 'verify' });
    expect(warning && 'message' in warning ? warning.message : '').toContain(
      `${missing} (Debian/Ubuntu: apt-get install libreoffice-impress libreoffice-writer libreoffice-calc): ` +
        'deck.pptx (rendered pages), sheet.xlsx (rendered pages)',
    );
  });

  it('says so for a LibreOffice command that does not exist', async () => {
    const render = sofficeRenderer({ command: '/nowhere/libreoffice/program/soffice' });
    await expect(render({ data: new Uint8Array(), format: 'docx' })).resolves.toEqual({
      unavailable: 'LibreOffice ("/nowhere/libreoffice/program/soffice") was not found',
    });
  });
});

describe('sofficeRenderer: time limit and abort', () => {
  /** A stand-in for LibreOffice that starts a child process and never finishes; `marker` names the child. */
  async function hangingSoffice(marker: string): Promise<string> {
    // Beside the project rather than in /tmp: the sandbox has a /tmp of its own.
    const root = path.resolve(import.meta.dirname, '../../.tmp', `hanging-soffice-${process.pid}-${marker}`);
    const program = path.join(root, 'program', 'soffice');
    await mkdir(path.dirname(program), { recursive: true });
    await writeFile(program, `#!/bin/sh\nsleep ${marker} &\nwait\n`);
    await chmod(program, 0o755);
    cleanup.push(root);
    return program;
  }
  const cleanup: string[] = [];
  afterEach(async () => {
    for (const dir of cleanup.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  /** Whether a live (not zombie) `sleep <marker>` runs anywhere on this machine. */
  async function running(marker: string): Promise<boolean> {
    for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      try {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
        if (cmdline !== `sleep\0${marker}\0`) continue;
        const state = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.[0];
        if (state !== 'Z') return true;
      } catch {
        // Gone meanwhile.
      }
    }
    return false;
  }

  async function until(condition: () => Promise<boolean>): Promise<void> {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  it('kills every process of a render that is aborted, and rejects with the abort reason', async () => {
    const marker = `86400.${process.pid}1`;
    const render = sofficeRenderer({ command: await hangingSoffice(marker), sandbox });
    const controller = new AbortController();
    const rendering = render({ data: new Uint8Array([1]), format: 'pptx' }, controller.signal);
    rendering.catch(() => undefined);
    await until(() => running(marker));
    const reason = new Error('the run was stopped');
    controller.abort(reason);
    await expect(rendering).rejects.toBe(reason);
    await until(async () => !(await running(marker)));
  });

  it('stops a render over its time limit, and the verify request names the document and why', async () => {
    const marker = `86400.${process.pid}2`;
    const workspace = await tempWorkspace();
    await workspace.writeFile('deck.pptx', await makeDeck([{ title: 'Only slide' }]), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const renderOffice = sofficeRenderer({ command: await hangingSoffice(marker), sandbox, timeoutMs: 1_000 });
    const result = await new Verifier({ backend, renderOffice }).verify({
      request: 'Make a deck',
      deliverable: { answer: '', files: ['deck.pptx'] },
      workspace,
    });
    expect(textOf(backend.calls[0])).toContain(
      'deck.pptx was not rendered as page images (it could not be rendered (LibreOffice took longer than its time ' +
        'limit (1000 ms) and was stopped)), so how its pages look was not seen',
    );
    expect(result).toMatchObject({ imagesSeen: 0, imagesSkipped: 1 });
    await until(async () => !(await running(marker)));
  });
});

describe('LibreOffice rendering (runs wherever CI is set)', () => {
  const skipWithout = (context: { skip: (condition: boolean, note: string) => void }) =>
    context.skip(
      !canRenderOffice && !CI,
      'LibreOffice (soffice), pdftoppm or a usable bubblewrap is missing; this test runs wherever CI is set',
    );

  it('uses import filters this LibreOffice has', async (context) => {
    skipWithout(context);
    const program = execFileSync('sh', ['-c', 'readlink -f "$(command -v soffice)"'], { encoding: 'utf8' }).trim();
    const registry = path.join(path.dirname(path.dirname(program)), 'share', 'registry');
    const configuration = (
      await Promise.all(
        (
          await readdir(registry)
        )
          .filter((name) => name.endsWith('.xcd'))
          .map((name) => readFile(path.join(registry, name), 'utf8')),
      )
    ).join('\n');
    for (const { filter } of Object.values(OFFICE_FORMATS)) {
      // A filter (types have no flags) that imports.
      const importing = new RegExp(
        `<node oor:name="${filter}" oor:op="replace">\\s*<prop oor:name="Flags">\\s*<value>[^<]*\\bIMPORT\\b`,
      );
      expect(configuration, filter).toMatch(importing);
    }
  });

  it('shows the verifier a deck slide without its picture and, after the repair, with it', async (context) => {
    skipWithout(context);
    const picture = makePng(400, 300, GREEN);
    const makeDeckTool = defineTool({
      name: 'make_deck',
      description: 'Writes deck.pptx: a title slide and a chart slide, with or without the chart picture.',
      input: z.object({ picture: z.boolean() }),
      execute: async (input, ctx) => {
        const deck = await makeDeck([
          { title: 'Results' },
          input.picture ? { title: 'Chart', picture } : { title: 'Chart' },
        ]);
        await ctx.workspace.writeFile('deck.pptx', deck, { tool: 'make_deck', scope: ctx.scope });
        return { text: 'wrote deck.pptx', files: ['deck.pptx'] };
      },
    });
    // The verifier's judgement follows what it is shown: the chart slide's green picture, or its absence.
    const judge = (request: GenerateRequest) => {
      const chart = pageImages(request).find((image) => image.caption.includes('deck.pptx, slide 2 (rendered)'));
      if (!chart) return verdict(false, ['The chart slide was not shown.']);
      return greenPixels(chart.png) > 0 ? verdict(true) : verdict(false, ['Slide 2 has no chart picture.']);
    };
    const backend = new ScriptedBackend({
      execute: [toolCall('make_deck', { picture: false }), submit('deck.pptx is ready', ['deck.pptx'])],
      verify: [judge, judge],
      repair: [toolCall('make_deck', { picture: true }), submit('The chart is on slide 2.', ['deck.pptx'])],
    });
    const result = await createHarness({
      backend,
      tools: [makeDeckTool],
      workspace: await tempDir(),
      decomposition: false,
    }).run('Make deck.pptx with a title slide and a slide showing the chart picture.');

    const [before, after] = backend.callsFor('verify').map(pageImages);
    for (const images of [before, after]) {
      expect(images?.map((image) => image.caption.replace(/ \(\d.*$/, ''))).toEqual([
        'Image 1 of 2: deck.pptx, slide 1 (rendered)',
        'Image 2 of 2: deck.pptx, slide 2 (rendered)',
      ]);
    }
    // The title slides look alike; the chart slide differs by the picture, which only the repaired deck shows.
    expect(greenPixels(before![0]!.png)).toBe(0);
    expect(greenPixels(after![0]!.png)).toBe(0);
    expect(greenPixels(before![1]!.png)).toBe(0);
    const slide = PNG.sync.read(after![1]!.png);
    // The picture covers 4 × 3 inches of a 10 × 7.5-inch slide: about 16 % of it.
    expect(greenPixels(after![1]!.png) / (slide.width * slide.height)).toBeGreaterThan(0.1);
    expect(result.verdicts.map((v) => v.status)).toEqual(['failed', 'passed']);
    expect(result.verdicts[0]?.defects).toEqual([{ description: 'Slide 2 has no chart picture.' }]);
    expect(result.status).toBe('succeeded');
    backend.assertComplete();
  }, 300_000);
});
