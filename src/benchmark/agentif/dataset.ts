/**
 * AgentIF-OneDay tasks: the `data.jsonl` records validated with zod, and their attachments found on disk.
 * @module
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { docsUrl } from '../../project-links.js';

/** A `question_id` is used in file names (per-task JSON, workspaces), so it may not hold path separators. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * One AgentIF-OneDay record (a `data.jsonl` line). `domain` and `task_type` are not fields of the published file;
 * when a record carries them (e.g. added from the paper's categorisation), the results are also broken down by them.
 * Other fields are kept and ignored.
 */
export const AgentIfTaskSchema = z.looseObject({
  question_id: z.string().regex(SAFE_ID, 'must be letters, digits, "_", "." or "-" (it names files), e.g. taskif_12'),
  title: z.string(),
  description: z.string().min(1, 'must not be empty: it is the task given to the agent'),
  attachment_filenames: z.array(z.string().min(1)).default([]),
  score_criteria: z
    .array(z.object({ content: z.string().min(1), score: z.number().int() }))
    .min(1, 'must list at least one criterion'),
  reference_answer_description: z.string().default(''),
  reference_answer_attachment_filenames: z.array(z.string().min(1)).default([]),
  domain: z.string().min(1).optional(),
  task_type: z.string().min(1).optional(),
});

/** A validated AgentIF-OneDay record. */
export type AgentIfTask = z.output<typeof AgentIfTaskSchema>;

/** A file of a task found on disk: where it is, and the name the agent and the judge see. */
export interface TaskFile {
  /** Absolute path of the stored file. */
  path: string;
  /** The original file name (the stored name without its `taskif_<N>…attachment…` prefix). */
  name: string;
}

/** A task ready to run: its record, its line in `data.jsonl`, and its attachment and reference files. */
export interface LoadedAgentIfTask {
  task: AgentIfTask;
  line: number;
  attachments: TaskFile[];
  referenceFiles: TaskFile[];
}

/** Where {@link loadAgentIfDataset} reads. */
export interface LoadAgentIfDatasetOptions {
  /** Path of `data.jsonl`. */
  data: string;
  /**
   * The `Attachments/` directory, holding `Questions/` and `Reference_answer/`. Needed when a selected task lists
   * attachment or reference files.
   */
  attachments?: string | undefined;
  /** Only these `question_id`s, in this order; every one must exist. */
  taskIds?: readonly string[] | undefined;
}

/**
 * Reads and validates `data.jsonl` and finds every selected task's files, before any model is called. A bad line,
 * a duplicate or unknown id, or a missing file throws `invalid-input` naming the line, the field and what to fix.
 */
export async function loadAgentIfDataset(options: LoadAgentIfDatasetOptions): Promise<LoadedAgentIfTask[]> {
  const text = await readFile(options.data, 'utf8').catch((error: unknown) => {
    throw new HarnessError('invalid-input', `Cannot read the data file ${options.data}: ${(error as Error).message}`, {
      cause: error,
    });
  });
  const records = parseAgentIfJsonl(text, options.data);
  const selected = selectTasks(records, options.taskIds, options.data);
  const loaded: LoadedAgentIfTask[] = [];
  for (const { task, line } of selected) {
    loaded.push({
      task,
      line,
      attachments: await findFiles(task, line, task.attachment_filenames, 'Questions', options.attachments),
      referenceFiles: await findFiles(
        task,
        line,
        task.reference_answer_attachment_filenames,
        'Reference_answer',
        options.attachments,
      ),
    });
  }
  return loaded;
}

/** Parses the lines of a `data.jsonl` text (blank lines skipped); `source` names the file in errors. */
export function parseAgentIfJsonl(text: string, source = 'data.jsonl'): Array<{ task: AgentIfTask; line: number }> {
  const records: Array<{ task: AgentIfTask; line: number }> = [];
  const seen = new Map<string, number>();
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = index + 1;
    if (!raw.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new HarnessError(
        'invalid-input',
        `${source} line ${line} is not valid JSON (${(error as Error).message}). Each line must be one task object.`,
      );
    }
    const parsed = AgentIfTaskSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.length ? issue.path.join('.') : '(the line)';
      throw new HarnessError(
        'invalid-input',
        `${source} line ${line}, field "${field}": ${issue?.message ?? 'invalid'}. ` +
          `See ${docsUrl('benchmark.md')} for the AgentIF-OneDay record schema.`,
      );
    }
    const earlier = seen.get(parsed.data.question_id);
    if (earlier !== undefined) {
      throw new HarnessError(
        'invalid-input',
        `${source} line ${line}: question_id "${parsed.data.question_id}" is already used on line ${earlier}. Ids must be unique.`,
      );
    }
    seen.set(parsed.data.question_id, line);
    records.push({ task: parsed.data, line });
  }
  if (records.length === 0) throw new HarnessError('invalid-input', `${source} holds no tasks.`);
  return records;
}

function selectTasks(
  records: Array<{ task: AgentIfTask; line: number }>,
  ids: readonly string[] | undefined,
  source: string,
): Array<{ task: AgentIfTask; line: number }> {
  if (ids === undefined) return records;
  const byId = new Map(records.map((record) => [record.task.question_id, record]));
  const unknown = ids.filter((id) => !byId.has(id));
  if (unknown.length) {
    throw new HarnessError(
      'invalid-input',
      `Unknown task id(s) ${unknown.join(', ')}: not in ${source}. Pick ids from its question_id fields.`,
    );
  }
  return [...new Set(ids)].map((id) => byId.get(id)!);
}

/**
 * Finds each listed file under `<root>/<folder>/` (or `<root>/` itself): by its exact name, or as the stored
 * `<question_id>…attachment…<name>`.
 */
async function findFiles(
  task: AgentIfTask,
  line: number,
  names: readonly string[],
  folder: 'Questions' | 'Reference_answer',
  root: string | undefined,
): Promise<TaskFile[]> {
  if (names.length === 0) return [];
  const field = folder === 'Questions' ? 'attachment_filenames' : 'reference_answer_attachment_filenames';
  if (root === undefined) {
    throw new HarnessError(
      'invalid-input',
      `Task ${task.question_id} (line ${line}) lists ${field} but no attachments directory was given: ` +
        "pass the dataset's Attachments/ directory (--attachments DIR).",
    );
  }
  const directories = [path.join(root, folder), root];
  const found: TaskFile[] = [];
  for (const name of names) {
    const file = await findOne(directories, task.question_id, name);
    if (!file) {
      throw new HarnessError(
        'invalid-input',
        `Task ${task.question_id} (line ${line}), ${field}: "${name}" was not found in ${directories.join(' or ')} ` +
          `(looked for "${name}" and "${task.question_id}…attachment…${name}").`,
      );
    }
    found.push({ path: file, name: originalName(path.basename(file), task.question_id) });
  }
  return found;
}

async function findOne(directories: readonly string[], id: string, name: string): Promise<string | undefined> {
  if (path.basename(name) !== name) return undefined;
  for (const directory of directories) {
    const exact = path.join(directory, name);
    if ((await stat(exact).catch(() => undefined))?.isFile()) return exact;
    const entries = await readdir(directory).catch(() => [] as string[]);
    // The character after the id may not be a digit: taskif_1 must not pick taskif_12's files.
    const stored = entries.find(
      (entry) => entry.startsWith(id) && entry.endsWith(name) && /^(?!\d).*attachment/i.test(entry.slice(id.length)),
    );
    if (stored) return path.join(directory, stored);
  }
  return undefined;
}

/** `taskif_12_attachment_report.pdf` → `report.pdf`; a name without the prefix stays as it is. */
function originalName(stored: string, id: string): string {
  if (!stored.startsWith(id)) return stored;
  const stripped = stored.slice(id.length).replace(/^[\s_+-]*attachment[\s_+-]*/i, '');
  return stripped && stripped !== stored.slice(id.length) ? stripped : stored;
}
