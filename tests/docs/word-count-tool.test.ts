import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHarness, defineTool } from 'horizon-harness';
import { ScriptedBackend, planOf, submit, toolCall, verdict } from 'horizon-harness/testing';
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

describe('word_count in a whole run', () => {
  it('is called by the executor and its result reaches the deliverable', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Count the words')],
      // One subtask that completes is the deliverable itself: no synthesize step.
      execute: [toolCall('word_count', { text: 'one two three' }), submit('The text has 3 words.')],
      verify: [verdict(true)],
    });
    const workspace = await mkdtemp(path.join(tmpdir(), 'word-count-'));
    const harness = createHarness({ backend, tools: [wordCount], workspace });
    const observations: string[] = [];
    harness.on('tool-result', (event) => observations.push(`${event.toolName}:${event.isError}`));

    const result = await harness.run('How many words are in "one two three"?');

    expect(result.status).toBe('succeeded');
    expect(result.deliverable.answer).toBe('The text has 3 words.');
    expect(observations).toContain('word_count:false');
    // The second execute call saw the tool's output as the answer to its call.
    const secondCall = backend.callsFor('execute')[1];
    const toolMessage = secondCall?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('3');
    backend.assertComplete();
  });
});
