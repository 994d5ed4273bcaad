/**
 * The per-task JSON of one task × configuration pair: the run, every criterion's judgement and the score. A pair is
 * finished when its file is present and complete; that is what makes a benchmark run resumable.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunReport, RunResult } from '../../contracts/work.js';
import type { AblationConfigName } from './configs.js';
import type { TaskJudgement } from './judge.js';
import type { TaskScore } from './score.js';

/** The format tag of a pair file. */
export const PAIR_FORMAT = 'agentif-pair/1';

/** What a pair file records. */
export interface PairRecord {
  format: typeof PAIR_FORMAT;
  taskId: string;
  title: string;
  config: AblationConfigName;
  domain?: string;
  taskType?: string;
  /** Whether the task came with input attachments (the paper's w/ and w/o columns). */
  hasAttachments: boolean;
  /** The agent's run. */
  run: {
    runId: string;
    status: RunResult['status'];
    error?: { code: string; message: string };
    answer: string;
    files: string[];
    /** Absolute path of the run's workspace (the deliverable's files are there). */
    workspace: string;
    report: RunReport;
  };
  /** Absent until judged; `error` when the judge could not be reached (the pair is judged again on resume). */
  judgement?: TaskJudgement & { error?: string };
  /** Present once judged. */
  score?: TaskScore;
}

/** Where a benchmark run keeps its files under `--out`. */
export interface OutLayout {
  root: string;
  pairFile(config: AblationConfigName, taskId: string): string;
  workspace(config: AblationConfigName, taskId: string): string;
  /** Where a task's attachments are staged under their original names before being copied into workspaces. */
  attachments(taskId: string): string;
  results: string;
  table: string;
}

/** The layout under `root`: `tasks/<CONFIG>/<id>.json`, `workspaces/<CONFIG>/<id>/`, `results.json`, `table.md`. */
export function outLayout(root: string): OutLayout {
  const absolute = path.resolve(root);
  return {
    root: absolute,
    pairFile: (config, taskId) => path.join(absolute, 'tasks', config, `${taskId}.json`),
    workspace: (config, taskId) => path.join(absolute, 'workspaces', config, taskId),
    attachments: (taskId) => path.join(absolute, 'attachments', taskId),
    results: path.join(absolute, 'results.json'),
    table: path.join(absolute, 'table.md'),
  };
}

/** Whether a record holds a usable judgement and score. */
export function isComplete(
  record: PairRecord | undefined,
): record is PairRecord & Required<Pick<PairRecord, 'judgement' | 'score'>> {
  return record?.score !== undefined && record.judgement !== undefined && record.judgement.error === undefined;
}

/** The record in `file`, or undefined when it is missing, unreadable or not a pair file (such a pair is run again). */
export async function readPairRecord(file: string): Promise<PairRecord | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<PairRecord>;
    return value.format === PAIR_FORMAT && value.run?.report ? (value as PairRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `value` as JSON, atomically (see {@link writeTextAtomically}). */
export function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  return writeTextAtomically(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Writes `text` through a temporary file and a rename, so a crash never leaves half a file. */
export async function writeTextAtomically(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}
