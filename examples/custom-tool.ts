/**
 * A custom tool run by the Executor on a scripted backend: no API key, no network.
 * Run with `npm run example:custom-tool`.
 */
import { z } from 'zod';
import {
  Executor,
  HarnessEvents,
  LocalWorkspace,
  MemoryManager,
  ToolRegistry,
  defineTool,
  eventSender,
} from 'horizon-harness';
import { ScriptedBackend, submit, toolCall } from 'horizon-harness/testing';

// A tool that writes a note into the run's workspace and reports the file it produced.
const saveNote = defineTool({
  name: 'save_note',
  description: 'Saves a Markdown note in the workspace and returns its path.',
  input: z.object({
    title: z.string().min(1).describe('Short title, used for the file name'),
    body: z.string().describe('Markdown content'),
  }),
  execute: async ({ title, body }, ctx) => {
    const path = `notes/${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.md`;
    await ctx.workspace.writeFile(path, `# ${title}\n\n${body}\n`, { tool: 'save_note', scope: ctx.scope });
    return { text: `Saved ${path} (${body.length} characters).`, files: [path] };
  },
});

// The script plays what a model would do: call the tool once, then submit the answer with the file.
const backend = new ScriptedBackend({
  execute: [
    toolCall('save_note', {
      title: 'River haiku',
      body: 'Cold river at dusk\nthe heron lifts, and the stream\nforgets its shadow',
    }),
    submit('I wrote the haiku into notes/river-haiku.md.', ['notes/river-haiku.md']),
  ],
});

const events = new HarnessEvents();
events.on('tool-result', (event) => console.log(`[tool] ${event.toolName} → ${event.isError ? 'error' : 'ok'}`));

const workspace = await LocalWorkspace.create();
try {
  const executor = new Executor({
    backend,
    tools: new ToolRegistry([saveNote]),
    memory: new MemoryManager(),
    emit: eventSender(events),
    limits: { maxIterations: 10 },
  });
  const result = await executor.run({
    runId: 'example-run',
    purpose: 'execute',
    scope: 'subtask-1',
    request: 'Write a haiku about a river and keep it as a note.',
    objective: 'Write the haiku and save it with save_note.',
    workspace,
  });
  console.log(result.status, '—', result.answer);
  console.log('files:', result.files);
  console.log((await workspace.readFile('notes/river-haiku.md')).toString('utf8'));
  backend.assertComplete();
} finally {
  await workspace.dispose();
}
