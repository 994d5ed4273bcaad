/**
 * The context chart draws what the run had: each call's window from its `llm-request`, the memory's thresholds from
 * `run-start`, and agings from the `cache-break` events they cause; `contextWindow` still overrides the window.
 */
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readEventLog } from '../../src/event-log/read.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, submit, toolCall, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { renderRunHtml } from '../../src/viewer/index.js';
import { tempDir } from '../harness/helpers.js';

const page = defineTool({
  name: 'page',
  description: 'Returns a page.',
  input: z.object({ n: z.number() }),
  readOnly: true,
  execute: ({ n }) => `page ${n} ${'text '.repeat(200)}`,
});

/** A run whose verifier has a smaller window than the other roles, with observation aging on. */
async function run() {
  const dir = await tempDir();
  const backend = new ScriptedBackend(
    {
      plan: [planOf('Read the pages')],
      execute: [...[1, 2, 3, 4, 5, 6].map((n) => toolCall('page', { n })), submit('read', [])],
    },
    { contextWindow: 64_000 },
  );
  const verifier = new ScriptedBackend({ verify: [verdict(true)] }, { contextWindow: 16_000 });
  const harness = createHarness({
    backend,
    roles: { verify: verifier },
    tools: [page],
    workspace: dir,
    memory: { compressAt: 0.7, emergencyAt: 0.8, observationAging: { keepRecentRounds: 1, batchRounds: 1 } },
  });
  await harness.run('Read the pages');
  await harness.close();
  return { dir, events: await readEventLog(path.join(dir, '.harness', 'events.jsonl')) };
}

const documentOf = async (dir: string, options = {}) => parseHTML(await renderRunHtml(dir, options)).document;
type Page = Awaited<ReturnType<typeof documentOf>>;
const windowsOf = (document: Page, purpose: string) =>
  [...document.querySelectorAll(`circle.call[data-purpose="${purpose}"]`)].map((c) => c.getAttribute('data-window'));

describe('the context chart', () => {
  it("draws each call against its own role's window and the run's thresholds, as the log records them", async () => {
    const { dir, events } = await run();
    expect(events.find((e) => e.type === 'run-start')).toMatchObject({ memory: { compressAt: 0.7, emergencyAt: 0.8 } });
    const requests = events.filter((e) => e.type === 'llm-request');
    expect(requests.filter((e) => e.purpose === 'verify').map((e) => e.contextWindow)).toEqual([16_000]);
    expect(requests.filter((e) => e.purpose === 'execute').every((e) => e.contextWindow === 64_000)).toBe(true);

    const document = await documentOf(dir);
    expect(new Set(windowsOf(document, 'execute'))).toEqual(new Set(['64000']));
    expect(windowsOf(document, 'verify')).toEqual(['16000']);
    const summary = document.querySelector('#context p')?.textContent ?? '';
    expect(summary).toContain('compression at 70 %, emergency at 80 % of the window;');
    expect(summary).not.toContain('assumed');
    // The thresholds step down where the verifier's smaller window starts.
    const compressLevels = new Set(
      (document.querySelector('polyline.compress')?.getAttribute('points') ?? '')
        .split(' ')
        .map((point: string) => point.split(',')[1]),
    );
    expect(compressLevels.size).toBe(2);
  });

  it('marks every aging the log records, and draws the window given instead of the recorded ones', async () => {
    const { dir, events } = await run();
    const agings = events.filter((e) => e.type === 'cache-break' && e.cause === 'aging');
    expect(agings.length).toBeGreaterThan(0);
    const document = await documentOf(dir);
    expect(document.querySelectorAll('.mark[data-kind="aging"]')).toHaveLength(agings.length);
    expect(document.getElementById('aging-count')?.textContent).toBe(String(agings.length));

    const overridden = await documentOf(dir, { contextWindow: 200_000 });
    expect(new Set([...windowsOf(overridden, 'execute'), ...windowsOf(overridden, 'verify')])).toEqual(
      new Set(['200000']),
    );
  });

  it('says the window and thresholds are assumed for a log that does not record them', async () => {
    const { events } = await run();
    const old = events.map((event) => {
      if (event.type === 'llm-request') return { ...event, contextWindow: undefined };
      if (event.type === 'run-start') return { ...event, memory: undefined };
      return event;
    });
    const document = parseHTML(renderRunHtml(old)).document;
    const summary = document.querySelector('#context p')?.textContent ?? '';
    expect(summary).toContain('window 128\u202f000 tokens (assumed');
    expect(summary).toContain('(assumed: the log does not record them)');
  });
});
