import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import type { ToolCall } from '../../src/backend/types.js';
import { type McpServer, type McpToolSet, type McpToolsOptions, mcpTools } from '../../src/mcp/index.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import type { ToolContext } from '../../src/tools/types.js';
import { stubWorkspace } from '../executor/stub-workspace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The real servers from npm, as a user starts them. */
export const EVERYTHING_BIN = path.join(ROOT, 'node_modules/.bin/mcp-server-everything');
export const FILESYSTEM_BIN = path.join(ROOT, 'node_modules/.bin/mcp-server-filesystem');
/** The small SDK server of this folder (listChanged, cancellation, crash). */
export const TEST_SERVER = fileURLToPath(new URL('./servers/test-server.mjs', import.meta.url));

const sets: McpToolSet[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];
const pids: number[] = [];

/** `mcpTools` whose set is closed after the test. */
export async function open(server: McpServer, options?: McpToolsOptions): Promise<McpToolSet> {
  const set = await mcpTools(server, options);
  sets.push(set);
  return set;
}

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-test-'));
  dirs.push(dir);
  return dir;
}

/** A process started by a test, stopped after it. */
export function startProcess(command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return child;
}

/** Remembers a server pid the test learnt, so that the cleanup can check the process is gone. */
export function trackPid(pid: number): void {
  pids.push(pid);
}

afterEach(async () => {
  await Promise.all(sets.splice(0).map((set) => set.close()));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  const alive = pids.splice(0).filter(isAlive);
  for (const pid of alive) process.kill(pid, 'SIGKILL');
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  // A server left running by the code under test is a failure, not just a leak.
  if (alive.length > 0) throw new Error(`MCP server processes were left running: ${alive.join(', ')}`);
});

/** True while a process of that pid exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !/\) Z /.test(readStat(pid));
}

function readStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

/** A context for calling tools through a registry outside a run. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  const backend = new ScriptedBackend([]);
  return {
    runId: 'run-mcp',
    context: undefined,
    purpose: 'execute',
    scope: 'subtask-1',
    workspace: stubWorkspace(tmpdir()),
    signal,
    backendFor: () => backend,
    generate: (role, request) => backend.generate({ ...request, purpose: role }),
    onScopeEnd: () => undefined,
  };
}

let callIds = 0;
/** A tool call as a model sends it. */
export function callOf(name: string, args: unknown = {}): ToolCall {
  callIds += 1;
  return { id: `call-${callIds}`, name, arguments: JSON.stringify(args) };
}

/** Polls `read` until it returns a value (the test's own timeout bounds the wait). */
export async function waitFor<T>(read: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The lines of a marker file, or [] before it exists. */
export async function markerLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

/** A loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
