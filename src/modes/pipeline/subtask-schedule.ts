/**
 * The dependency rules of the execute stage, apart from its I/O: which subtasks may start, the log of which subtask
 * wrote which file (folded from events), and which files two subtasks running at the same time both wrote.
 * @module
 */
import type { HarnessEvent } from '../../events.js';
import type { PlannedSubtask, WriteConflict } from '../../contracts/work.js';
import { SUBMIT_ANSWER_TOOL } from '../../prompts/executor.js';

/** The subtasks `plan[index]` waits for: its `dependsOn`, or every earlier subtask when it has none. @internal */
export function dependenciesOf(plan: readonly PlannedSubtask[], index: number): number[] {
  return plan[index]?.dependsOn ?? Array.from({ length: index }, (_, i) => i);
}

/**
 * The subtasks that may start now, at most `slots`, in plan order: neither finished nor running, and every subtask
 * they depend on finished (completed or failed: a dependent of a failed subtask still runs, and sees the failure).
 * @internal
 */
export function startableSubtasks(
  plan: readonly PlannedSubtask[],
  finished: ReadonlySet<number>,
  running: ReadonlySet<number>,
  slots: number,
): number[] {
  const startable: number[] = [];
  for (let index = 0; index < plan.length && startable.length < slots; index++) {
    if (finished.has(index) || running.has(index)) continue;
    if (dependenciesOf(plan, index).every((dependency) => finished.has(dependency))) startable.push(index);
  }
  return startable;
}

/**
 * The id of the subtask an executor scope belongs to (`subtask-2` and `subtask-2-attempt-3` are `subtask-2`'s), or
 * undefined for the scopes of other loops.
 * @internal
 */
export function subtaskOfScope(scope: string): string | undefined {
  return /^(subtask-\d+)(?:-attempt-\d+)?$/.exec(scope)?.[1];
}

/**
 * Adds the files a subtask's tool call wrote (a successful `tool-result` of an execute loop) to `writes`: for each
 * workspace path, the subtasks that wrote it, the latest writer last. The artifact registry knows only the last
 * writer of a path, and only in the process that saw the write; this log keeps every writer and lives in the run's
 * snapshots.
 * @internal
 */
export function recordSubtaskWrites(writes: Record<string, string[]>, event: HarnessEvent): void {
  if (event.type !== 'tool-result' || event.purpose !== 'execute' || event.isError) return;
  if (event.toolName === SUBMIT_ANSWER_TOOL) return;
  const writer = subtaskOfScope(event.scope ?? '');
  if (!writer) return;
  for (const path of event.files) {
    const writers = (writes[path] ?? []).filter((id) => id !== writer);
    writers.push(writer);
    writes[path] = writers;
  }
}

/**
 * The files `subtask` wrote that any of `peers` (subtasks that ran at the same time as it) wrote too, each with its
 * writers among them in the order of their last writes.
 * @internal
 */
export function writeConflictsOf(
  subtask: string,
  peers: readonly string[],
  writes: Readonly<Record<string, readonly string[]>>,
): WriteConflict[] {
  if (!peers.length) return [];
  const involved = new Set([subtask, ...peers]);
  return Object.entries(writes).flatMap(([path, writers]) => {
    const among = writers.filter((id) => involved.has(id));
    return among.includes(subtask) && among.length > 1 ? [{ path, writers: among }] : [];
  });
}
