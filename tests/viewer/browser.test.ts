/**
 * The run page in a real headless browser (Debian's chromium through playwright-core): each page loads from file://
 * with no console error (a CSP violation is one) and no request beyond its own file, its sections hold the numbers of
 * the run's report, hostile text runs nothing, and a screenshot of each lands in test-results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagedRunReport } from '../../src/modes/managed/report.js';
import { renderRunHtml } from '../../src/viewer/index.js';
import { launchChromium, probeChromium } from './support/chromium.js';
import { demoRun, hostileRun, type LoggedRun, managedRun, resumedRun } from './support/runs.js';
import { syntheticLongLog } from './support/synthetic-log.js';

const probe = probeChromium();
const SHOTS = path.resolve(import.meta.dirname, '../../test-results');

describe('chromium in CI', () => {
  it.runIf(process.env.CI === 'true')('is installed, so the viewer browser tests really run', () => {
    expect(probe.available, probe.reason).toBe(true);
  });
});

/** A loaded page and everything it did while loading and being used. */
interface Loaded {
  page: Page;
  requests: string[];
  errors: string[];
  dialogs: string[];
}

describe.skipIf(!probe.available)(`the run page in chromium (${probe.reason})`, () => {
  let browser: Browser;
  let dir: string;
  const runs: Record<string, LoggedRun> = {};

  beforeAll(async () => {
    [browser, runs.demo, runs.managed, runs.hostile, runs.resumed] = await Promise.all([
      launchChromium(),
      demoRun(),
      managedRun(),
      hostileRun(),
      resumedRun(),
    ]);
    dir = await mkdtemp(path.join(tmpdir(), 'viewer-pages-'));
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** Writes the page of `events` to a file and opens it from file:// with every other request aborted and recorded. */
  async function load(name: string, page: string): Promise<Loaded> {
    const file = path.join(dir, `${name}.html`);
    await writeFile(file, page);
    const url = pathToFileURL(file).href;
    const context = await browser.newContext({ viewport: { width: 1150, height: 900 } });
    const loaded: Loaded = { page: await context.newPage(), requests: [], errors: [], dialogs: [] };
    await context.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
    loaded.page.on('request', (request) => {
      if (request.url() !== url) loaded.requests.push(request.url());
    });
    loaded.page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') loaded.errors.push(message.text());
    });
    loaded.page.on('pageerror', (error) => loaded.errors.push(error.message));
    loaded.page.on('dialog', (dialog) => {
      loaded.dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await loaded.page.goto(url, { waitUntil: 'load' });
    return loaded;
  }

  /** Opens every <details> with the page's own button (its script runs under the CSP), then screenshots it. */
  async function expandAndShoot(loaded: Loaded, name: string): Promise<void> {
    await loaded.page.click('button[data-details="open"]');
    expect(await loaded.page.locator('details:not([open])').count()).toBe(0);
    await loaded.page.click('button[data-details="close"]');
    await loaded.page.screenshot({ path: path.join(SHOTS, `viewer-${name}.png`), fullPage: true });
  }

  async function fact(page: Page, name: string): Promise<number> {
    return Number((await page.locator(`[data-fact="${name}"]`).textContent())?.replace(/\D/g, ''));
  }

  async function attr(page: Page, selector: string, name: string): Promise<string[]> {
    return page.locator(selector).evaluateAll((els, n) => els.map((el) => el.getAttribute(n) ?? ''), name);
  }

  /** What every page must be: loaded with nothing else fetched, nothing logged, nothing run. */
  function expectClean(loaded: Loaded): void {
    expect(loaded.requests).toEqual([]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.dialogs).toEqual([]);
  }

  it.each(['demo', 'hostile', 'resumed'])(
    'the %s run: header, timeline, chart and verdicts hold the report figures',
    async (name) => {
      const run = runs[name]!;
      const { report, verdicts } = run.result;
      const loaded = await load(name, renderRunHtml(run.events));
      const page = loaded.page;
      expect(await page.locator('#run-status').textContent()).toBe(run.result.status);
      expect(await fact(page, 'Model calls')).toBe(report.modelCalls);
      expect(await fact(page, 'Tokens in')).toBe(report.inputTokens);
      expect(await fact(page, 'Tokens out')).toBe(report.outputTokens);
      expect(await fact(page, 'Repairs')).toBe(report.repairs);
      expect(await fact(page, 'Resumes')).toBe(report.resumes.count);
      // Timeline: one lane per subtask, verification and repair, each subtask as the result has it.
      expect(await attr(page, '.lane[data-kind="subtask"]', 'data-status')).toEqual(
        run.result.subtasks.map((s) => s.status),
      );
      expect(await page.locator('.lane[data-kind="verify"]').count()).toBe(verdicts.length);
      expect(await page.locator('.lane[data-kind="repair"]').count()).toBe(report.repairs);
      // Chart: every answered call is a dot, per purpose as the report counts them, and the peak is the report's.
      for (const [purpose, usage] of Object.entries(report.byPurpose)) {
        expect(await page.locator(`.call[data-purpose="${purpose}"][data-answered="true"]`).count(), purpose).toBe(
          usage.calls,
        );
      }
      expect(await fact(page, 'Model calls')).toBe(await page.locator('.call[data-answered="true"]').count());
      expect(Number((await page.locator('#peak-tokens').textContent())?.replace(/\D/g, ''))).toBe(
        report.peakRequestTokens,
      );
      expect(await page.locator('.mark[data-kind="compress"]').count()).toBe(report.compressions);
      // Verdicts: one per verification, with its status and defects.
      expect(await attr(page, '.verdict', 'data-status')).toEqual(verdicts.map((v) => v.status));
      expect((await attr(page, '.verdict', 'data-defects')).map(Number)).toEqual(verdicts.map((v) => v.defects.length));
      expect(await page.locator('.defect .outcome').first().textContent()).toContain('addressed by repair 1');
      await expandAndShoot(loaded, name);
      expectClean(loaded);
    },
  );

  it('the managed run: rounds with decision and audit, the final task state, the per-role calls', async () => {
    const run = runs.managed!;
    const report = run.result.report as ManagedRunReport;
    const loaded = await load('managed', renderRunHtml(run.events));
    const page = loaded.page;
    expect(await page.locator('#run-status').textContent()).toBe('succeeded');
    expect(await page.locator('details.round').count()).toBe(report.managed.rounds);
    expect(await page.locator('.lane[data-kind="manage"]').count()).toBe(report.managed.rounds);
    expect(await page.locator('.lane[data-kind="audit"]').count()).toBe(report.managed.audits.total);
    expect(await attr(page, 'details.round', 'data-next')).toEqual(['execute', 'done']);
    expect(await attr(page, 'details.round[data-round="1"]', 'data-integrity')).toEqual(['clean']);
    const finalState = page.locator('details.round').last().locator('tr[data-record]');
    expect(await attr(page, 'details.round:last-of-type tr[data-record]', 'data-status')).toEqual(
      run.result.taskState!.records.map((r) => r.status),
    );
    expect(await finalState.count()).toBe(run.result.taskState!.records.length);
    for (const purpose of ['manage', 'execute', 'audit'] as const) {
      expect(await page.locator(`.call[data-purpose="${purpose}"][data-answered="true"]`).count(), purpose).toBe(
        report.byPurpose[purpose]?.calls,
      );
    }
    await expandAndShoot(loaded, 'managed');
    expectClean(loaded);
  });

  it('the resumed run marks its resume on the timeline', async () => {
    const loaded = await load('resumed-mark', renderRunHtml(runs.resumed!.events));
    expect(await loaded.page.locator('.timeline .resume').count()).toBe(1);
    expectClean(loaded);
  });

  it('hostile text in the task, titles, tool names and arguments, file names, answers and defects runs nothing', async () => {
    const loaded = await load('hostile-probe', renderRunHtml(runs.hostile!.events));
    await loaded.page.click('button[data-details="open"]');
    expect(await loaded.page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await loaded.page.locator('img, iframe, [onerror], [onload]').count()).toBe(0);
    expect(await loaded.page.locator('script').count()).toBe(2);
    // The text is there, as text.
    expect(await loaded.page.locator('.task').textContent()).toContain('<script>window.__pwned = "script"</script>');
    expect(await loaded.page.locator('.defect').first().textContent()).toContain('<script>');
    const data = JSON.parse((await loaded.page.locator('#run-data').textContent()) ?? '');
    expect(data.report).toEqual(runs.hostile!.result.report);
    expectClean(loaded);
  });

  it('a 5 000-event log loads collapsed, with its tool calls inside closed details, and opens on demand', async () => {
    const events = syntheticLongLog(1_250, 40);
    expect(events.length).toBeGreaterThanOrEqual(5_000);
    const loaded = await load('long', renderRunHtml(events, { contextWindow: 32_000 }));
    const page = loaded.page;
    expect(await page.locator('details[open]').count()).toBe(0);
    expect(await page.locator('.call').count()).toBe(1_250);
    expect(await page.locator('.mark[data-kind="compress"]').count()).toBe(31);
    expect(await page.locator('details.loop[data-lane="subtask-1"]').getAttribute('data-tool-calls')).toBe('1250');
    // Closed details are not laid out: the tool table has no box until opened.
    expect(await page.locator('table.tools').first().isVisible()).toBe(false);
    await page.click('details.loop[data-lane="subtask-1"] > summary');
    expect(await page.locator('table.tools').first().isVisible()).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'viewer-long.png') });
    expectClean(loaded);
  });
});
