import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { generateImageTool, openAIImages, type ImageBackend } from '../../../src/tools/builtin/index.js';
import { LocalWorkspace } from '../../../src/workspace/index.js';
import { makePng } from '../../workspace/support/make-files.js';
import { invoke, toolContext } from '../../workspace/support/tool-context.js';

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

let server: Server;
let baseURL: string;
let seen: Seen[] = [];
let respond: (res: ServerResponse, body: Record<string, unknown>) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      respond(res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let base: string;
let workspace: LocalWorkspace;

beforeEach(async () => {
  seen = [];
  base = await mkdtemp(path.join(os.tmpdir(), 'generate-image-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const png = makePng(16, 8);

describe('openAIImages', () => {
  it('posts to /images/generations with the key, model, size and b64_json, and decodes the image', async () => {
    respond = (res) =>
      json(res, 200, { created: 1, data: [{ b64_json: png.toString('base64'), revised_prompt: 'a red box' }] });
    const backend = openAIImages({ baseURL, apiKey: 'sk-test', model: 'dall-e-3', extraBody: { quality: 'hd' } });
    const image = await backend.generate({ prompt: 'a box', size: '1024x1024' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('/v1/images/generations');
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(seen[0]!.body).toEqual({
      quality: 'hd',
      model: 'dall-e-3',
      prompt: 'a box',
      n: 1,
      size: '1024x1024',
      response_format: 'b64_json',
    });
    expect(Buffer.from(image.data).equals(png)).toBe(true);
    expect(image.mediaType).toBe('image/png');
    expect(image.revisedPrompt).toBe('a red box');
    expect(backend.modelId).toBe('dall-e-3');
  });

  it('does not send response_format to GPT image models, and uses defaultSize', async () => {
    respond = (res) => json(res, 200, { data: [{ b64_json: png.toString('base64') }] });
    await openAIImages({ baseURL, model: 'gpt-image-1', defaultSize: '512x512' }).generate({ prompt: 'p' });
    expect(seen[0]!.body).toEqual({ model: 'gpt-image-1', prompt: 'p', n: 1, size: '512x512' });
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('maps HTTP errors to HarnessErrors with codes and retryability', async () => {
    const backend = openAIImages({ baseURL, apiKey: 'bad', model: 'gpt-image-1' });
    respond = (res) => json(res, 401, { error: { message: 'Incorrect API key' } });
    await expect(backend.generate({ prompt: 'p' })).rejects.toMatchObject({ code: 'authentication', retryable: false });
    respond = (res) => json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '3' });
    await expect(backend.generate({ prompt: 'p' })).rejects.toMatchObject({
      code: 'rate-limited',
      retryable: true,
      retryAfterMs: 3000,
    });
    respond = (res) => json(res, 500, { error: 'boom' });
    await expect(backend.generate({ prompt: 'p' })).rejects.toMatchObject({ code: 'server-error', retryable: true });
  });

  it('rejects a response without an image or with bytes that are not an image', async () => {
    const backend = openAIImages({ baseURL, model: 'dall-e-2' });
    respond = (res) => json(res, 200, { data: [{ url: 'https://example.invalid/x.png' }] });
    await expect(backend.generate({ prompt: 'p' })).rejects.toMatchObject({ code: 'invalid-response' });
    respond = (res) => json(res, 200, { data: [{ b64_json: Buffer.from('hello').toString('base64') }] });
    await expect(backend.generate({ prompt: 'p' })).rejects.toThrow(/does not decode to a known image format/);
  });

  it('times out and can be aborted', async () => {
    respond = () => {};
    const slow = openAIImages({ baseURL, model: 'm', timeoutMs: 100 });
    await expect(slow.generate({ prompt: 'p' })).rejects.toMatchObject({ code: 'timeout' });
    const controller = new AbortController();
    const pending = openAIImages({ baseURL, model: 'm' }).generate({ prompt: 'p', signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
  });

  it('rejects invalid options', () => {
    expect(() => openAIImages({ baseURL: 'not a url', model: 'm' })).toThrow(/baseURL/);
    expect(() => openAIImages({ model: '' })).toThrow(HarnessError);
  });
});

describe('generate_image', () => {
  const fake = (data: Uint8Array = png, mediaType = 'image/png'): ImageBackend & { prompts: string[] } => {
    const prompts: string[] = [];
    return {
      prompts,
      async generate({ prompt }) {
        prompts.push(prompt);
        return { data, mediaType };
      },
    };
  };

  it('saves the image at the given path as an artifact of the scope', async () => {
    respond = (res) => json(res, 200, { data: [{ b64_json: png.toString('base64') }] });
    const tool = generateImageTool({ backend: openAIImages({ baseURL, model: 'gpt-image-1' }) });
    expect(tool.readOnly).toBe(false);
    const result = await invoke(
      tool,
      { prompt: 'a cover', path: 'figures/cover.png', size: '1024x1024' },
      toolContext(workspace, { scope: 'synthesis' }),
    );
    expect(result.isError).toBe(false);
    expect(result.text).toBe(`Saved the generated image to figures/cover.png (image/png, 16×8 px, ${png.length} B).`);
    expect(result.files).toEqual(['figures/cover.png']);
    expect((await readFile(path.join(workspace.root, 'figures/cover.png'))).equals(png)).toBe(true);
    expect(workspace.artifacts()).toMatchObject([
      { path: 'figures/cover.png', tool: 'generate_image', scope: 'synthesis' },
    ]);
    expect(seen[0]!.body.size).toBe('1024x1024');
  });

  it('names the file from the prompt under images/ without overwriting, and adds a missing extension', async () => {
    const backend = fake();
    const tool = generateImageTool({ backend });
    const first = await invoke(tool, { prompt: 'A Sunset over Lake Geneva!' }, toolContext(workspace));
    const second = await invoke(tool, { prompt: 'A Sunset over Lake Geneva!' }, toolContext(workspace));
    expect(first.files).toEqual(['images/a-sunset-over-lake-geneva.png']);
    expect(second.files).toEqual(['images/a-sunset-over-lake-geneva-2.png']);
    const named = await invoke(tool, { prompt: 'x', path: 'out/logo' }, toolContext(workspace));
    expect(named.files).toEqual(['out/logo.png']);
  });

  it('refuses a path outside the workspace and writes nothing', async () => {
    const result = await invoke(
      generateImageTool({ backend: fake() }),
      { prompt: 'x', path: '../x.png' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('".." segments are not allowed');
    expect(workspace.artifacts()).toEqual([]);
  });

  it('turns a backend failure into an error observation', async () => {
    respond = (res) => json(res, 400, { error: { message: 'Your prompt was rejected by the safety system' } });
    const tool = generateImageTool({ backend: openAIImages({ baseURL, model: 'gpt-image-1' }) });
    const result = await invoke(tool, { prompt: 'x' }, toolContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.text).toContain('HTTP 400');
    expect(result.text).toContain('safety system');
  });

  it('saves nothing when a backend returns bytes that are not an image', async () => {
    const result = await invoke(
      generateImageTool({ backend: fake(Buffer.from('oops')) }),
      { prompt: 'x' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('no known image format; nothing was saved');
    expect(workspace.artifacts()).toEqual([]);
  });

  it('rejects a missing backend or an empty directory at creation, naming the option', () => {
    expect(() => generateImageTool({} as never)).toThrowError(
      /generateImageTool: option "backend" must be an ImageBackend/,
    );
    expect(() => generateImageTool({ backend: fake(), directory: ' ' })).toThrowError(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('"directory"') }),
    );
  });

  it('validates the size argument', async () => {
    const result = await invoke(
      generateImageTool({ backend: fake() }),
      { prompt: 'x', size: 'huge' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('1024x1024');
  });
});
