import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, Message } from '../../src/backend/types.js';
import type { HarnessEvent } from '../../src/events.js';
import type { Harness } from '../../src/harness/harness.js';
import { defineTool } from '../../src/tools/define-tool.js';

const dirs: string[] = [];

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'harness-test-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  // A timed-out or aborted run may return while a save it gave up on still lands in `.harness/` (docs/durability.md,
  // "A store that does not answer"): a removal that meets it (ENOTEMPTY) is retried rather than failing the test.
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true, maxRetries: 10 });
});

/** Writes a file into the run's workspace; its observation carries a marker that must never leak into later subtasks. */
export const writeFile = defineTool({
  name: 'write_file',
  description: 'Writes a text file in the workspace.',
  input: z.object({ path: z.string(), content: z.string() }),
  execute: async ({ path: file, content }, ctx) => {
    await ctx.workspace.writeFile(file, content, { tool: 'write_file', scope: ctx.scope });
    return { text: `TOOL-TRACE: wrote ${content.length} characters to ${file}`, files: [file] };
  },
});

/** A tool that never finishes until its signal aborts. */
export const hang = defineTool({
  name: 'hang',
  description: 'Waits until aborted.',
  input: z.object({}),
  timeoutMs: 600_000,
  execute: (_input, ctx) =>
    new Promise<string>((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
    }),
});

/** All text of a request's messages. */
export function textOf(request: GenerateRequest | undefined): string {
  return (request?.messages ?? []).map(messageText).join('\n');
}

function messageText(message: Message): string {
  const content = message.content;
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** Every event the harness emits from now on, in order. */
export function collect(harness: Harness): HarnessEvent[] {
  const events: HarnessEvent[] = [];
  harness.onAny((event) => events.push(event));
  return events;
}
