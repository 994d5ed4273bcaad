import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../src/tools/registry.js';
import {
  callOf,
  EVERYTHING_BIN,
  isAlive,
  markerLines,
  open,
  TEST_SERVER,
  tempDir,
  toolContext,
  trackPid,
  waitFor,
} from './helpers.js';

/** server-everything started through `sh -c 'echo $$ > pidfile; exec …'`, so the test knows the server's own pid. */
async function everythingWithPidFile() {
  const dir = await tempDir();
  const pidFile = path.join(dir, 'pid');
  const set = await open({ command: '/bin/sh', args: ['-c', `echo $$ > '${pidFile}'; exec '${EVERYTHING_BIN}'`] });
  const readPid = async () => Number((await readFile(pidFile, 'utf8')).trim());
  return { set, registry: new ToolRegistry([...set.tools]), readPid };
}

describe('MCP transport failures become error observations', () => {
  it('a server killed mid-call: error observation naming the server and its exit, one restart, then errors', async () => {
    const { registry, readPid } = await everythingWithPidFile();
    const first = await readPid();
    trackPid(first);

    // Killed while a long operation runs: the call answers with an error the model can read; nothing throws.
    const running = registry.invoke(
      callOf('trigger-long-running-operation', { duration: 60, steps: 2 }),
      toolContext(),
    );
    process.kill(first, 'SIGKILL');
    const crashed = await running;
    expect(crashed.isError).toBe(true);
    expect(crashed.text).toContain(
      'MCP server "mcp-servers/everything" stopped during the call to "trigger-long-running-operation"',
    );
    expect(crashed.text).toContain('was killed by SIGKILL');
    expect(crashed.text).toContain('It is started again on the next call.');

    // The next call starts the server again (a new process) and works.
    const after = await registry.invoke(callOf('echo', { message: 'back again' }), toolContext());
    expect(after.isError).toBe(false);
    expect(after.text).toContain('back again');
    const second = await readPid();
    trackPid(second);
    expect(second).not.toBe(first);

    // Killed again: not restarted a second time. The call that notices the crash says so, and every later call says
    // why the server is unavailable; no process is started.
    process.kill(second, 'SIGKILL');
    await waitFor(() => (isAlive(second) ? undefined : true));
    const noticed = await registry.invoke(callOf('echo', { message: 'x' }), toolContext());
    expect(noticed.isError).toBe(true);
    expect(noticed.text).toContain('was killed by SIGKILL');
    expect(noticed.text).toContain('not started again');
    const gone = await registry.invoke(callOf('echo', { message: 'x' }), toolContext());
    expect(gone.text).toMatch(
      /MCP server "mcp-servers\/everything" is not available, so it cannot run "echo": it was killed by SIGKILL/,
    );
    expect(gone.text).toContain('It was restarted once already and is not started again. Use other tools.');
    expect(await readPid()).toBe(second);
  });

  it('a crash names the exit code and the end of the server stderr', async () => {
    const set = await open({ command: process.execPath, args: [TEST_SERVER] });
    const result = await new ToolRegistry([...set.tools]).invoke(callOf('crash'), toolContext());
    expect(result.isError).toBe(true);
    expect(result.text).toContain('MCP server "test-server" stopped during the call to "crash": it exited with code 3');
    expect(result.text).toContain('fatal: simulated crash in the test server');
  });

  it('abort cancels the in-flight MCP request on the server', async () => {
    const marker = path.join(await tempDir(), 'marker');
    const set = await open({ command: process.execPath, args: [TEST_SERVER], env: { MARKER_FILE: marker } });
    const controller = new AbortController();
    const call = new ToolRegistry([...set.tools]).invoke(callOf('wait'), toolContext(controller.signal));
    await waitFor(async () => ((await markerLines(marker)).includes('started') ? true : undefined));
    controller.abort();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(result.text).toContain('was stopped');
    // The server saw notifications/cancelled for that request and stopped its handler.
    await waitFor(async () => ((await markerLines(marker)).includes('cancelled') ? true : undefined));
  });

  it('the timeout option cancels the call on the server and says so', async () => {
    const marker = path.join(await tempDir(), 'marker');
    const set = await open(
      { command: process.execPath, args: [TEST_SERVER], env: { MARKER_FILE: marker } },
      { timeoutMs: 300 },
    );
    // The registry's own timeout is a later backstop, so the MCP request's timeout answers first.
    expect(set.tools.find((tool) => tool.name === 'wait')?.timeoutMs).toBe(1_300);
    const result = await new ToolRegistry([...set.tools]).invoke(callOf('wait'), toolContext());
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      'MCP server "test-server" did not finish the call to "wait" within 300 ms; the request was cancelled.',
    );
    await waitFor(async () => ((await markerLines(marker)).includes('cancelled') ? true : undefined));
  });

  it('close() stops the server process, and the tools then answer with an error', async () => {
    const marker = path.join(await tempDir(), 'marker');
    const set = await open({ command: process.execPath, args: [TEST_SERVER], env: { MARKER_FILE: marker } });
    const pidLine = await waitFor(async () => (await markerLines(marker)).find((line) => line.startsWith('pid ')));
    const pid = Number(pidLine.slice(4));
    trackPid(pid);
    expect(isAlive(pid)).toBe(true);
    await set.close();
    expect(isAlive(pid)).toBe(false);
    const result = await new ToolRegistry([...set.tools]).invoke(callOf('wait'), toolContext());
    expect(result.isError).toBe(true);
    expect(result.text).toContain('its tool set was closed');
  });
});
