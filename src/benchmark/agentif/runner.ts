/**
 * The AgentIF-OneDay benchmark runner: every selected task under every selected configuration, each run in its own
 * workspace, up to `concurrency` at once, judged per criterion and scored; resumable from its output directory.
 * @module
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { LlmBackend } from '../../backend/types.js';
import { HarnessError, toHarnessError } from '../../errors.js';
import { createHarness } from '../../harness/harness.js';
import type { HarnessOptions } from '../../modes/shared/options.js';
import type { Tool } from '../../tools/types.js';
import { ABLATION_CONFIGS, type AblationConfig, type AblationConfigName } from './configs.js';
import type { AgentIfTask, LoadedAgentIfTask } from './dataset.js';
import { judgeDeliverable } from './judge.js';
import { JUDGE_MATERIAL_LIMITS, parseAnswerFiles, parseTaskFiles, type ParsedFile } from './judge-material.js';
import {
  isComplete,
  outLayout,
  type OutLayout,
  PAIR_FORMAT,
  type PairRecord,
  readPairRecord,
  writeJsonAtomically,
  writeTextAtomically,
} from './pair-record.js';
import { scoreTask } from './score.js';
import { type ConfigSummary, summarize } from './summary.js';
import { renderTable } from './table.js';

/** One task under one configuration. */
export interface BenchmarkPair {
  task: AgentIfTask;
  config: AblationConfig;
}

/** What the runner reports as it goes. */
export type BenchmarkProgress =
  | { type: 'resumed'; finished: number; total: number }
  | { type: 'pair-finish'; record: PairRecord; done: number; total: number; judgedOnly: boolean }
  | {
      type: 'pair-error';
      taskId: string;
      config: AblationConfigName;
      error: HarnessError;
      done: number;
      total: number;
    };

/** Options of {@link runAgentIfBenchmark}. */
export interface AgentIfBenchmarkOptions {
  /** The tasks, from {@link loadAgentIfDataset}. */
  tasks: readonly LoadedAgentIfTask[];
  /** The output directory: per-task JSON, workspaces, `results.json`, `table.md`. Re-using it resumes. */
  out: string;
  /** @defaultValue all four, {@link ABLATION_CONFIGS} */
  configs?: readonly AblationConfig[];
  /** Runs at once. @defaultValue 1 */
  concurrency?: number;
  /** The agent's backend, or one per pair (e.g. a replay backend per task). */
  agent: LlmBackend | ((pair: BenchmarkPair) => LlmBackend);
  /** The judge's backend; the paper used a strong model different from the agent's. */
  judge: LlmBackend;
  /** The agent's tools for a pair (a fresh set per run, e.g. `() => builtinTools()`). */
  tools: (pair: BenchmarkPair) => Tool[];
  /** Further `createHarness` options for every run (limits, memory, roles, sampling…). */
  harness?: Omit<HarnessOptions, 'backend' | 'tools' | 'workspace' | 'decomposition' | 'verification'>;
  /** Names of the backends, recorded in `results.json`. */
  labels?: { agent?: string; judge?: string };
  /** Stops launching pairs and aborts those in flight; they are run again on resume. */
  signal?: AbortSignal;
  onProgress?: (progress: BenchmarkProgress) => void;
}

/** What a benchmark run produced (also written to `results.json` and `table.md`). */
export interface AgentIfResults {
  format: 'agentif-results/1';
  agent: string;
  judge: string;
  /** False when some pairs are missing (errors, or an abort): re-run with the same `out` to finish them. */
  finished: boolean;
  summary: ConfigSummary[];
  /** Every finished pair, with every criterion's judgement. */
  pairs: PairRecord[];
  /** Pairs that failed with an error this time (they are run again on resume). */
  errors: Array<{ taskId: string; config: AblationConfigName; code: string; message: string }>;
  /** `table.md`'s text. */
  table: string;
}

interface Job {
  loaded: LoadedAgentIfTask;
  config: AblationConfig;
  /** A recorded run whose judging is missing: judged only. */
  unjudged?: PairRecord;
}

/**
 * Runs the benchmark and writes `results.json`, `table.md` and one JSON per task × configuration under `out`.
 * Pairs whose JSON is already complete are not run again; a run that was finished but not judged is only judged.
 *
 * @example
 * ```ts
 * const tasks = await loadAgentIfDataset({ data: 'AgentIF-OneDay/data.jsonl', attachments: 'AgentIF-OneDay/Attachments' });
 * const results = await runAgentIfBenchmark({
 *   tasks, out: 'agentif-results', concurrency: 4,
 *   agent: openAICompatible({ baseURL, apiKey, model: 'glm-5.2' }),
 *   judge: openAICompatible({ baseURL: judgeURL, apiKey: judgeKey, model: 'gemini-3.1-pro-preview' }),
 *   tools: () => builtinTools(),
 * });
 * console.log(results.table);
 * ```
 */
export async function runAgentIfBenchmark(options: AgentIfBenchmarkOptions): Promise<AgentIfResults> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new HarnessError('invalid-options', `concurrency must be an integer ≥ 1; got ${String(concurrency)}.`);
  }
  const configs = options.configs ?? ABLATION_CONFIGS;
  const layout = outLayout(options.out);
  await mkdir(layout.root, { recursive: true });

  const finished: PairRecord[] = [];
  const jobs: Job[] = [];
  for (const config of configs) {
    for (const loaded of options.tasks) {
      const record = await readPairRecord(layout.pairFile(config.name, loaded.task.question_id));
      if (isComplete(record)) finished.push(record);
      else jobs.push({ loaded, config, ...(record ? { unjudged: record } : {}) });
    }
  }
  const total = finished.length + jobs.length;
  if (finished.length) options.onProgress?.({ type: 'resumed', finished: finished.length, total });

  const context = new RunContext(options, layout);
  const errors: AgentIfResults['errors'] = [];
  let done = finished.length;
  await pool(jobs, concurrency, options.signal, async (job) => {
    const taskId = job.loaded.task.question_id;
    try {
      const record = await context.runPair(job);
      finished.push(record);
      done++;
      options.onProgress?.({ type: 'pair-finish', record, done, total, judgedOnly: job.unjudged !== undefined });
    } catch (caught) {
      const error = toHarnessError(caught);
      if (error.code === 'aborted' && options.signal?.aborted) return;
      errors.push({ taskId, config: job.config.name, code: error.code, message: error.message });
      options.onProgress?.({ type: 'pair-error', taskId, config: job.config.name, error, done, total });
    }
  });

  const order = (r: PairRecord) =>
    configs.findIndex((c) => c.name === r.config) * options.tasks.length +
    options.tasks.findIndex((t) => t.task.question_id === r.taskId);
  const pairs = finished.filter(isComplete).sort((a, b) => order(a) - order(b));
  const summary = summarize(configs, pairs);
  const table = renderTable(summary);
  const results: AgentIfResults = {
    format: 'agentif-results/1',
    agent: options.labels?.agent ?? describe(options.agent),
    judge: options.labels?.judge ?? describe(options.judge),
    finished: pairs.length === total,
    summary,
    pairs,
    errors,
    table,
  };
  await writeJsonAtomically(layout.results, results);
  await writeTextAtomically(layout.table, table);
  return results;
}

/** Runs jobs with at most `limit` in flight; once `signal` is aborted no further job starts. */
async function pool<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: T) => Promise<void>,
) {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function describe(backend: LlmBackend | ((pair: BenchmarkPair) => LlmBackend)): string {
  return typeof backend === 'function' ? 'per-pair backend' : `${backend.provider} ${backend.modelId}`;
}

/** What the pairs of one benchmark run share: options, layout, staged attachments and parsed task files. */
class RunContext {
  private readonly staged = new Map<string, Promise<string[]>>();
  private readonly parsedInputs = new Map<string, Promise<{ attachments: ParsedFile[]; references: ParsedFile[] }>>();

  constructor(
    private readonly options: AgentIfBenchmarkOptions,
    private readonly layout: OutLayout,
  ) {}

  async runPair(job: Job): Promise<PairRecord> {
    const record = job.unjudged ?? (await this.runAgent(job));
    if (!job.unjudged) await writeJsonAtomically(this.pairFile(record), record);
    return this.judge(job.loaded, record);
  }

  private pairFile(record: PairRecord): string {
    return this.layout.pairFile(record.config, record.taskId);
  }

  private async runAgent({ loaded, config }: Job): Promise<PairRecord> {
    const { task } = loaded;
    const pair = { task, config };
    const workspace = this.layout.workspace(config.name, task.question_id);
    // A workspace left by a run that crashed or was aborted is started afresh.
    await rm(workspace, { recursive: true, force: true });
    const attachments = await this.stage(loaded);
    const harness = createHarness({
      ...this.options.harness,
      backend: typeof this.options.agent === 'function' ? this.options.agent(pair) : this.options.agent,
      tools: this.options.tools(pair),
      workspace,
      decomposition: config.decomposition,
      verification: config.verification,
    });
    try {
      const result = await harness.run({
        task: task.description,
        attachments,
        ...(this.options.signal ? { signal: this.options.signal } : {}),
      });
      if (result.status === 'aborted') throw new HarnessError('aborted', 'The run was aborted.');
      return {
        format: PAIR_FORMAT,
        taskId: task.question_id,
        title: task.title,
        config: config.name,
        ...(task.domain ? { domain: task.domain } : {}),
        ...(task.task_type ? { taskType: task.task_type } : {}),
        hasAttachments: loaded.attachments.length > 0,
        run: {
          runId: result.runId,
          status: result.status,
          ...(result.error ? { error: result.error } : {}),
          answer: result.deliverable.answer,
          files: result.deliverable.files,
          workspace: result.workspace,
          report: result.report,
        },
      };
    } finally {
      await harness.close();
    }
  }

  private async judge(loaded: LoadedAgentIfTask, record: PairRecord): Promise<PairRecord> {
    const { attachments, references } = await this.parseInputs(loaded);
    const judge = this.options.judge;
    let judged: PairRecord;
    try {
      const answer = await parseAnswerFiles(record.run.workspace, record.run.files, {
        maxChars: JUDGE_MATERIAL_LIMITS.answerFileChars,
        images: judge.supportsImages !== false,
        signal: this.options.signal,
      });
      const judgement = await judgeDeliverable(
        judge,
        { task: loaded.task, attachments, answerText: record.run.answer, answer, referenceFiles: references },
        this.options.signal,
      );
      judged = { ...record, judgement, score: scoreTask(judgement.criteria) };
    } catch (caught) {
      const error = toHarnessError(caught);
      // Recorded without a score, so a resume judges it again without re-running the agent.
      await writeJsonAtomically(this.pairFile(record), {
        ...record,
        judgement: { criteria: [], calls: 0, error: `${error.code}: ${error.message}` },
      });
      throw new HarnessError(error.code, `Judging failed: ${error.message}`, { cause: error });
    }
    await writeJsonAtomically(this.pairFile(judged), judged);
    return judged;
  }

  /** The task's attachments copied once under their original names, for every configuration's run to attach. */
  private stage(loaded: LoadedAgentIfTask): Promise<string[]> {
    const id = loaded.task.question_id;
    let staged = this.staged.get(id);
    if (!staged) {
      staged = (async () => {
        const directory = this.layout.attachments(id);
        await rm(directory, { recursive: true, force: true });
        await mkdir(directory, { recursive: true });
        const copies: string[] = [];
        for (const [index, file] of loaded.attachments.entries()) {
          // Two attachments with one original name keep both: the later ones get their position as a prefix.
          const name =
            loaded.attachments.findIndex((f) => f.name === file.name) === index
              ? file.name
              : `${index + 1}-${file.name}`;
          const target = path.join(directory, name);
          await copyFile(file.path, target);
          copies.push(target);
        }
        return copies;
      })();
      this.staged.set(id, staged);
    }
    return staged;
  }

  private parseInputs(loaded: LoadedAgentIfTask) {
    const id = loaded.task.question_id;
    let parsed = this.parsedInputs.get(id);
    if (!parsed) {
      parsed = (async () => ({
        attachments: await parseTaskFiles(loaded.attachments, JUDGE_MATERIAL_LIMITS.inputFileChars),
        references: await parseTaskFiles(loaded.referenceFiles, JUDGE_MATERIAL_LIMITS.inputFileChars),
      }))();
      this.parsedInputs.set(id, parsed);
    }
    return parsed;
  }
}
