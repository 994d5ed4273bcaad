import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createHarness, type HarnessEvent, writeToFileTool } from '../../src/index.js';
import { DEMO_SCENARIO, DEMO_TASK, replayBackend } from '../../src/testing/index.js';
import { tempDir } from '../harness/helpers.js';

async function deltas(stream: boolean | undefined) {
  const backend = replayBackend(DEMO_SCENARIO, stream === undefined ? {} : { stream });
  const harness = createHarness({ backend, tools: [writeToFileTool()], workspace: await tempDir() });
  const events: Extract<HarnessEvent, { type: 'text-delta' }>[] = [];
  harness.on('text-delta', (e) => events.push(e));
  const result = await harness.run(DEMO_TASK);
  return { result, events };
}

describe('replayBackend({ stream })', () => {
  it('streams offline: text-delta events arrive, the narration from the working roles, JSON from plan and verify', async () => {
    const { result, events } = await deltas(true);
    expect(result.status).toBe('succeeded');
    const narrating = new Set(['execute', 'synthesize', 'repair']);
    const said = events
      .filter((e) => narrating.has(e.purpose))
      .map((e) => e.text)
      .join('');
    expect(said).toContain('Writing notes/');
    expect(said).toContain(`Writing ${DEMO_SCENARIO.file}.`);
    // What the docs' purpose filter keeps out: the planner's and the verifier's raw JSON.
    const json = events.filter((e) => e.purpose === 'plan' || e.purpose === 'verify').map((e) => e.text);
    expect(json.join('')).toContain('"subtasks"');
  });

  it('does not stream by default, and its answers are the same', async () => {
    const plain = await deltas(undefined);
    const streamed = await deltas(true);
    expect(plain.events).toEqual([]);
    expect(plain.result.deliverable.answer).toBe(streamed.result.deliverable.answer);
    expect(plain.result.status).toBe(streamed.result.status);
  });
});

describe("docs/events.md's first example", () => {
  it('prints text-delta only for the narrating purposes', () => {
    const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    expect(example).toContain("harness.on('text-delta'");
    expect(example).toMatch(/narrating\.has\(e\.purpose\)/);
    expect(example).toContain("new Set(['execute', 'synthesize', 'repair'])");
  });
});
