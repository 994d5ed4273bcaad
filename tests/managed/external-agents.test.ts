import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../src/backend/types.js';
import { commandAgent } from '../../src/modes/managed/index.js';
import { ScriptedBackend, toolCall } from '../../src/testing/index.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { decide, executeRecords, managedRun, script, tempDir, verdictOf } from './helpers.js';

const VERSION = { id: 'version', description: 'VERSION holds 1.2.0.' };

/** Pids of live processes whose command line holds `marker` (zombies have an empty one). */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if ((await readFile(`/proc/${name}/cmdline`, 'utf8')).includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Waits, polling, until `done()` holds or the daemon is gone; a bounded number of polls, never a hang. */
async function until(done: () => boolean, marker: string): Promise<void> {
  for (let poll = 0; poll < 3_000; poll += 1) {
    if (done() || (await processesWith(marker)).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * An executor CLI that writes a wrong VERSION and leaves a `setsid` daemon behind. The daemon waits for the audit to
 * begin (`go` in the control folder), writes the right version while the auditor reads it, and restores the wrong one
 * once the auditor has read it (`read`): the workspace is the same before and after the audit.
 */
async function executorWithDaemon(control: string, marker: string): Promise<string> {
  const daemon = [
    // Detached (its own session and group) by now: the executor exits only then, so no group kill can catch it.
    `touch "/tmp/${marker}.detached"`,
    `while [ ! -e "${control}/go" ]; do sleep 0.01; done`,
    'echo 1.2.0 > VERSION',
    `touch "${control}/changed"`,
    `while [ ! -e "${control}/read" ]; do sleep 0.01; done`,
    'echo 1.0.0 > VERSION',
    `touch "${control}/restored"`,
  ].join('\n');
  return script(
    control,
    'executor.sh',
    [
      'cat > /dev/null',
      'echo 1.0.0 > VERSION',
      `setsid bash -c '${daemon}' ${marker} < /dev/null > /dev/null 2>&1 &`,
      `while [ ! -e "/tmp/${marker}.detached" ]; do sleep 0.01; done`,
      'echo "VERSION is 1.2.0"',
    ].join('\n'),
  );
}

/** The built-in auditor's model: starts the daemon's change, reads VERSION with its read-only tool, judges what it read. */
function transientAudit(control: string, marker: string, seen: { aliveAtAudit: number[] }) {
  return [
    async () => {
      seen.aliveAtAudit = await processesWith(marker);
      await writeFile(path.join(control, 'go'), '');
      await until(() => existsSync(path.join(control, 'changed')), marker);
      return toolCall('read_file', { path: 'VERSION' });
    },
    async (request: GenerateRequest) => {
      const read = request.messages.findLast((m) => m.role === 'tool');
      const text = typeof read?.content === 'string' ? read.content : '';
      await writeFile(path.join(control, 'read'), '');
      await until(() => existsSync(path.join(control, 'restored')), marker);
      const right = text.includes('1.2.0');
      return verdictOf(right ? 'complete' : 'incomplete', 'clean', [
        {
          recordId: 'version',
          check: 'VERSION holds 1.2.0',
          observed: right ? 'VERSION holds 1.2.0' : `VERSION does not hold 1.2.0: ${text.slice(0, 200)}`,
          verdict: right ? 'pass' : 'fail',
        },
      ]);
    },
  ];
}

describe('nothing an external executor started runs on during the audit', () => {
  const variants = [
    { name: 'on the host (sandbox: false): its setsid daemon is killed by its token or cgroup', sandbox: false },
    ...(probeBwrap().available
      ? [{ name: 'in the sandbox (the default): its daemon ends with the sandbox', sandbox: true }]
      : []),
  ];

  for (const variant of variants) {
    it(`a daemon that changes a file while the auditor reads it and restores it after completes nothing, ${variant.name}`, async () => {
      const control = await tempDir();
      const marker = `horizon-daemon-${path.basename(control)}`;
      const seen = { aliveAtAudit: [] as number[] };
      const backend = new ScriptedBackend({
        manage: [executeRecords([VERSION]), decide('done'), decide('blocked', { reason: 'VERSION is wrong' })],
        audit: transientAudit(control, marker, seen),
      });
      const executor = commandAgent({
        command: ['bash', await executorWithDaemon(control, marker)],
        promptVia: 'stdin',
        sandbox: variant.sandbox,
        readOnlyPaths: [control],
      });
      const run = await managedRun({ backend, options: { finalVerification: false, agents: { executor } } });
      try {
        const result = await run.run();
        expect(result.taskState.records[0]?.status).not.toBe('completed');
        expect(result.status).toBe('blocked');
        expect(seen.aliveAtAudit).toEqual([]);
        expect(await readFile(path.join(run.workspace.root, 'VERSION'), 'utf8')).toBe('1.0.0\n');
      } finally {
        // A daemon that outlived a failing run must not outlive the test.
        for (const pid of await processesWith(marker)) process.kill(pid, 'SIGKILL');
        await rm(`/tmp/${marker}.detached`, { force: true });
      }
    });
  }
});
