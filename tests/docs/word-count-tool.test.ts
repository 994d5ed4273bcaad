import { existsSync } from 'node:fs';
import { createHarness, defineTool } from 'horizon-harness';
import { createToolContext, ScriptedBackend, planOf, submit, toolCall, verdict } from 'horizon-harness/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

// The tool under test: what a user adds to the harness.
const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts the words of a text.',
  input: z.object({ text: z.string() }),
  readOnly: true,
  execute: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

describe('word_count', () => {
  it('counts words when called alone', async () => {
    const ctx = await createToolContext(); // a temporary workspace, removed by dispose()
    try {
      expect(await wordCount.execute({ text: 'one  two three' }, ctx)).toBe('3');
    } finally {
      await ctx.dispose();
    }
  });

  it('is called by the executor in a whole run and its result reaches the deliverable', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Count the words')],
      // One subtask that completes is the deliverable itself: no synthesize step.
      execute: [toolCall('word_count', { text: 'one two three' }), submit('The text has 3 words.')],
      verify: [verdict(true)],
    });
    // A temporary workspace that close() removes whatever the run's outcome (keep: false).
    const harness = createHarness({ backend, tools: [wordCount], workspace: { keep: false } });
    const observations: string[] = [];
    harness.on('tool-result', (event) => observations.push(`${event.toolName}:${event.isError}`));
    let workspace = '';
    harness.on('run-start', (event) => {
      workspace = event.workspace;
    });

    try {
      const result = await harness.run('How many words are in "one two three"?');

      expect(result.status).toBe('succeeded');
      expect(result.deliverable.answer).toBe('The text has 3 words.');
      expect(observations).toContain('word_count:false');
      // The second execute call saw the tool's output as the answer to its call.
      const secondCall = backend.callsFor('execute')[1];
      const toolMessage = secondCall?.messages.find((message) => message.role === 'tool');
      expect(toolMessage?.content).toContain('3');
      backend.assertComplete();
    } finally {
      await harness.close();
    }
    expect(existsSync(workspace)).toBe(false); // the test leaves no folder behind
  });
});
