import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openAICompatible } from '../../src/backend/openai-compatible.js';
import { main, type CliIo } from '../../src/cli/main.js';
import { createHarness, type HarnessEvent } from '../../src/index.js';
import { instrument } from '../../src/otel/index.js';
import { ScriptedBackend, submit, toolCall } from '../../src/testing/index.js';
import { executeCommandTool } from '../../src/tools/builtin/execute-command.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { startLoopbackServer, type LoopbackServer } from '../backend/support/loopback-server.js';
import { openAIWire } from '../backend/support/wire-formats.js';
import { helloAgent, startFakeOpenAI, type FakeOpenAI } from '../cli/support/fake-openai.js';
import { tempDir } from '../harness/helpers.js';
import { everyRecordedText, inMemoryTracing } from '../otel/helpers.js';

/**
 * Secrets a host typically has in its environment, under names that a redaction by variable name misses. For each,
 * the parts that must never appear in anything the harness emits.
 */
const ENV_CANARIES: Record<string, { value: string; parts: string[] }> = {
  PGPASS: { value: 'pg-CANARY-7f3a9c21e5', parts: ['CANARY-7f3a9c21e5'] },
  DB_PASS: { value: 'db-CANARY-b81e4d07aa', parts: ['CANARY-b81e4d07aa'] },
  GITHUB_PAT: {
    value: 'github_pat_11CANARY0123456789_abcdefghijklmnopqrstuvwxyzABCDEF',
    parts: ['11CANARY0123456789_abcdefghij'],
  },
  SENTRY_DSN: {
    value: 'https://CANARYsentry0123456789abcdef@o123456.ingest.sentry.io/4507',
    parts: ['CANARYsentry0123456789abcdef'],
  },
  DATABASE_URL: { value: 'postgres://app:CANARYdbpassword42@db.internal:5432/app', parts: ['CANARYdbpassword42'] },
  REDIS_URL: { value: 'redis://:CANARYredispass77@cache.internal:6379/0', parts: ['CANARYredispass77'] },
};
/** Passed on to commands through `passEnv`; its name says nothing about it being a secret. */
const PASSED_ON = { name: 'MY_SETTING', value: 'opaque-CANARY-passed-0042' };
/** Known only to instrument's `secrets` option. */
const OTEL_ONLY = 'otel-CANARY-given-9911';

const ALL_VALUES = [...Object.values(ENV_CANARIES).map((c) => c.value), PASSED_ON.value];
const FORBIDDEN = [...Object.values(ENV_CANARIES).flatMap((c) => [c.value, ...c.parts]), PASSED_ON.value];

function expectNone(sink: string, forbidden: readonly string[], where: string): void {
  for (const secret of forbidden) expect(sink, `${where} holds ${secret}`).not.toContain(secret);
}

beforeEach(() => {
  for (const [name, { value }] of Object.entries(ENV_CANARIES)) vi.stubEnv(name, value);
  vi.stubEnv(PASSED_ON.name, PASSED_ON.value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('secrets in tool output and in the environment never leave the process', () => {
  it('events, spans (with content capture) and the finished run carry none of them', async () => {
    const leaked = `${ALL_VALUES.join(' ')} ${OTEL_ONLY}`;
    const backend = new ScriptedBackend({
      execute: [
        toolCall('execute_command', { command: 'printenv' }),
        toolCall('write_to_file', { path: 'notes.md', content: `Environment:\n${leaked}` }),
        submit(`The environment holds ${leaked}`, ['notes.md']),
      ],
    });
    const workspace = await tempDir();
    const harness = createHarness({
      backend,
      tools: [
        executeCommandTool({
          sandbox: 'none',
          approve: () => true,
          passEnv: [...Object.keys(ENV_CANARIES), PASSED_ON.name],
        }),
        writeToFileTool(),
      ],
      decomposition: false,
      verification: false,
      workspace,
    });
    const { tracer, spans } = inMemoryTracing();
    const stop = await instrument(harness, { tracer, captureContent: true, secrets: [OTEL_ONLY] });
    const events: HarnessEvent[] = [];
    harness.onAny((event) => events.push(event));

    const result = await harness.run('List the environment into notes.md.');
    stop();

    expect(result.status).toBe('succeeded');
    // The secrets were really there: the command printed them and the file holds them.
    const written = await readFile(path.join(workspace, 'notes.md'), 'utf8');
    for (const value of ALL_VALUES) expect(written).toContain(value);

    expectNone(events.map((event) => JSON.stringify(event)).join('\n'), FORBIDDEN, 'the events');
    const recorded = everyRecordedText(spans());
    expectNone(recorded, [...FORBIDDEN, OTEL_ONLY], 'the spans');
    expect(recorded).toContain('[REDACTED]');
    // Tool results are never recorded on spans, only their size.
    expect(recorded).not.toContain('--- stdout ---');
    expect(recorded).toMatch(/tool result not recorded: \d+ characters/);
  });

  it('a reply quoting the backend key is redacted from events, also under a name that says nothing', async () => {
    const server: LoopbackServer = await startLoopbackServer();
    try {
      const key = 'opaque-llm-credential-5cd1e0a7b9f2';
      const reply = (text: string) =>
        openAIWire.reply({ text: [text], finish: 'stop', usage: { input: 1, output: 1 } }, false);
      server.reply(reply(`My key is ${key}, and its tail is ${key.slice(-14)}.`));
      const harness = createHarness({
        backend: openAICompatible({ baseURL: `${server.baseURL}/v1`, apiKey: key, model: 'm' }),
        decomposition: false,
        verification: false,
        workspace: await tempDir(),
      });
      const events: string[] = [];
      harness.onAny((event) => events.push(JSON.stringify(event)));
      await harness.run('Say your key.');
      const emitted = events.join('\n');
      expect(emitted).toContain('[REDACTED]');
      expectNone(emitted, [key, key.slice(-14)], 'the events');
    } finally {
      await server.close();
    }
  });
});

describe('the CLI prints no secret', () => {
  let server: FakeOpenAI | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('--json event lines and the result line hold none of the environment secrets or the API key', async () => {
    const key = 'opaque-cli-credential-77e0c3b5a1d9';
    server = await startFakeOpenAI(helloAgent(`Done. Seen: ${ALL_VALUES.join(' ')} and ${key}`));
    let stdout = '';
    let stderr = '';
    const env: Record<string, string> = { MY_LLM: key };
    for (const [name, { value }] of Object.entries(ENV_CANARIES)) env[name] = value;
    const io: CliIo = {
      stdout: { write: (text: string) => (stdout += text), isTTY: false },
      stderr: { write: (text: string) => (stderr += text) },
      env,
    };
    const workspace = path.join(await tempDir(), 'ws');
    const argv = ['run', 'Write hello.md', '--json', '--base-url', server.baseURL, '--model', 'fake-model'];
    const code = await main([...argv, '--api-key-env', 'MY_LLM', '--workspace', workspace], io);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(() => lines.map((line) => JSON.parse(line) as unknown)).not.toThrow();
    expect(stdout).toContain('[REDACTED]');
    const forbidden = [...Object.values(ENV_CANARIES).flatMap((c) => [c.value, ...c.parts]), key];
    expectNone(stdout, forbidden, 'stdout');
    expectNone(stderr, forbidden, 'stderr');
  });
});
