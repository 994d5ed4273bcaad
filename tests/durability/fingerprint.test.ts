import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fingerprintDifferences } from '../../src/durability/fingerprint.js';
import { LIBRARY_VERSION } from '../../src/durability/version.js';
import { optionsFingerprint } from '../../src/harness/options-fingerprint.js';
import { parseHarnessOptions, type HarnessOptions } from '../../src/modes/shared/options.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const backend = new ScriptedBackend([], { provider: 'acme', modelId: 'm-1' });
const note = (readOnly: boolean) =>
  defineTool({ name: 'note', description: 'Notes.', input: z.object({}), readOnly, execute: () => 'ok' });

function fingerprintOf(options: HarnessOptions) {
  const o = parseHarnessOptions(options);
  return optionsFingerprint(o, new ToolRegistry(Array.isArray(o.tools) ? o.tools : []));
}

describe('options fingerprint', () => {
  it('is the same for the same options, whatever functions, signals or store come with them', () => {
    const a = fingerprintOf({ backend, tools: [note(true)], now: () => 1 });
    const b = fingerprintOf({ backend, tools: [note(true)], store: false, onListenerError: () => undefined });
    expect(b.hash).toBe(a.hash);
  });

  it.each([
    ['a limit', { limits: { maxSubtasks: 2 } }, 'limits.maxSubtasks: snapshot 6, now 2'],
    ['a tool turning read-only', { tools: [note(true)] }, 'tools: snapshot note, now note (read-only)'],
    [
      'a role backend',
      { roles: { verify: new ScriptedBackend([], { provider: 'acme', modelId: 'm-2' }) } },
      'backend.verify: snapshot acme/m-1, now acme/m-2',
    ],
    ['a prompt override', { prompts: { plan: 'Plan tersely.' } }, 'prompts.plan: snapshot (not set), now '],
    ['a memory option', { memory: { compressAt: 0.8 } }, 'memory.compressAt: snapshot 0.9, now 0.8'],
    ['the mode', { mode: 'managed' as const }, 'mode: snapshot pipeline, now managed'],
    [
      'the managed final verification',
      { managed: { finalVerification: false } },
      'managed.finalVerification: snapshot true, now false',
    ],
    [
      'the managed auditor tools',
      { managed: { auditorTools: [note(true)] } },
      'managed.auditorTools: snapshot (not set), now note (read-only)',
    ],
  ])('changes with %s, and names it', (_label, change, difference) => {
    const before = fingerprintOf({ backend, tools: [note(false)] });
    const after = fingerprintOf({ backend, tools: [note(false)], ...change });
    expect(after.hash).not.toBe(before.hash);
    expect(fingerprintDifferences(before, after).join('\n')).toContain(difference);
  });

  it('records the version of package.json in every snapshot', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(LIBRARY_VERSION).toBe(pkg.version);
  });
});
