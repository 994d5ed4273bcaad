/**
 * The app's run context: `run({ task, context })` hands the very object to every tool call as `ToolContext.context`,
 * and it never reaches a request, an event or a file the harness writes; `resume(runId, { context })` hands it again.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createHarness, defineTool, type HarnessEvent, type ToolContext } from '../../src/index.js';
import { ScriptedBackend, submit, toolCall } from '../../src/testing/index.js';
import { tempDir } from './helpers.js';

const SECRET = 'sk-live-CONTEXT-SECRET-4242';

class Database {
  readonly queries: string[] = [];
  query(sql: string): string {
    this.queries.push(sql);
    return `rows for ${sql}`;
  }
}

interface AppContext {
  userId: string;
  apiKey: string;
  db: Database;
  log: (line: string) => void;
}

function appContext(userId: string, lines: string[]): AppContext {
  return { userId, apiKey: SECRET, db: new Database(), log: (line) => lines.push(line) };
}

/** A tool that reads the app context, typed through ToolContext<AppContext>. */
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks the user up.',
  input: z.object({ table: z.string() }),
  execute: ({ table }, ctx: ToolContext<AppContext>) => {
    ctx.context.log(`lookup ${table} for ${ctx.context.userId}`);
    return ctx.context.db.query(`select * from ${table} where user = ?`);
  },
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('run({ task, context })', () => {
  it('hands the same object to every tool call and never serialises it', async () => {
    const workspace = await tempDir();
    const backend = new ScriptedBackend({
      execute: [toolCall('lookup', { table: 'orders' }), toolCall('lookup', { table: 'invoices' }), submit('done')],
    });
    const harness = createHarness<AppContext>({
      backend,
      tools: [lookup],
      workspace,
      decomposition: false,
      verification: false,
    });
    const events: HarnessEvent[] = [];
    harness.onAny((event) => events.push(event));
    const lines: string[] = [];
    const context = appContext('user-7', lines);
    const result = await harness.run({ task: 'Summarise my orders.', context });

    expect(result.status).toBe('succeeded');
    expect(lines).toEqual(['lookup orders for user-7', 'lookup invoices for user-7']);
    expect(context.db.queries).toHaveLength(2);
    expect(JSON.stringify(backend.calls)).not.toContain(SECRET);
    expect(JSON.stringify(backend.calls)).not.toContain('user-7');
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    const written = await filesUnder(path.join(workspace, '.harness'));
    expect(written.length).toBeGreaterThan(0);
    for (const file of written) expect(await readFile(file, 'utf8')).not.toContain(SECRET);
  });

  it('is undefined for a run given none', async () => {
    let seen: unknown = 'not called';
    const probe = defineTool({
      name: 'probe',
      description: 'Reads the context.',
      input: z.object({}),
      execute: (_input, ctx) => {
        seen = ctx.context;
        return 'ok';
      },
    });
    const backend = new ScriptedBackend({ execute: [toolCall('probe'), submit('done')] });
    const harness = createHarness({
      backend,
      tools: [probe],
      workspace: await tempDir(),
      decomposition: false,
      verification: false,
    });
    await harness.run('Probe.');
    expect(seen).toBeUndefined();
  });

  it('is handed again by resume(runId, { context }) (a snapshot never holds it)', async () => {
    const workspace = await tempDir();
    const seen: string[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Records who asked.',
      input: z.object({}),
      execute: (_input, ctx: ToolContext<{ userId: string }>) => {
        seen.push(ctx.context?.userId ?? 'none');
        return 'ok';
      },
    });
    const options = { tools: [probe], workspace, decomposition: false, verification: false };
    const first = new ScriptedBackend({ execute: [toolCall('probe')] });
    const harness = createHarness<{ userId: string }>({ ...options, backend: first });
    const controller = new AbortController();
    harness.on('tool-result', () => controller.abort());
    const stopped = await harness.run({
      task: 'Probe twice.',
      runId: 'ctx-run',
      signal: controller.signal,
      context: { userId: 'first' },
    });
    await harness.close();
    expect(stopped.status).toBe('aborted');

    const second = new ScriptedBackend({ execute: [toolCall('probe'), submit('done')] });
    const again = createHarness<{ userId: string }>({ ...options, backend: second });
    const resumed = await again.resume('ctx-run', { workspace, context: { userId: 'second' } });
    expect(resumed.status).toBe('succeeded');
    expect(seen).toEqual(['first', 'second']);
  });

  it('types context from createHarness<Context> to run() and the tools', () => {
    const harness = createHarness<AppContext>({ backend: new ScriptedBackend([]) });
    expectTypeOf(harness.run).parameter(0).extract<{ task: string }>().toHaveProperty('context');
    expectTypeOf<Parameters<typeof harness.run>[0]>().extract<object>().toMatchTypeOf<{ context?: AppContext }>();
    // @ts-expect-error: a context of another type is refused
    void (() => harness.run({ task: 't', context: { userId: 1 } }));
    expectTypeOf(lookup.execute).parameter(1).toEqualTypeOf<ToolContext<AppContext>>();
  });
});
