import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { tempDir, writeFile } from '../harness/helpers.js';
import { ADAPTERS } from './support/adapters.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';

const KEY = 'sk-CANARYrun0123456789abcdefABCDEF0123456789';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe.each(ADAPTERS)('a whole run through $name', ({ make, wire }) => {
  it.each([
    [401, 'authentication', /rejected the credentials \(HTTP 401\)/],
    [404, 'not-found', /found no such model or endpoint \(HTTP 404\)/],
  ])(
    'decomposition: false and HTTP %i: the backend is called exactly once and the run names that failure',
    async (status, code, message) => {
      server = await startLoopbackServer();
      const reply = {
        status,
        body: JSON.stringify({ error: { message: 'no such thing', type: 'invalid_request_error' } }),
      };
      server.reply(reply, reply, reply, reply, reply, reply);
      const harness = createHarness({
        backend: make(server.baseURL, { maxRetries: 3 }),
        decomposition: false,
        workspace: await tempDir(),
      });
      const errors: Array<Extract<HarnessEvent, { type: 'run-error' }>> = [];
      harness.on('run-error', (event) => errors.push(event));

      const result = await harness.run('Write a haiku.');

      expect(server.requests).toHaveLength(1);
      expect(result.status).toBe('failed');
      expect(result.error).toMatchObject({ code });
      expect(result.error?.message).toMatch(message);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ stage: 'execute', error: { code } });
      expect(errors[0]?.error.message).toMatch(message);
    },
  );

  it('a provider that echoes the key: no event, result, report or workspace file contains it', async () => {
    server = await startLoopbackServer();
    const page = {
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: `<html><body>Upstream refused key ${KEY}</body></html>`,
    };
    const write = wire.reply(
      {
        toolCalls: [{ id: 'call_w', name: 'write_file', args: ['{"path":"notes.md","content":"# Notes"}'] }],
        finish: 'tool-calls',
        usage: { input: 9, output: 9 },
      },
      false,
    );
    const echo = {
      status: 401,
      body: JSON.stringify({
        error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error' },
      }),
    };
    server.reply(page, write, echo, echo, echo, echo);
    const harness = createHarness({
      backend: make(server.baseURL, { apiKey: KEY, retry: { minTimeoutMs: 1, maxTimeoutMs: 2 } }),
      tools: [writeFile],
      decomposition: false,
      workspace: await tempDir(),
    });
    const events: string[] = [];
    harness.onAny((event) => events.push(JSON.stringify(event)));

    const result = await harness.run('Write a haiku.');

    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/Incorrect API key provided: \[REDACTED\]/);
    expect(events.some((event) => event.includes('"run-error"'))).toBe(true);
    const files = await filesUnder(result.workspace);
    expect(files.map((file) => path.basename(file))).toContain('notes.md');
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
    const sinks = [JSON.stringify(result.error), JSON.stringify(result.report), JSON.stringify(result), ...events];
    for (const file of files) sinks.push(await readFile(file, 'utf8'));
    for (const sink of sinks) expect(sink).not.toContain('CANARYrun0123456789');
  });
});

describe.each(ADAPTERS)('an unreachable backend through $name', ({ make }) => {
  it("fails the run after the adapter's quick retries, each reported as llm-retry, without retrying the subtask", async () => {
    // A port that was just listening and is now closed: connection refused, on loopback only.
    const closed = await startLoopbackServer();
    const baseURL = closed.baseURL;
    await closed.close();
    const harness = createHarness({ backend: make(baseURL), decomposition: false, workspace: await tempDir() });
    const retries: Array<Extract<HarnessEvent, { type: 'llm-retry' }>> = [];
    const attempts: number[] = [];
    harness.on('llm-retry', (event) => retries.push(event));
    harness.on('subtask-attempt', (event) => attempts.push(event.attempt));

    const result = await harness.run('Write a haiku.');

    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'connection' });
    expect(result.error?.message).toContain(baseURL);
    expect(attempts).toEqual([1]);
    expect(retries.map((event) => event.attempt)).toEqual([1, 2]);
    expect(retries.every((event) => event.purpose === 'execute' && event.error.code === 'connection')).toBe(true);
    // Fail fast: the waits the adapter announced add up to under a second.
    expect(retries.reduce((sum, event) => sum + event.delayMs, 0)).toBeLessThan(1_000);
  });
});
