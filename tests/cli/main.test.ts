import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonResultLine } from '../../src/cli/json-lines.js';
import { openAIWire } from '../backend/support/wire-formats.js';
import { cli } from './support/cli-process.js';
import { helloAgent, startFakeOpenAI, type FakeAnswer, type FakeOpenAI } from './support/fake-openai.js';

const dirs: string[] = [];
let server: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'harness-cli-test-'));
  dirs.push(dir);
  return dir;
}

/** `run` flags that point the CLI at the fake server, with a workspace of the test's own. */
async function againstFake(
  agent: (body: Record<string, unknown>) => FakeAnswer = helloAgent(),
): Promise<{ flags: string[]; workspace: string }> {
  server = await startFakeOpenAI(agent);
  const workspace = path.join(await tempDir(), 'ws');
  return { flags: ['--base-url', server.baseURL, '--model', 'fake-model', '--workspace', workspace], workspace };
}

describe('horizon-harness run', () => {
  it('runs the pipeline against an OpenAI-compatible server, streams progress, prints the deliverable, exits 0', async () => {
    const { flags, workspace } = await againstFake();
    const { code, stdout, stderr } = await cli(['run', 'Write hello.md', ...flags]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('📋 plan (1 subtask)');
    expect(stdout).toContain('→ subtask-1: Write hello.md');
    expect(stdout).toContain('  💬 Writing hello.md.\n  🔧 write_to_file');
    expect(server!.requests.every((body) => body.stream === true)).toBe(true);
    expect(stdout).toContain('🔍 verification 1: passed');
    expect(stdout).toContain('■ succeeded');
    expect(stdout).toContain(`Workspace: ${workspace}`);
    expect(stdout).toMatch(/^Report: \d+ model calls/m);
    const file = /^ {2}(\/.+hello\.md)$/m.exec(stdout)?.[1];
    expect(file).toBe(path.join(workspace, 'hello.md'));
    expect(await readFile(file!, 'utf8')).toBe('# Hello\n');
    // No spinner and no control sequences when stdout is not a terminal.
    expect(stdout).not.toContain('\r');
    expect(stdout).not.toContain('\u001b');
  });

  it('--json prints only JSON lines: run-start first, run-finish last, then the result line', async () => {
    const { flags, workspace } = await againstFake();
    const { code, stdout, stderr } = await cli(['run', 'Write hello.md', '--json', ...flags]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    const events = lines.slice(0, -1);
    expect(events[0]).toMatchObject({ type: 'run-start', workspace });
    expect(events.at(-1)?.type).toBe('run-finish');
    expect(events.filter((e) => e.type === 'run-start' || e.type === 'run-finish')).toHaveLength(2);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['plan-created', 'tool-call', 'verify-finish']));
    const result = lines.at(-1) as unknown as JsonResultLine;
    expect(result).toMatchObject({
      type: 'result',
      exitCode: 0,
      result: { status: 'succeeded', workspace, deliverable: { files: ['hello.md'] } },
    });
  });

  it('--no-decomposition, --no-verification and --no-stream: no plan or verify call, no SSE; --attach copies every file given', async () => {
    const { flags, workspace } = await againstFake();
    const dir = await tempDir();
    await writeFile(path.join(dir, 'a.txt'), 'A');
    await writeFile(path.join(dir, 'b.txt'), 'B');
    const { code, stdout } = await cli([
      'run',
      'Write hello.md',
      '--no-decomposition',
      '--no-verification',
      '--no-stream',
      ...flags,
      '--attach',
      path.join(dir, 'a.txt'),
      '--attach',
      path.join(dir, 'b.txt'),
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('decomposition-off');
    expect(stdout).not.toContain('verification 1');
    expect(server!.requests.every((body) => Array.isArray(body.tools) && body.stream !== true)).toBe(true);
    expect(stdout).not.toContain('💬');
    expect(await readFile(path.join(workspace, 'attachments/a.txt'), 'utf8')).toBe('A');
    expect(await readFile(path.join(workspace, 'attachments/b.txt'), 'utf8')).toBe('B');
  });

  it('exits 3 and says the deliverable is not verified when no usable verdict comes, also in a fresh call', async () => {
    const agent = helloAgent();
    const { flags, workspace } = await againstFake((body) => {
      const system = String(((body.messages ?? []) as Array<{ content?: unknown }>)[0]?.content ?? '');
      const verifying = !(Array.isArray(body.tools) && body.tools.length) && !system.includes('"subtasks"');
      return verifying ? { text: ['Looks fine to me.'], finish: 'stop', usage: { input: 1, output: 1 } } : agent(body);
    });
    const { code, stdout } = await cli(['run', 'Write hello.md', ...flags]);
    expect(code).toBe(3);
    expect(stdout).toContain('🔍 verification 1: unverified (');
    expect(stdout).toContain('■ unverified: No usable verdict');
    expect(stdout).toContain('NOT VERIFIED');
    // The deliverable is kept and shown.
    expect(stdout).toContain(path.join(workspace, 'hello.md'));
  });

  it('exits 1 when the run fails (the server rejects the key) and says why', async () => {
    const { flags } = await againstFake(() => openAIWire.authError());
    const { code, stdout } = await cli(['run', 'Write hello.md', ...flags], { env: { OPENAI_API_KEY: 'sk-wrong' } });
    expect(code).toBe(1);
    expect(stdout).toMatch(/■ failed: .+/);
    expect(server!.requests.length).toBeGreaterThan(0);
  });

  it('without a flag, takes the key, base URL and model from the environment as the demo does', async () => {
    server = await startFakeOpenAI(helloAgent());
    const env = { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: server.baseURL, HARNESS_MODEL: 'env-model' };
    const { code } = await cli(['run', 'Write hello.md', '--no-verification', '--workspace', await tempDir()], { env });
    expect(code).toBe(0);
    expect(server.requests[0]?.model).toBe('env-model');
  });

  it('--api-key-env reads the key from the named variable', async () => {
    const { flags } = await againstFake(() => openAIWire.authError());
    const { code } = await cli(['run', 'x', '--api-key-env', 'MY_KEY', ...flags], { env: { MY_KEY: 'sk-mine' } });
    expect(code).toBe(1);
    expect(server!.requests).toHaveLength(1);
  });

  it('draws a spinner only on a terminal, and never prints control characters the model sent', async () => {
    const { flags } = await againstFake(helloAgent('Done \u001b]0;pwned\u0007 \u001b[2J.'));
    const { code, stdout } = await cli(['run', 'Write hello.md', '--no-verification', ...flags], { tty: true });
    expect(code).toBe(0);
    expect(stdout).toContain('\r\u001b[2K⠋ waiting for fake-model (plan)');
    const withoutSpinner = stdout.replaceAll('\r\u001b[2K', '');
    expect(withoutSpinner).not.toContain('\u001b');
    expect(withoutSpinner).toContain('Done �]0;pwned� �[2J.');
  });
});

describe('bidirectional controls from the model never reach the terminal raw', () => {
  const BIDI = [
    '\u202a',
    '\u202b',
    '\u202c',
    '\u202d',
    '\u202e',
    '\u2066',
    '\u2067',
    '\u2068',
    '\u2069',
    '\u200e',
    '\u200f',
    '\u061c',
  ];
  const answer = `Saved as invoice\u202egpj.exe and ${BIDI.join('|')}`;
  const anyBidi = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

  it('the progress output shows each as �', async () => {
    const { flags } = await againstFake(helloAgent(answer));
    const { code, stdout } = await cli(['run', 'Write hello.md', '--no-verification', ...flags]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(anyBidi);
    expect(stdout).toContain('Saved as invoice�gpj.exe');
  });

  it('--json writes them as \\u escapes: no raw control, the same value once parsed', async () => {
    const { flags } = await againstFake(helloAgent(answer));
    const { code, stdout } = await cli(['run', 'Write hello.md', '--no-verification', '--json', ...flags]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(anyBidi);
    expect(stdout).toContain('invoice\\u202egpj.exe');
    const last = JSON.parse(stdout.trimEnd().split('\n').at(-1) as string) as JsonResultLine;
    expect(last.result.deliverable.answer).toBe(answer);
  });
});

describe('usage errors exit 2 with a message on stderr and nothing on stdout', () => {
  const base = ['--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'];
  it.each([
    ['no command', [], {}, /Usage: horizon-harness/],
    ['an unknown command', ['frobnicate'], {}, /unknown command 'frobnicate'/],
    ['a missing task', ['run', ...base], {}, /missing required argument 'task'/],
    ['an empty task', ['run', '  ', ...base], {}, /The task is empty/],
    ['an unknown option', ['run', 'x', '--bogus', ...base], {}, /unknown option '--bogus'/],
    [
      '--anthropic with --base-url',
      ['run', 'x', '--anthropic', '--base-url', 'http://127.0.0.1:9/v1'],
      { ANTHROPIC_API_KEY: 'k' },
      /cannot be used with/,
    ],
    ['no key anywhere', ['run', 'x'], {}, /No model configured.*OPENAI_API_KEY.*ANTHROPIC_API_KEY/],
    [
      '--anthropic without its key',
      ['run', 'x', '--anthropic'],
      { OPENAI_API_KEY: 'k' },
      /--anthropic needs an API key: set ANTHROPIC_API_KEY/,
    ],
    [
      '--api-key-env naming an empty variable',
      ['run', 'x', '--api-key-env', 'NOPE', ...base],
      {},
      /NOPE.*empty or unset/,
    ],
    ['--base-url without a model', ['run', 'x', '--base-url', 'http://127.0.0.1:9/v1'], {}, /--base-url needs a model/],
    ['a base URL that is not http(s)', ['run', 'x', '--base-url', 'ftp://example.com', '--model', 'm'], {}, /baseURL/],
  ])('%s', async (_name, argv, env, message) => {
    const { code, stdout, stderr } = await cli(argv, { env });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
  });

  it('a missing attachment, before any model call', async () => {
    const { flags } = await againstFake();
    const { code, stdout, stderr } = await cli(['run', 'x', ...flags, '--attach', '/nonexistent/brief.pdf']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Attachment not found or not a file: /nonexistent/brief.pdf');
    expect(server!.requests).toHaveLength(0);
  });
});

describe('help', () => {
  it('--help exits 0 and lists both commands', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/run \[options\] <task>/);
    expect(stdout).toMatch(/replay \[options\]/);
  });

  it('docs/cli.md documents every option of every command', async () => {
    const docs = await readFile(path.resolve(import.meta.dirname, '../../docs/cli.md'), 'utf8');
    for (const command of ['run', 'replay']) {
      const { code, stdout } = await cli([command, '--help']);
      expect(code).toBe(0);
      const flags = [...stdout.matchAll(/^ {2}(--[\w-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help');
      expect(flags.length).toBeGreaterThan(1);
      for (const flag of flags) expect(docs, `${command} ${flag}`).toContain(`\`${flag}`);
    }
  });
});

describe('horizon-harness replay', () => {
  it('runs the offline demo, repairs the forgotten section and exits 0', async () => {
    const workspace = await tempDir();
    const { code, stdout, stderr } = await cli(['replay', '--workspace', workspace]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('verification 1: failed');
    expect(stdout).toContain('repair 1');
    expect(stdout).toContain('■ succeeded');
    const itinerary = await readFile(path.join(workspace, 'itinerary.md'), 'utf8');
    for (const heading of ['Day by day', 'Budget', 'Packing list']) expect(itinerary).toContain(`## ${heading}`);
  });

  it('--json keeps stdout to JSON lines and keeps the workspace', async () => {
    const workspace = await tempDir();
    const { code, stdout } = await cli(['replay', '--json', '--workspace', workspace]);
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]?.type).toBe('run-start');
    expect(lines.at(-2)?.type).toBe('run-finish');
    expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 0 });
    expect(existsSync(path.join(workspace, 'itinerary.md'))).toBe(true);
  });
});
