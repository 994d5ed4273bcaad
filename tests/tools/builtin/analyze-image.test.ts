import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContentPart } from '../../../src/backend/types.js';
import { analyzeImageTool } from '../../../src/tools/builtin/index.js';
import { ScriptedBackend, reply } from '../../../src/testing/index.js';
import { LocalWorkspace } from '../../../src/workspace/index.js';
import { makePng } from '../../workspace/support/make-files.js';
import { invoke, toolContext } from '../../workspace/support/tool-context.js';

let base: string;
let workspace: LocalWorkspace;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'analyze-image-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('analyze_image', () => {
  it('is read-only', () => {
    expect(analyzeImageTool().readOnly).toBe(true);
  });

  it('rejects a bad maxBytes at creation, naming the option', () => {
    expect(() => analyzeImageTool({ maxBytes: -5 })).toThrowError(/analyzeImageTool: option "maxBytes"/);
    expect(() => analyzeImageTool({ maxBytes: 1.5 })).toThrowError(
      expect.objectContaining({ code: 'invalid-options' }),
    );
  });

  it('sends the question and the image to the vision backend with purpose vision', async () => {
    const png = makePng(8, 4);
    await workspace.writeFile('charts/bar.png', png, { tool: 'test' });
    const vision = new ScriptedBackend({ vision: [reply('A red rectangle, no text.')] });
    const main = new ScriptedBackend([]);
    const result = await invoke(
      analyzeImageTool(),
      { path: 'charts/bar.png', question: 'What colour is it?' },
      toolContext(workspace, { backends: { vision, execute: main } }),
    );
    expect(result.isError).toBe(false);
    expect(result.text).toBe('A red rectangle, no text.');
    vision.assertComplete();
    expect(main.calls).toHaveLength(0);
    const request = vision.calls[0]!;
    expect(request.purpose).toBe('vision');
    const user = request.messages.find((message) => message.role === 'user');
    expect(user?.content).toEqual([
      { type: 'text', text: 'What colour is it?' },
      { type: 'image', data: png.toString('base64'), mediaType: 'image/png' },
    ] satisfies ContentPart[]);
  });

  it('asks for a description when no question is given', async () => {
    await workspace.writeFile('a.png', makePng(2, 2), { tool: 'test' });
    const vision = new ScriptedBackend({ vision: [reply('Two by two pixels.')] });
    await invoke(analyzeImageTool(), { path: 'a.png' }, toolContext(workspace, { backends: { vision } }));
    const user = vision.calls[0]!.messages.find((message) => message.role === 'user');
    expect(JSON.stringify(user?.content)).toContain('Describe this image in detail');
  });

  it('refuses files that are not supported images without calling the model', async () => {
    await workspace.writeFile('notes.txt', 'hello', { tool: 'test' });
    await workspace.writeFile('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>', {
      tool: 'test',
    });
    const vision = new ScriptedBackend([]);
    const context = toolContext(workspace, { backends: { vision } });
    const text = await invoke(analyzeImageTool(), { path: 'notes.txt' }, context);
    expect(text.isError).toBe(true);
    expect(text.text).toContain('not an image analyze_image can read');
    const svg = await invoke(analyzeImageTool(), { path: 'logo.svg' }, context);
    expect(svg.text).toContain('image/svg+xml; analyze_image accepts PNG, JPEG, GIF and WEBP');
    const big = await invoke(analyzeImageTool({ maxBytes: 10 }), { path: 'logo.svg' }, context);
    expect(big.text).toContain('accepts up to 10 B');
    expect(vision.calls).toHaveLength(0);
  });

  it('refuses images outside the workspace', async () => {
    const vision = new ScriptedBackend([]);
    const result = await invoke(
      analyzeImageTool(),
      { path: '../x.png' },
      toolContext(workspace, { backends: { vision } }),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('".." segments are not allowed');
  });

  it('reports an empty model answer as an error', async () => {
    await workspace.writeFile('a.png', makePng(2, 2), { tool: 'test' });
    const vision = new ScriptedBackend({ vision: [reply('  ')] });
    const result = await invoke(
      analyzeImageTool(),
      { path: 'a.png' },
      toolContext(workspace, { backends: { vision } }),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('returned no text');
  });
});
