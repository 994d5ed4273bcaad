/**
 * What the docs quote from the code, checked against the code: the wrapping of tool output, span and event names,
 * and the CLI's closing lines as the replay prints them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { HARNESS_EVENT_TYPES } from '../../src/events.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { SUBMIT_ANSWER_TOOL, wrapToolOutput } from '../../src/prompts/executor.js';
import { builtinTools } from '../../src/tools/builtin/index.js';

const DOCS = path.resolve(import.meta.dirname, '../../docs');
const page = (name: string) => readFileSync(path.join(DOCS, name), 'utf8');
const allPages = [
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => ({ name, text: page(name) })),
  { name: 'README.md', text: readFileSync(path.resolve(DOCS, '../README.md'), 'utf8') },
];
/** The fenced blocks of a page (any language), in order. */
const blocks = (text: string) => [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((match) => match[1] as string);

describe('docs quote the code as it is', () => {
  it('tools.md shows tool output wrapped as the executor wraps it', () => {
    const id = /⟦data-([0-9a-f]{16})⟧/.exec(page('tools.md'))?.[1];
    expect(id).toBeDefined();
    const wrapped = wrapToolOutput(new DataMark(id!), 'write_to_file', 'Wrote 120 characters to notes.md', false);
    expect(blocks(page('tools.md'))).toContain(`${wrapped}\n`);
    expect(page('tools.md')).not.toContain('trust="untrusted"');
  });

  it('every `execute_tool <name>` span in the docs names a built-in tool', () => {
    const tools = new Set([...builtinTools().map((tool) => tool.name), SUBMIT_ANSWER_TOOL]);
    const named = allPages.flatMap(({ text }) => [...text.matchAll(/execute_tool ([a-z_]+)/g)].map((m) => m[1]));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !tools.has(name as string))).toEqual([]);
  });

  it("every event a docs example listens to with harness.on('…') exists", () => {
    const known = new Set<string>(HARNESS_EVENT_TYPES);
    const listened = allPages.flatMap(({ name, text }) =>
      [...text.matchAll(/harness\.(?:on|once)\('([a-z-]+)'/g)].map((m) => ({ name, event: m[1] as string })),
    );
    expect(listened.length).toBeGreaterThan(3);
    expect(listened.filter(({ event }) => !known.has(event))).toEqual([]);
  });

  it("cli.md's closing lines are those `horizon-harness replay` prints (but for the paths and the time)", async () => {
    const sample = blocks(page('cli.md')).find((block) => block.startsWith('■ succeeded'));
    expect(sample).toBeDefined();
    const dir = await mkdtemp(path.join(tmpdir(), 'harness-docs-replay-'));
    try {
      let stdout = '';
      const code = await main(['replay', '--workspace', path.join(dir, 'ws')], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => true },
        env: {},
      });
      expect(code).toBe(0);
      const normalise = (text: string) =>
        text
          .replace(/\/tmp\/horizon-harness-\w+/g, 'WORKSPACE')
          .replaceAll(path.join(dir, 'ws'), 'WORKSPACE')
          .replace(/, [\d.]+ s$/m, ', T s');
      const printed = normalise(stdout.slice(stdout.lastIndexOf('■ succeeded')));
      expect(printed).toBe(normalise(sample!));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
