/**
 * The run viewer on a big run (issue 24: "a 5 000-event log renders in a few seconds and scrolls smoothly"): a real
 * single-loop run of 1 250 tool rounds on a 24 000-token window (so memory compresses as it goes) logs about 5 000
 * events. Measured, medians of 5 after a warm-up:
 * - `renderRunHtml` on those events, against `JSON.parse` of the same log (the floor of reading it at all);
 * - with Debian's chromium installed: loading the page from file:// until `load`, against loading the same log as
 *   plain text in a <pre> (the least a browser can do with those bytes), and opening every <details> at once.
 *
 * Run it with `npm run bench` or `npx tsx bench/viewer.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult } from '../src/backend/types.js';
import { parseEventLog } from '../src/event-log/read.js';
import { createHarness } from '../src/harness/harness.js';
import { reply, submit, toolCall } from '../src/testing/replies.js';
import { ScriptedBackend } from '../src/testing/scripted-backend.js';
import { defineTool } from '../src/tools/define-tool.js';
import { renderRunHtml } from '../src/viewer/index.js';

const ITERATIONS = 1_250;
const WINDOW = 24_000;
const REPEATS = 5;
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** The model: writes step N+1 after reading "step N written", submits after the last; summaries on demand. */
function model(request: GenerateRequest): GenerateResult {
  if (request.purpose === 'summarize') return reply('Summary: the steps written so far are in notes/.');
  const done = Number(/step (\d+) written/.exec(JSON.stringify(request.messages.at(-1)))?.[1] ?? 0);
  if (done >= ITERATIONS) return submit('All steps written.', []);
  return toolCall('write_step', { path: `notes/step-${done + 1}.md`, content: `step ${done + 1} ${'x'.repeat(400)}` });
}

const writeStep = defineTool({
  name: 'write_step',
  description: 'Records one step.',
  input: z.object({ path: z.string(), content: z.string() }),
  execute: async ({ path: file, content }) => `step ${/step-(\d+)/.exec(file)?.[1]} written (${content.length} chars)`,
});

/** The log of one long run, as the event log holds it. */
async function longRunLog(workspace: string): Promise<string> {
  const lines: string[] = [];
  const harness = createHarness({
    backend: new ScriptedBackend(model, { contextWindow: WINDOW }),
    tools: [writeStep],
    workspace,
    decomposition: false,
    verification: false,
    limits: { maxIterations: ITERATIONS + 10 },
  });
  harness.onAny((event) => {
    lines.push(JSON.stringify(event));
  });
  const result = await harness.run('Write every step.');
  await harness.close();
  if (result.status !== 'succeeded') throw new Error(`the long run ended ${result.status}: ${result.error?.message}`);
  return `${lines.join('\n')}\n`;
}

async function median(work: () => unknown | Promise<unknown>): Promise<number> {
  await work();
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i += 1) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(REPEATS / 2)]!;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** Page load and expand-all times in chromium; undefined when it is not installed. */
async function browserFigures(dir: string, page: string, log: string) {
  if (spawnSync(CHROMIUM, ['--version']).status !== 0) return undefined;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const pageFile = path.join(dir, 'run.html');
    const textFile = path.join(dir, 'log.html');
    await writeFile(pageFile, page);
    await writeFile(textFile, `<!doctype html><meta charset="utf-8"><pre>${escapeText(log)}</pre>`);
    const tab = await browser.newPage({ viewport: { width: 1150, height: 900 } });
    const load = (file: string) => () => tab.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const pageMs = await median(load(pageFile));
    const textMs = await median(load(textFile));
    await tab.goto(pathToFileURL(pageFile).href);
    const elements = await tab.evaluate<number>('document.getElementsByTagName("*").length');
    const expandStart = performance.now();
    await tab.click('button[data-details="open"]');
    await tab.evaluate('new Promise((resolve) => requestAnimationFrame(() => resolve(undefined)))');
    const expandMs = performance.now() - expandStart;
    return { pageMs, textMs, elements, expandMs };
  } finally {
    await browser.close();
  }
}

/** Runs the viewer benchmark and prints its figures. */
export async function viewerBench(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'viewer-bench-'));
  try {
    const log = await longRunLog(path.join(dir, 'work'));
    const events = parseEventLog(log);
    const page = renderRunHtml(events, { contextWindow: WINDOW });
    const renderMs = await median(() => renderRunHtml(events, { contextWindow: WINDOW }));
    const parseMs = await median(() => parseEventLog(log));
    console.log(
      `\nRun viewer: a real run of ${ITERATIONS} tool rounds, ${events.length} events, log ${(log.length / 1e6).toFixed(2)} MB`,
    );
    console.log(
      `  page: ${(page.length / 1e6).toFixed(2)} MB (${Math.round(page.length / events.length)} bytes per event)`,
    );
    console.log(
      `  renderRunHtml: ${renderMs.toFixed(0)} ms; parsing the log: ${parseMs.toFixed(0)} ms; ratio ${(renderMs / parseMs).toFixed(1)}`,
    );
    const browser = await browserFigures(dir, page, log);
    if (!browser) {
      console.log(`  browser: skipped, ${CHROMIUM} is not installed (Debian package chromium)`);
      return;
    }
    console.log(
      `  chromium load: ${browser.pageMs.toFixed(0)} ms for the page (${browser.elements} elements, details closed) ` +
        `vs ${browser.textMs.toFixed(0)} ms for the raw log in a <pre>; ratio ${(browser.pageMs / browser.textMs).toFixed(2)}`,
    );
    console.log(`  expand all (every tool call laid out): ${browser.expandMs.toFixed(0)} ms`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await viewerBench();
