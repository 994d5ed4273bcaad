/**
 * `tool-result` carries what the model was shown of the output (the observation once the memory bounded it), cut at
 * 2 000 characters with "… N more chars", redacted, and the page shows it as text in a collapsed block.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readEventLog } from '../../src/event-log/read.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { renderRunHtml } from '../../src/viewer/index.js';
import { tempDir } from '../harness/helpers.js';

const SECRET = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
const HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
const LONG = `START ${SECRET} ${HOSTILE} ${'lorem ipsum '.repeat(5_000)} END`;

const dump = defineTool({
  name: 'dump',
  description: 'Returns a text.',
  input: z.object({ long: z.boolean() }),
  execute: ({ long }) => (long ? LONG : `short ${HOSTILE}`),
});

async function run() {
  const dir = await tempDir();
  const backend = new ScriptedBackend({
    plan: [planOf('Read the dumps')],
    execute: [toolCall('dump', { long: true }), toolCall('dump', { long: false }), submit('read', [])],
  });
  const harness = createHarness({ backend, tools: [dump], workspace: dir, verification: false });
  await harness.run('Read the dumps');
  await harness.close();
  return { dir, backend, events: await readEventLog(path.join(dir, '.harness', 'events.jsonl')) };
}

describe('tool-result output', () => {
  it('is the bounded observation the model saw, cut at 2 000 chars with the rest counted, redacted', async () => {
    const { dir, backend, events } = await run();
    const results = events.filter((event) => event.type === 'tool-result' && event.toolName === 'dump');
    const [long, short] = results.map((event) => (event.type === 'tool-result' ? event : undefined));
    expect(long?.outputChars).toBe(LONG.length);
    const [, shown = '', more = ''] = /^([\s\S]*)… (\d+) more chars$/.exec(long?.output ?? '') ?? [];
    // 2 000 chars cut, then redacted (the secret's placeholder is shorter than the secret).
    expect(shown.replace('[REDACTED]', SECRET)).toHaveLength(2_000);
    // What the model was sent for that call: the memory's bounded observation, not the raw 60 000 chars.
    const sent = backend.calls[2]?.messages.find((m) => m.role === 'tool' && m.toolCallId === long?.callId);
    const observation = String(sent?.content);
    expect(observation.length).toBeLessThan(LONG.length);
    expect(observation).toContain(shown.replace('[REDACTED]', SECRET));
    expect(Number(more)).toBeGreaterThan(0);
    // The log holds no secret; untrusted text stays data.
    expect(await readFile(path.join(dir, '.harness', 'events.jsonl'), 'utf8')).not.toContain(SECRET);
    expect(long?.output).toContain('[REDACTED]');
    expect(short?.output).toBe(`short ${HOSTILE}`);
    // A memory-truncate for the long output comes before its tool-result.
    const truncate = events.findIndex((e) => e.type === 'memory-truncate' && e.callId === long?.callId);
    expect(truncate).toBeGreaterThan(-1);
    expect(truncate).toBeLessThan(events.indexOf(long!));
  });

  it('is shown on the page as escaped text, collapsed', async () => {
    const { dir } = await run();
    const document = parseHTML(await renderRunHtml(dir)).document;
    const outputs = [...document.querySelectorAll('tr[data-tool="dump"] details.output')];
    expect(outputs).toHaveLength(2);
    expect(outputs.some((d) => d.hasAttribute('open'))).toBe(false);
    expect(outputs[1]?.querySelector('pre')?.textContent).toBe(`short ${HOSTILE}`);
    expect(document.querySelectorAll('tr[data-tool="dump"] script, tr[data-tool="dump"] img')).toHaveLength(0);
  });
});
