/**
 * The sandbox's memory and /tmp limits, in real bubblewrap: a command or a Python cell that goes past one ends in a
 * `resource-limit` error naming the limit and the option that sets it; one that stays inside works as before.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeCommandTool } from '../../../src/tools/builtin/execute-command.js';
import { pythonInterpreterTool } from '../../../src/tools/builtin/python-interpreter.js';
import { probeBwrap, sandboxStatus, spawnInWorkspace } from '../../../src/tools/builtin/sandbox.js';
import { waitForProcess } from '../../../src/tools/builtin/execute-command.js';
import { OutputCapture } from '../../../src/tools/builtin/sandbox/output-capture.js';
import { limitHitMessage } from '../../../src/tools/builtin/sandbox/resource-limits.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';

const probe = probeBwrap();
const status = probe.available ? sandboxStatus('bwrap') : undefined;
const MiB = 1024 ** 2;
const approve = () => true;
const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

// Allocations that touch every page, so that a memory cgroup sees them as well as RLIMIT_AS does.
const PYTHON_400_MIB = "x = b'x' * (400 << 20)";
const BASH_400_MB = "v=$(head -c 400000000 /dev/zero | tr '\\0' x); echo ${#v}";

const memoryReason = !probe.available
  ? `bubblewrap is unusable here: ${probe.reason}`
  : status?.memoryLimit === 'none'
    ? 'neither a memory cgroup nor prlimit is available here, so the sandbox cannot limit memory'
    : `memory limited by ${status?.memoryLimit}`;
const tmpReason = !probe.available
  ? `bubblewrap is unusable here: ${probe.reason}`
  : status?.tmpLimit !== 'tmpfs-size'
    ? `${probe.path} cannot size a tmpfs (--size needs bubblewrap ≥ 0.7, not setuid)`
    : 'tmpfs size supported';

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(async () => {
  await t.dispose();
});

describe('limit options', () => {
  it('refuses a memory limit below 64 MiB and a /tmp cap below 1 MiB, and takes false', () => {
    expect(() => executeCommandTool({ sandbox: 'none', maxMemoryBytes: 1_000 })).toThrowError(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('maxMemoryBytes') }),
    );
    expect(() => pythonInterpreterTool({ sandbox: 'none', maxTmpBytes: 1_000 })).toThrowError(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('maxTmpBytes') }),
    );
    expect(() => executeCommandTool({ sandbox: 'none', maxMemoryBytes: false, maxTmpBytes: false })).not.toThrow();
  });
});

describe('telling a limit hit from a failure of the command itself', () => {
  const context = { tool: 'execute_command', factory: 'executeCommandTool', workspaceRoot: '/' };
  const rlimit = { memory: { kind: 'rlimit' as const, maxBytes: 256 * MiB } };

  it('under RLIMIT_AS an allocation failure in the output is the limit; without a limit it is not', async () => {
    expect(await limitHitMessage(rlimit, 0, 'Traceback …\nMemoryError', context)).toMatch(
      /ran out of memory under the sandbox's limit of 256 MiB of address space per process \(option maxMemoryBytes, enforced as RLIMIT_AS\)/,
    );
    expect(await limitHitMessage(rlimit, 0, 'bash: xrealloc: cannot allocate 536870912 bytes', context)).toBeDefined();
    expect(await limitHitMessage({}, 0, 'MemoryError', context)).toBeUndefined();
    expect(await limitHitMessage(rlimit, 0, 'ValueError: bad input', context)).toBeUndefined();
  });

  it('a memory cgroup counts OOM kills: none, no limit hit', async () => {
    const cgroup = { memory: { kind: 'cgroup' as const, maxBytes: 256 * MiB } };
    expect(await limitHitMessage(cgroup, 0, 'Killed', context)).toBeUndefined();
    expect(await limitHitMessage(cgroup, 2, '', context)).toMatch(/killed 2 processes of it/);
  });

  it('"No space left on device" is the /tmp cap only while the workspace disk has room', async () => {
    expect(
      await limitHitMessage({ tmpBytes: 8 * MiB }, 0, 'OSError: [Errno 28] No space left on device', context),
    ).toMatch(/each limited to 8 MiB \(option maxTmpBytes\)/);
    expect(await limitHitMessage({}, 0, 'No space left on device', context)).toBeUndefined();
  });
});

describe.skipIf(status?.memoryLimit === undefined || status.memoryLimit === 'none')(
  `memory limit (${memoryReason})`,
  () => {
    const memoryMessage =
      /went past the sandbox's memory limit of 128 MiB|ran out of memory under the sandbox's limit of 128 MiB/;

    it('execute_command: bash and Python allocating past the limit fail with resource-limit naming it', async () => {
      const shell = executeCommandTool({ sandbox: 'bwrap', approve, maxMemoryBytes: 128 * MiB });
      for (const command of [BASH_400_MB, `python3 -c "${PYTHON_400_MIB}"`]) {
        const error = await Promise.resolve(shell.execute({ command }, t.ctx)).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, command).toMatchObject({ code: 'resource-limit', message: expect.stringMatching(memoryMessage) });
        expect((error as Error).message).toMatch(
          /option maxMemoryBytes.*raise the option maxMemoryBytes of executeCommandTool/s,
        );
        // The command's own output follows, so the model sees what happened.
        expect((error as Error).message).toContain(`$ ${command}`);
      }
    });

    it('execute_command: a command within the limit runs as before', async () => {
      const shell = executeCommandTool({ sandbox: 'bwrap', approve, maxMemoryBytes: 128 * MiB });
      const output = textOf(
        await shell.execute({ command: `python3 -c "x = b'x' * (40 << 20); print(len(x))"` }, t.ctx),
      );
      expect(output).toContain('Exit code: 0');
      expect(output).toContain(String(40 * MiB));
    });

    it('python_interpreter: a cell allocating past the limit fails with resource-limit; the next cell runs', async () => {
      const python = pythonInterpreterTool({ sandbox: 'bwrap', maxMemoryBytes: 128 * MiB });
      await expect(python.execute({ code: PYTHON_400_MIB }, t.ctx)).rejects.toMatchObject({
        code: 'resource-limit',
        message: expect.stringMatching(/128 MiB \(option maxMemoryBytes.*maxMemoryBytes of pythonInterpreterTool/s),
      });
      expect(textOf(await python.execute({ code: 'sum(range(10))' }, t.ctx))).toContain('45');
    });

    it('without a memory cgroup, RLIMIT_AS bounds each process and Python gets a MemoryError', async () => {
      const proc = spawnInWorkspace('python3', ['-c', PYTHON_400_MIB], {
        workspaceRoot: t.workspace.root,
        sandbox: { ...(status as NonNullable<typeof status>), memoryLimit: 'rlimit' },
        allowNetwork: false,
        maxMemoryBytes: 128 * MiB,
      });
      const stderr = new OutputCapture(10_000);
      proc.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
      const outcome = await waitForProcess(proc, 60_000, t.abort.signal);
      expect(proc.limits.memory).toEqual({ kind: 'rlimit', maxBytes: 128 * MiB });
      expect(outcome.exitCode).toBe(1);
      expect(stderr.toString()).toContain('MemoryError');
    });
  },
);

describe.skipIf(status?.tmpLimit !== 'tmpfs-size')(`/tmp size limit (${tmpReason})`, () => {
  const tmpMessage = /out of space in the sandbox's \/tmp or \/dev\/shm, each limited to 2 MiB \(option maxTmpBytes\)/;

  it('execute_command: writing past the cap into /tmp or /dev/shm fails with resource-limit naming it', async () => {
    const shell = executeCommandTool({ sandbox: 'bwrap', approve, maxTmpBytes: 2 * MiB });
    for (const target of ['/tmp/big', '/dev/shm/big']) {
      await expect(
        shell.execute({ command: `head -c ${3 * MiB} /dev/zero > ${target}` }, t.ctx),
        target,
      ).rejects.toMatchObject({
        code: 'resource-limit',
        message: expect.stringMatching(tmpMessage),
      });
    }
    // Within the cap it works; the rest of /dev is read-only.
    expect(
      textOf(await shell.execute({ command: `head -c ${MiB} /dev/zero > /tmp/ok && echo fine` }, t.ctx)),
    ).toContain('fine');
    expect(textOf(await shell.execute({ command: 'echo x > /dev/planted' }, t.ctx))).toMatch(/Read-only file system/);
  });

  it('python_interpreter: writing past the cap into /tmp fails with resource-limit naming it', async () => {
    const python = pythonInterpreterTool({ sandbox: 'bwrap', maxTmpBytes: 2 * MiB });
    await expect(
      python.execute({ code: `open('/tmp/big', 'wb').write(b'x' * ${3 * MiB})` }, t.ctx),
    ).rejects.toMatchObject({
      code: 'resource-limit',
      message: expect.stringMatching(/each limited to 2 MiB \(option maxTmpBytes\).*of pythonInterpreterTool/s),
    });
  });

  it('by default /tmp and /dev/shm hold 1 GiB each, not half the host memory', async () => {
    const shell = executeCommandTool({ sandbox: 'bwrap', approve });
    const output = textOf(await shell.execute({ command: "stat -f -c '%b %S' /tmp /dev/shm" }, t.ctx));
    const sizes = [...output.matchAll(/^(\d+) (\d+)$/gm)].map(([, blocks, size]) => Number(blocks) * Number(size));
    expect(sizes).toEqual([1024 ** 3, 1024 ** 3]);
  });
});
