import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import {
  commandAgent,
  functionAgent,
  harnessAgent,
  isHarnessAgent,
  type EpisodeInput,
} from '../../src/modes/managed/index.js';
import { ScriptedBackend } from '../../src/testing/index.js';
import { textOf } from '../harness/helpers.js';
import { groupRuns } from '../../src/util/process-group.js';
import { decide, executeRecords, managedRun, script, tempDir, verdictOf } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists.' };

function episode(cwd: string, extra: Partial<EpisodeInput> = {}): EpisodeInput {
  return {
    prompt: 'PROMPT-TEXT line one\nline two',
    cwd,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** The errno code `process.kill(-pgid, 0)` throws, or undefined when the group still exists. */

/** A script that records its process group id (it leads its group) and leaves a child running besides. */
async function sleeper(dir: string): Promise<{ file: string; pidFile: string }> {
  const pidFile = path.join(dir, 'pgid');
  const file = await script(dir, 'sleeper.sh', `echo $$ > "${pidFile}"\necho "started"\nsleep 30 &\nsleep 30`);
  return { file, pidFile };
}

async function waitForFile(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('commandAgent', () => {
  afterEach(() => {
    delete process.env.MANAGED_TEST_SECRET_TOKEN;
  });

  it('kills the whole process group on timeout: afterwards the group is gone', async () => {
    const dir = await tempDir();
    const { file, pidFile } = await sleeper(dir);
    // On the host: the test measures the host's process group (the sandbox has its own PID namespace).
    const agent = commandAgent({ command: ['bash', file], promptVia: 'stdin', timeoutMs: 1_000, sandbox: false });
    const result = await agent.runEpisode(episode(dir));
    expect(result.status).toBe('timeout');
    expect(result.output).toContain('started');
    const pgid = Number(await readFile(pidFile, 'utf8'));
    expect(groupRuns(pgid)).toBe(false);
  });

  it('kills the whole process group on abort: cancelled, and the group is gone', async () => {
    const dir = await tempDir();
    const { file, pidFile } = await sleeper(dir);
    const controller = new AbortController();
    const running = commandAgent({ command: ['bash', file], promptVia: 'stdin', sandbox: false }).runEpisode(
      episode(dir, { signal: controller.signal }),
    );
    await waitForFile(pidFile);
    controller.abort();
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(groupRuns(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('reports a non-zero exit as an error with its exit code, stdout and stderr', async () => {
    const dir = await tempDir();
    const file = await script(dir, 'fail.sh', 'echo "partial work"\necho "boom" >&2\nexit 3');
    const result = await commandAgent({ command: ['bash', file], promptVia: 'stdin' }).runEpisode(episode(dir));
    expect(result).toEqual({ status: 'error', exitCode: 3, output: 'partial work\n\n--- stderr ---\nboom\n' });
  });

  it('passes the prompt on stdin, as an argument (in its slot or appended) or as a file it removes afterwards', async () => {
    const dir = await tempDir();
    const prompt = 'PROMPT-TEXT line one\nline two';
    const stdin = await commandAgent({ command: ['cat'], promptVia: 'stdin' }).runEpisode(episode(dir));
    expect(stdin).toEqual({ status: 'done', exitCode: 0, output: prompt });
    const slot = await commandAgent({
      command: ['bash', '-c', 'printf "%s|%s" "$1" "$2"', 'agent', '-p', '{prompt}'],
      promptVia: 'arg',
    }).runEpisode(episode(dir));
    expect(slot.output).toBe(`-p|${prompt}`);
    const appended = await commandAgent({
      command: ['bash', '-c', 'printf "%s" "$1"', 'agent'],
      promptVia: 'arg',
    }).runEpisode(episode(dir));
    expect(appended.output).toBe(prompt);
    const viaFile = await commandAgent({
      command: ['bash', '-c', 'cat "$1"; echo; echo "$HARNESS_PROMPT_FILE"', 'agent', '{promptFile}'],
      promptVia: 'file',
    }).runEpisode(episode(dir));
    const [text, ...rest] = viaFile.output.split('\n');
    expect(`${text}\n${rest[0]}`).toBe(prompt);
    const promptFile = rest[1] ?? '';
    expect(promptFile).toMatch(/prompt\.md$/);
    expect(promptFile.startsWith(dir)).toBe(false);
    expect(existsSync(promptFile)).toBe(false);
  });

  it('runs in the workspace with an allow-listed environment: secrets stay out unless passed', async () => {
    const dir = await tempDir();
    process.env.MANAGED_TEST_SECRET_TOKEN = 'hunter2';
    const agent = commandAgent({
      command: ['bash', '-c', 'echo "[$MANAGED_TEST_SECRET_TOKEN][$PASSED][$HARNESS_ROLE][${PATH:+path}][$(pwd)]"'],
      promptVia: 'stdin',
      env: { PASSED: 'yes' },
    });
    const result = await agent.runEpisode(episode(dir, { env: { HARNESS_ROLE: 'execute' } }));
    expect(result.output.trim()).toBe(`[][yes][execute][path][${dir}]`);
    expect(agent.name).toBe('bash');
  });

  it('reports a program that cannot start as an error, and rejects bad options', async () => {
    const dir = await tempDir();
    const result = await commandAgent({ command: [path.join(dir, 'no-such-agent')], promptVia: 'stdin' }).runEpisode(
      episode(dir),
    );
    expect(result.status).toBe('error');
    expect(result.output).toContain('Could not start');
    expect(() => commandAgent({ command: [], promptVia: 'stdin' })).toThrow(/Invalid commandAgent option "command"/);
    expect(() => commandAgent({ command: ['x'], promptVia: 'pipe' as 'stdin' })).toThrow(HarnessError);
  });
});

describe('functionAgent and harnessAgent', () => {
  it('wraps an in-process agent: results pass through, throws and bad results become errors', async () => {
    const dir = await tempDir();
    const ok = functionAgent(async ({ prompt }) => ({ status: 'done', output: `read ${prompt.length}` }), {
      name: 'mine',
    });
    expect(ok.name).toBe('mine');
    expect(await ok.runEpisode(episode(dir))).toEqual({ status: 'done', output: 'read 29' });
    const throws = functionAgent(() => {
      throw new Error('kaput');
    });
    expect(await throws.runEpisode(episode(dir))).toEqual({
      status: 'error',
      output: expect.stringContaining('kaput'),
    });
    const bad = functionAgent(() => ({ status: 'fine', output: 1 }) as never);
    expect((await bad.runEpisode(episode(dir))).status).toBe('error');
    const controller = new AbortController();
    controller.abort();
    expect((await throws.runEpisode(episode(dir, { signal: controller.signal }))).status).toBe('cancelled');
  });

  it('harnessAgent() names the built-in loop and cannot run an episode by itself', async () => {
    const agent = harnessAgent();
    expect(isHarnessAgent(agent)).toBe(true);
    expect(isHarnessAgent(functionAgent(() => ({ status: 'done', output: '' })))).toBe(false);
    await expect(agent.runEpisode(episode('/tmp'))).rejects.toMatchObject({ code: 'invalid-input' });
  });
});

describe('external executors in a managed run', () => {
  it('a CLI executor that times out: its group is gone, and the auditor and the manager learn how it ended', async () => {
    const dir = await tempDir();
    const { file, pidFile } = await sleeper(dir);
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'the executor hangs' })],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: 'missing', verdict: 'fail' },
        ]),
      ],
    });
    const run = await managedRun({
      backend,
      options: {
        agents: {
          executor: commandAgent({
            command: ['bash', file],
            promptVia: 'stdin',
            timeoutMs: 1_000,
            name: 'slowpoke',
            sandbox: false,
          }),
        },
      },
    });
    const result = await run.run();
    expect(groupRuns(Number(await readFile(pidFile, 'utf8')))).toBe(false);
    expect(textOf(backend.callsFor('audit')[0])).toContain('Agent: slowpoke; the episode ended "timeout"');
    expect(textOf(backend.callsFor('manage')[1])).toContain('Execution: slowpoke ended "timeout"');
    expect(result.taskState.records[0]?.status).toBe('pending');
    expect(backend.callsFor('execute')).toHaveLength(0);
  });

  it('a CLI executor that exits non-zero: its output is the claim, its exit code a fact', async () => {
    const dir = await tempDir();
    const file = await script(dir, 'fail.sh', 'cat > /dev/null\necho "I finished everything"\nexit 3');
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'the executor fails' })],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: 'missing', verdict: 'fail' },
        ]),
      ],
    });
    const run = await managedRun({
      backend,
      options: {
        agents: { executor: commandAgent({ command: ['bash', file], promptVia: 'stdin', readOnlyPaths: [dir] }) },
      },
    });
    const result = await run.run();
    const audit = textOf(backend.callsFor('audit')[0]);
    expect(audit).toContain('the episode ended "error", exit code 3');
    expect(audit).toContain('I finished everything');
    expect(textOf(backend.callsFor('manage')[1])).toContain('ended "error", exit code 3');
    expect(textOf(backend.callsFor('manage')[1])).not.toContain('I finished everything');
    expect(result.status).toBe('blocked');
  });

  it('a long output reaches the auditor head and tail through the memory layer; the whole is saved for the audit only', async () => {
    const dir = await tempDir();
    const file = await script(
      dir,
      'chatty.sh',
      'cat > /dev/null\necho "HEAD-OF-OUTPUT"\nfor i in $(seq 1 3000); do echo "working on step $i"; done\necho "TAIL-OF-OUTPUT"',
    );
    let savedDuringAudit = '';
    let root = '';
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'x' })],
      audit: [
        () => {
          savedDuringAudit = readFileSync(path.join(root, '.harness/outputs/claim-1.txt'), 'utf8');
          return verdictOf('incomplete', 'clean', [
            { check: 'report.md exists', observed: 'missing', verdict: 'fail' },
          ]);
        },
      ],
    });
    const run = await managedRun({
      backend,
      options: {
        agents: { executor: commandAgent({ command: ['bash', file], promptVia: 'stdin', readOnlyPaths: [dir] }) },
      },
    });
    root = run.workspace.root;
    await run.run();
    const audit = textOf(backend.callsFor('audit')[0]);
    expect(audit).toContain('HEAD-OF-OUTPUT');
    expect(audit).toContain('TAIL-OF-OUTPUT');
    expect(audit).not.toContain('working on step 1500\n');
    expect(audit).toContain('.harness/outputs/claim-1.txt');
    expect(run.events('memory-truncate')).toEqual([
      expect.objectContaining({ purpose: 'execute', scope: 'claim-1', strategy: 'head-tail' }),
    ]);
    expect(savedDuringAudit).toContain('working on step 1500\n');
    // Discarded once the round is audited: no later role finds it.
    expect(existsSync(path.join(root, '.harness/outputs/claim-1.txt'))).toBe(false);
  });

  it("an external executor gets the request, the contract and the audited state, and the run's variables", async () => {
    const seen: EpisodeInput[] = [];
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT], 'Write report.md now.'), decide('blocked', { reason: 'x' })],
      audit: [verdictOf('incomplete', 'clean', [{ check: 'report.md exists', observed: 'missing', verdict: 'fail' }])],
    });
    const run = await managedRun({
      backend,
      options: {
        agents: {
          executor: functionAgent((input) => {
            seen.push(input);
            return { status: 'done', output: 'did it' };
          }),
        },
      },
    });
    await run.run();
    expect(seen[0]?.cwd).toBe(run.workspace.root);
    expect(seen[0]?.env).toEqual({ HARNESS_RUN_ID: 'run-1', HARNESS_ROUND: '1', HARNESS_ROLE: 'execute' });
    expect(seen[0]?.prompt).toContain(run.init.task);
    expect(seen[0]?.prompt).toContain('Write report.md now.');
    expect(seen[0]?.prompt).toContain('[pending] report');
  });
});
