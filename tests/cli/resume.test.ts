import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonResultLine } from '../../src/cli/json-lines.js';
import { readEventLog } from '../../src/event-log/read.js';
import { isDeltaEvent, type HarnessEvent } from '../../src/events.js';
import { tempDir } from '../harness/helpers.js';
import { cli, spawnCli } from './support/cli-process.js';
import { helloAgent, startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';

let server: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const logOf = (workspace: string) => path.join(workspace, '.harness', 'events.jsonl');

/** The verifier's request: no tools, and not the planner's prompt. */
function isVerify(body: Record<string, unknown>): boolean {
  const system = String(((body.messages ?? []) as Array<{ content?: unknown }>)[0]?.content ?? '');
  return !(Array.isArray(body.tools) && body.tools.length > 0) && !system.includes('"subtasks"');
}

describe('horizon-harness resume', () => {
  it('finishes a CLI run whose process was killed mid-run, with its backend and switches; the event log is whole', async () => {
    let crashing = true;
    const agent = helloAgent();
    // Until the crash, the verifier's call never gets an answer: the run is held right there.
    server = await startFakeOpenAI((body) => (crashing && isVerify(body) ? 'stall' : agent(body)));
    const workspace = path.join(await tempDir(), 'ws');
    const secret = 'sk-test-abcdefghijklmnopqrstuvwxyz012345';
    const child = spawnCli(
      [
        'run',
        'Write hello.md',
        '--base-url',
        server.baseURL,
        '--model',
        'fake-model',
        '--workspace',
        workspace,
        '--json',
      ],
      // The snapshot key file where this process (the resume) finds it too.
      {
        PATH: process.env.PATH ?? '',
        OPENAI_API_KEY: secret,
        HORIZON_HARNESS_STATE_DIR: process.env.HORIZON_HARNESS_STATE_DIR ?? '',
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    // Killed (no chance to clean up) once its --json output shows the verifier's call going out.
    const printed: HarnessEvent[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      const event = JSON.parse(line) as HarnessEvent;
      printed.push(event);
      if (event.type === 'llm-request' && event.purpose === 'verify') break;
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const record = await readFile(path.join(workspace, '.harness', 'cli.json'), 'utf8');
    expect(record).not.toContain(secret);
    expect(JSON.parse(record)).toMatchObject({
      backend: { kind: 'openai-compatible', baseURL: server.baseURL, model: 'fake-model', apiKeyEnv: 'OPENAI_API_KEY' },
      decomposition: true,
      verification: true,
    });

    crashing = false;
    const resumed = await cli(['resume', workspace, '--json'], { env: { OPENAI_API_KEY: secret } });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const result = JSON.parse(resumed.stdout.trimEnd().split('\n').at(-1) as string) as JsonResultLine;
    expect(result.result.status).toBe('succeeded');
    expect(result.result.report.resumes.count).toBe(1);
    expect(await readFile(path.join(workspace, 'hello.md'), 'utf8')).toBe('# Hello\n');
    // The resumed calls went to the same server with the same key.
    expect(server.requests.at(-1)).toMatchObject({ model: 'fake-model' });

    const logged = await readEventLog(logOf(workspace));
    const resume = logged.findIndex((event) => event.type === 'run-resume');
    expect(resume).toBeGreaterThan(0);
    // Before the crash: what the killed process printed (deltas aside), in order, from run-start past the subtask.
    const before = logged.slice(0, resume);
    expect(before).toEqual(printed.filter((event) => !isDeltaEvent(event)).slice(0, before.length));
    expect(before.map((event) => event.type)).toContain('subtask-finish');
    // After it: the resumed run to its end.
    const after = logged.slice(resume).map((event) => event.type);
    expect(after).toContain('verify-finish');
    expect(logged.filter((event) => event.type === 'run-finish')).toHaveLength(1);
    expect(logged.at(-1)).toMatchObject({ type: 'run-finish', result: { status: 'succeeded' } });
  }, 120_000); // a child process that loads the sources through tsx: slow to start on a busy machine

  it('ends replay and resume with where the event log is and the show command; --json prints nothing more', async () => {
    const workspace = path.join(await tempDir(), 'my ws');
    const replay = await cli(['replay', '--workspace', workspace]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain(`Event log: ${logOf(workspace)}\n`);
    expect(replay.stdout).toContain(`Look at the run: npx horizon-harness show '${workspace}'\n`);
    expect((await readEventLog(logOf(workspace))).at(-1)?.type).toBe('run-finish');

    // A finished run: its saved result, reported again.
    const again = await cli(['resume', workspace, '--json']);
    expect(again.code).toBe(0);
    const lines = again.stdout.trimEnd().split('\n');
    expect(lines.every((line) => JSON.parse(line))).toBeTruthy();
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ type: 'result', result: { status: 'succeeded' } });
  });

  it('refuses a run record changed after the CLI wrote it: its backend says where the key goes', async () => {
    const workspace = path.join(await tempDir(), 'ws');
    expect((await cli(['replay', '--workspace', workspace, '--json'])).code).toBe(0);
    const file = path.join(workspace, '.harness', 'cli.json');
    const record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    const forged = {
      ...record,
      backend: {
        kind: 'openai-compatible',
        baseURL: 'http://127.0.0.1:9/v1',
        model: 'm',
        apiKeyEnv: 'OPENAI_API_KEY',
        stream: false,
      },
    };
    await writeFile(file, JSON.stringify(forged));
    const { code, stdout, stderr } = await cli(['resume', workspace], { env: { OPENAI_API_KEY: 'sk-test-secret' } });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('was changed since the CLI wrote it');
  });

  it('refuses to go on with other tools than the run had, naming them', async () => {
    const workspace = path.join(await tempDir(), 'ws');
    // With SERPER_API_KEY the run has web search; without it at resume, the tools differ.
    expect((await cli(['replay', '--workspace', workspace, '--json'], { env: { SERPER_API_KEY: 'k' } })).code).toBe(0);
    const { code, stderr } = await cli(['resume', workspace]);
    expect(code).toBe(2);
    expect(stderr).toContain('it had search, google_scholar, missing now');
  });

  it('is a usage error, saying why, for a directory no CLI run was started in', async () => {
    const dir = await tempDir();
    const { code, stderr } = await cli(['resume', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain(`No CLI run to resume in "${dir}"`);
    const missing = await cli(['resume', path.join(dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('is not a directory');
  });
});
