import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { groupRuns } from '../../src/util/process-group.js';

describe('groupRuns', () => {
  it.runIf(process.platform === 'linux')('is true while a member runs, false once every member is dead', async () => {
    // A group leader that starts a second member and waits; killing the group leaves nothing running.
    const child = spawn('bash', ['-c', 'sleep 30 & echo ready; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await once(child.stdout, 'data');
    const pgid = child.pid as number;
    expect(groupRuns(pgid)).toBe(true);
    process.kill(-pgid, 'SIGKILL');
    await once(child, 'exit');
    // The orphaned `sleep` may linger as a zombie until it is reaped; it runs nothing either way.
    while (groupRuns(pgid)) await new Promise((resolve) => setImmediate(resolve));
    expect(groupRuns(pgid)).toBe(false);
  });
});
