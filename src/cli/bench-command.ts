/**
 * `horizon-harness bench agentif`: the AgentIF-OneDay benchmark from the command line.
 * @module
 */
import { type Command, Option } from 'commander';
import { selectConfigs } from '../benchmark/agentif/configs.js';
import { loadAgentIfDataset } from '../benchmark/agentif/dataset.js';
import { runAgentIfBenchmark, type BenchmarkProgress } from '../benchmark/agentif/runner.js';
import { HarnessError } from '../errors.js';
import { chooseBackend, type BackendFlags, type ChosenBackend } from './backend-choice.js';
import { loadBackendModule, type BackendModule } from './backend-module.js';
import { EXIT_CODES, type CliIo } from './io.js';
import { printable } from './printable.js';
import { cliTools } from './tools.js';
import { docsUrl } from '../project-links.js';

/** The flags that choose the judge's backend (the agent's flags are its defaults). @internal */
export interface JudgeFlags extends Omit<BackendFlags, 'stream'> {
  judgeModel?: string;
  judgeBaseUrl?: string;
  judgeAnthropic?: boolean;
  judgeApiKeyEnv?: string;
}

interface BenchFlags extends JudgeFlags {
  data: string;
  attachments?: string;
  tasks?: string;
  configs: string;
  concurrency: number;
  out: string;
  backendModule?: string;
  json?: boolean;
}

/** Adds `bench agentif` to `program`; the action reports its exit code through `setExitCode`. */
export function addBenchCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  const bench = program.command('bench').description('Run a benchmark and print its results table.');
  bench
    .command('agentif')
    .description(
      'AgentIF-OneDay: run the DIRECT / DECOMP / VERIFY / FULL configurations on each task, judge every criterion, ' +
        'print and write results.json and table.md. Re-running with the same --out resumes.',
    )
    .requiredOption('--data <file>', 'the data.jsonl of AgentIF-OneDay')
    .option('--attachments <dir>', 'its Attachments/ directory (with Questions/ and Reference_answer/)')
    .option('--tasks <ids>', 'only these question_ids, comma-separated')
    .option('--configs <names>', 'configurations, comma-separated', 'DIRECT,DECOMP,VERIFY,FULL')
    .option('--concurrency <n>', 'runs at once', positiveInteger, 1)
    .option(
      '--out <dir>',
      'output directory (per-task JSON, workspaces, results); re-use it to resume',
      'agentif-results',
    )
    .option('--model <name>', "agent model (default: HARNESS_MODEL, else the provider's default)")
    .addOption(new Option('--base-url <url>', 'agent: an OpenAI-compatible server').conflicts('anthropic'))
    .option('--anthropic', 'agent: the Anthropic Messages API (key from ANTHROPIC_API_KEY)')
    .option('--api-key-env <name>', 'agent: read the API key from this environment variable')
    .option('--judge-model <name>', "judge model (default: HARNESS_JUDGE_MODEL, else the agent's model)")
    .addOption(
      new Option(
        '--judge-base-url <url>',
        'judge: an OpenAI-compatible server (default: HARNESS_JUDGE_BASE_URL)',
      ).conflicts('judgeAnthropic'),
    )
    .option('--judge-anthropic', 'judge: the Anthropic Messages API')
    .option(
      '--judge-api-key-env <name>',
      'judge: read the API key from this variable (default: HARNESS_JUDGE_API_KEY when set)',
    )
    .option('--backend-module <file>', `a module exporting agent, judge and/or tools (see ${docsUrl('cli.md')})`)
    .option('--json', 'print results.json on stdout (progress goes to stderr)')
    .action(async (flags: BenchFlags) => {
      setExitCode(await benchAgentIf(flags, io));
    });
}

async function benchAgentIf(flags: BenchFlags, io: CliIo): Promise<number> {
  const configs = selectConfigs(flags.configs.split(','));
  const tasks = await loadAgentIfDataset({
    data: flags.data,
    attachments: flags.attachments,
    taskIds: flags.tasks
      ?.split(',')
      .map((id) => id.trim())
      .filter(Boolean),
  });
  const module: BackendModule = flags.backendModule ? await loadBackendModule(flags.backendModule) : {};
  const agent = module.agent
    ? { backend: module.agent, label: `agent from ${flags.backendModule}` }
    : chooseBackend({ ...flags, stream: false }, io.env);
  const judge: ChosenBackend = module.judge
    ? { backend: module.judge, label: `judge from ${flags.backendModule}` }
    : chooseJudge(flags, io.env);
  const progress = flags.json ? io.stderr : io.stdout;
  const say = (text: string) => progress.write(`${printable(text)}\n`);
  say(
    `AgentIF-OneDay · ${tasks.length} tasks × ${configs.map((c) => c.name).join(', ')} · concurrency ${flags.concurrency}`,
  );
  say(`agent: ${agent.label}`);
  say(`judge: ${judge.label}`);
  const notes = new Set<string>();
  const note = (text: string) => {
    if (!notes.has(text)) say(text);
    notes.add(text);
  };
  const results = await runAgentIfBenchmark({
    tasks,
    out: flags.out,
    configs,
    concurrency: flags.concurrency,
    agent: agent.backend,
    judge: judge.backend,
    tools: module.tools ?? (() => cliTools(io.env, note)),
    labels: { agent: agent.label, judge: judge.label },
    ...(io.signal ? { signal: io.signal } : {}),
    onProgress: (event) => say(describeProgress(event)),
  });
  if (flags.json) io.stdout.write(`${JSON.stringify(results)}\n`);
  else
    io.stdout.write(
      `\n${results.table}\nResults: ${results.pairs.length} pairs in ${flags.out} (results.json, table.md, tasks/)\n`,
    );
  if (io.signal?.aborted) {
    io.stderr.write(`Aborted. Finished pairs are kept in ${flags.out}; run the same command again to resume.\n`);
    return EXIT_CODES.aborted;
  }
  if (!results.finished) {
    io.stderr.write(`${results.errors.length} pair(s) failed; run the same command again to retry them.\n`);
    return EXIT_CODES.failed;
  }
  return EXIT_CODES.succeeded;
}

function describeProgress(event: BenchmarkProgress): string {
  switch (event.type) {
    case 'resumed':
      return `resuming: ${event.finished} of ${event.total} pairs already finished`;
    case 'pair-finish': {
      const { record } = event;
      const minutes = (record.run.report.wallTimeMs / 60_000).toFixed(1);
      const unjudged = record.judgement?.problem ? ` · ⚠ ${record.judgement.problem}` : '';
      return `[${event.done}/${event.total}] ${record.config} ${record.taskId} · score ${record.score?.score.toFixed(3)} · ${record.run.status} · ${minutes} min${event.judgedOnly ? ' · judged again' : ''}${unjudged}`;
    }
    case 'pair-error':
      return `[${event.done}/${event.total}] ${event.config} ${event.taskId} · ✗ ${event.error.code}: ${event.error.message}`;
  }
}

/**
 * The judge's backend, chosen like the agent's but from the --judge-* flags and HARNESS_JUDGE_MODEL /
 * HARNESS_JUDGE_BASE_URL / HARNESS_JUDGE_API_KEY; without any of them it is the agent's provider and model.
 * @internal
 */
export function chooseJudge(flags: JudgeFlags, env: CliIo['env']): ChosenBackend {
  const read = (name: string) => (env[name]?.trim() ? env[name] : undefined);
  const model = flags.judgeModel ?? read('HARNESS_JUDGE_MODEL') ?? flags.model;
  const baseUrl =
    flags.judgeBaseUrl ?? read('HARNESS_JUDGE_BASE_URL') ?? (flags.judgeAnthropic ? undefined : flags.baseUrl);
  const apiKeyEnv = flags.judgeApiKeyEnv ?? (read('HARNESS_JUDGE_API_KEY') ? 'HARNESS_JUDGE_API_KEY' : flags.apiKeyEnv);
  try {
    return chooseBackend(
      {
        ...(model ? { model } : {}),
        ...(baseUrl ? { baseUrl } : {}),
        ...(apiKeyEnv ? { apiKeyEnv } : {}),
        anthropic: flags.judgeAnthropic ?? (baseUrl === undefined && flags.anthropic),
        stream: false,
      },
      env,
    );
  } catch (error) {
    if (!HarnessError.isInstance(error)) throw error;
    throw new HarnessError(
      error.code,
      `The judge's backend: ${error.message} (the judge reads --judge-* flags and HARNESS_JUDGE_* variables)`,
    );
  }
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new HarnessError('invalid-options', `--concurrency takes a whole number ≥ 1; got "${value}".`);
  }
  return number;
}
