import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import type { HarnessEvent } from '../../src/events.js';
import { escapeHtml, html, jsonForScript } from '../../src/viewer/html.js';
import { renderRunHtml } from '../../src/viewer/index.js';
import { demoRun, hostileRun, type LoggedRun, managedRun, resumedRun, XSS } from './support/runs.js';

let demo: LoggedRun;
let hostile: LoggedRun;
let managed: LoggedRun;

beforeAll(async () => {
  [demo, hostile, managed] = await Promise.all([demoRun(), hostileRun(), managedRun()]);
}, 60_000);

function documentOf(page: string) {
  return parseHTML(page).document;
}

describe('escaping', () => {
  it('escapes every interpolated value, including inside lists, and keeps fragments built by html', () => {
    const fragment = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"x\''}">${['<a>', fragment, 3, null, false]}</p>`.value).toBe(
      '<p title="&quot;x&#39;">&lt;a&gt;<b>&lt;i&gt;</b>3</p>',
    );
    expect(escapeHtml('a & b')).toBe('a &amp; b');
  });

  it('writes JSON that no </script>, <!-- or line separator can break out of, and that parses back unchanged', () => {
    const value = { text: '</script><script>alert(1)</script><!-- & \u2028 \u2029 >' };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('renderRunHtml', () => {
  it('writes one self-contained page: a strict CSP whose hashes match its only style and script, nothing external', () => {
    const page = renderRunHtml(demo.events);
    const document = documentOf(page);
    const csp = document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '';
    expect(csp).toContain("default-src 'none'");
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const styles = [...document.querySelectorAll('style')];
    const scripts = [...document.querySelectorAll('script:not([type="application/json"])')];
    expect(styles).toHaveLength(1);
    expect(scripts).toHaveLength(1);
    expect(csp).toContain(`style-src ${hash(styles[0]!.textContent ?? '')}`);
    expect(csp).toContain(`script-src ${hash(scripts[0]!.textContent ?? '')}`);
    expect(document.querySelectorAll('[src], link, [style]')).toHaveLength(0);
    expect(page).not.toMatch(/https?:\/\//);
    // Details stay collapsed until opened.
    expect(document.querySelectorAll('details[open]')).toHaveLength(0);
    expect(document.querySelectorAll('details.loop').length).toBeGreaterThan(0);
  });

  it('carries the run report as JSON for scripts', () => {
    const document = documentOf(renderRunHtml(demo.events));
    const data = JSON.parse(document.getElementById('run-data')?.textContent ?? '');
    expect(data).toEqual({ runId: demo.result.runId, status: 'succeeded', report: demo.result.report });
  });

  it('reads a workspace directory or an events.jsonl file, and says what is wrong with a missing or empty log', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'viewer-'));
    await mkdir(path.join(workspace, '.harness'));
    const file = path.join(workspace, '.harness', 'events.jsonl');
    await writeFile(file, demo.log);
    const fromEvents = renderRunHtml(demo.events);
    expect(await renderRunHtml(workspace)).toBe(fromEvents);
    expect(await renderRunHtml(file)).toBe(fromEvents);
    await expect(renderRunHtml(path.join(workspace, 'nothing'))).rejects.toMatchObject({ code: 'invalid-input' });
    await writeFile(file, '\n');
    await expect(renderRunHtml(workspace)).rejects.toThrow(/holds no event/);
  });

  it('shows the run a log holds when asked by runId, and refuses an id it does not hold', () => {
    const both = [...hostile.events, ...demo.events];
    const shown = documentOf(renderRunHtml(both, { runId: hostile.result.runId }));
    expect(shown.querySelector('h1 code')?.textContent).toBe(hostile.result.runId);
    expect(shown.querySelector('header .note')?.textContent).toContain(demo.result.runId);
    expect(() => renderRunHtml(both, { runId: 'nope' })).toThrow(/No event of run "nope"/);
  });

  it('keeps the tool calls of loops running side by side apart, also when their models reuse a tool call id', () => {
    const at = (timestamp: number) => ({ runId: 'r', timestamp });
    const call = (scope: string, type: 'tool-call' | 'tool-result', t: number): HarnessEvent => {
      const base = { ...at(t), purpose: 'execute' as const, scope, callId: 'call_0', toolName: 'write_file' };
      return type === 'tool-call'
        ? { ...base, type, arguments: `{"for":"${scope}"}` }
        : { ...base, type, isError: false, durationMs: 1, outputChars: 5, files: [`${scope}.md`] };
    };
    const events: HarnessEvent[] = [
      call('subtask-1', 'tool-call', 1),
      call('subtask-2', 'tool-call', 2),
      call('subtask-1', 'tool-result', 3),
      call('subtask-2', 'tool-result', 4),
    ];
    const document = documentOf(renderRunHtml(events));
    for (const scope of ['subtask-1', 'subtask-2']) {
      const row = document.querySelector(`details[data-lane="${scope}"] tr[data-tool]`);
      expect(row?.textContent).toContain(`{"for":"${scope}"}`);
      expect(row?.textContent).toContain(`${scope}.md`);
    }
  });

  it('a log that ends inside a resumed run shows it unfinished, not as the stopped run before it ended', async () => {
    const resumed = await resumedRun();
    const resume = resumed.events.findIndex((event) => event.type === 'run-resume');
    expect(resumed.events.slice(0, resume).some((e) => e.type === 'run-finish' && e.result.status === 'aborted')).toBe(
      true,
    );
    const cut = documentOf(renderRunHtml(resumed.events.slice(0, resume + 3)));
    expect(cut.getElementById('run-status')?.textContent).toBe('unfinished');
    const whole = documentOf(renderRunHtml(resumed.events));
    expect(whole.getElementById('run-status')?.textContent).toBe('succeeded');
  });

  it('shows cost and cache hits by purpose where the events carry them, and says so where they do not', () => {
    const at = (timestamp: number) => ({ runId: 'r', timestamp });
    const events: HarnessEvent[] = [];
    for (const [i, purpose, cost, cached] of [
      [1, 'execute', 0.25, 300],
      [2, 'execute', 0.5, 100],
      [3, 'verify', undefined, undefined],
    ] as const) {
      events.push(
        {
          ...at(i),
          type: 'llm-request',
          purpose,
          callId: `c${i}`,
          provider: 'p',
          modelId: 'm',
          messages: 1,
          requestTokens: 900,
        },
        {
          ...at(i),
          type: 'llm-response',
          purpose,
          callId: `c${i}`,
          finishReason: 'stop',
          usage: {
            inputTokens: 1000,
            outputTokens: 10,
            ...(cached === undefined ? {} : { cachedInputTokens: cached }),
          },
          toolCalls: 0,
          durationMs: 1,
          ...(cost === undefined ? {} : { cost, currency: 'USD' }),
        },
      );
    }
    const document = documentOf(renderRunHtml(events));
    const cells = (purpose: string) =>
      [...(document.querySelector(`#cost tr[data-purpose="${purpose}"]`)?.querySelectorAll('td') ?? [])].map(
        (td) => td.textContent,
      );
    expect(cells('execute')).toEqual(['execute', '2', '2\u202f000', '400', '20', '0.75 USD']);
    expect(cells('verify')).toEqual(['verify', '1', '1\u202f000', 'not reported', '10', 'not priced']);
  });

  it('shows a managed round whose workspace changed during the audit as an integrity violation', () => {
    const events: HarnessEvent[] = [...managed.events];
    const audit = events.findIndex((event) => event.type === 'audit-finish');
    events.splice(audit + 1, 0, {
      runId: managed.result.runId,
      timestamp: events[audit]!.timestamp,
      type: 'integrity-violation',
      round: 1,
      changedPaths: ['report.md'],
      records: ['report'],
    });
    const round = documentOf(renderRunHtml(events)).querySelector('details.round[data-round="1"]');
    expect(round?.querySelector('summary')?.textContent).toContain('integrity violation');
    expect(round?.textContent).toContain('Integrity violation: changed report.md; records made untrusted: report');
  });

  it('keeps hostile text as text: no element or attribute comes from the run', () => {
    const page = renderRunHtml(hostile.events);
    const document = documentOf(page);
    expect(document.querySelectorAll('img, iframe, svg[onload], [onerror], [onload], [srcdoc]')).toHaveLength(0);
    expect(document.querySelectorAll('script')).toHaveLength(2);
    expect(document.body.textContent).toContain(XSS[0]);
    expect(page).not.toContain(XSS[0]);
  });
});

describe('horizon-harness show', () => {
  async function cli(argv: string[], env: Record<string, string> = {}) {
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env,
    };
    return { code: await main(argv, io), stdout: () => stdout, stderr: () => stderr };
  }

  it('writes run.html into the workspace, or to --out; --open without an opener says where the page is', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'viewer-cli-'));
    await mkdir(path.join(workspace, '.harness'));
    await writeFile(path.join(workspace, '.harness', 'events.jsonl'), demo.log);
    const first = await cli(['show', workspace]);
    expect(first.code).toBe(0);
    expect(first.stdout()).toBe(`Wrote ${path.join(workspace, 'run.html')}\n`);
    expect(await readFile(path.join(workspace, 'run.html'), 'utf8')).toBe(renderRunHtml(demo.events));

    const out = path.join(workspace, 'page.html');
    const second = await cli(['show', path.join(workspace, '.harness', 'events.jsonl'), '--out', out, '--open'], {
      PATH: path.join(workspace, 'no-such-dir'),
    });
    expect(second.code).toBe(0);
    expect(second.stdout()).toContain(`No program to open it with here: open ${out} in a browser.`);
    expect(await readFile(out, 'utf8')).toContain('<!doctype html>');
  });

  it('exits 2 and says why when there is no log, or the window is not a number of tokens', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'viewer-cli-'));
    const run = await cli(['show', workspace]);
    expect(run.code).toBe(2);
    expect(run.stderr()).toMatch(/Cannot read the event log .*events\.jsonl.*does not exist/);
    await mkdir(path.join(workspace, '.harness'));
    await writeFile(path.join(workspace, '.harness', 'events.jsonl'), demo.log);
    const window = await cli(['show', workspace, '--context-window', '128k']);
    expect(window.code).toBe(2);
    expect(window.stderr()).toContain('contextWindow (--context-window) takes a whole number of tokens ≥ 1; got NaN.');
    expect(() => renderRunHtml(demo.events, { compressAt: 1.5 })).toThrow(/compressAt takes a share/);
  });
});
