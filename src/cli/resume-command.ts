/**
 * `horizon-harness resume <workspace>`: goes on with a CLI run that was stopped (Ctrl-C, a crash, a closed terminal).
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import type { Tool } from '../tools/types.js';
import { backendOf } from './backend-choice.js';
import { loadCliRecord } from './cli-record.js';
import type { CliIo } from './io.js';
import { cliRun } from './run-command.js';

/**
 * Goes on with the CLI run recorded in `workspaceDir` (`.harness/cli.json`, written by `run` and `replay`) from its
 * last snapshot, with the backend, switches and tools it was started with, and returns the exit code as `run` does. A
 * finished run's saved result is reported again without running anything.
 */
export async function resumeCommand(workspaceDir: string, options: { json: boolean }, io: CliIo): Promise<number> {
  const workspace = path.resolve(workspaceDir);
  const isDirectory = await stat(workspace).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDirectory)
    throw new HarnessError(
      'invalid-input',
      `Cannot resume: "${workspace}" is not a directory. Pass a run's workspace.`,
    );
  const record = await loadCliRecord(workspace);
  const backend = backendOf(record.backend, io.env);
  const spec = { backend, decomposition: record.decomposition, verification: record.verification, workspace };
  return cliRun({ ...spec, json: options.json }, io, async (harness, tools) => {
    assertSameTools(record.tools, tools);
    return harness.resume(record.runId, { workspace, ...(io.signal ? { signal: io.signal } : {}) });
  });
}

/** Throws `invalid-input` naming what differs when the tools at hand are not those the run was started with. */
function assertSameTools(recorded: readonly string[], tools: readonly Tool[]): void {
  const now = new Set(tools.map((tool) => tool.name));
  const missing = recorded.filter((name) => !now.has(name));
  const extra = [...now].filter((name) => !recorded.includes(name));
  if (missing.length === 0 && extra.length === 0) return;
  const differences = [
    ...(missing.length ? [`it had ${missing.join(', ')}, missing now`] : []),
    ...(extra.length ? [`it did not have ${extra.join(', ')}`] : []),
  ];
  throw new HarnessError(
    'invalid-input',
    `Cannot resume with other tools than the run was started with: ${differences.join('; ')}. Resume in the ` +
      'environment it ran in (search and google_scholar need SERPER_API_KEY set, python_interpreter needs python3).',
  );
}
