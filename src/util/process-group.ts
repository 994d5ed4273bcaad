/**
 * Whether a process group still has a process that runs. A killed process stays in its group as a zombie until its
 * parent reaps it (an orphan's new parent may take its time, or never do it in a container whose init does not
 * reap), and `kill(-pgid, 0)` still finds it; a zombie runs nothing, so it does not count here.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

const PROC = '/proc';

/** Whether any process of group `pgid` exists and is not a zombie. */
export function groupRuns(pgid: number): boolean {
  if (!signalReaches(pgid)) return false;
  let pids: string[];
  try {
    pids = readdirSync(PROC).filter((name) => /^\d+$/.test(name));
  } catch {
    // No /proc (not Linux): a member the signal reaches counts as running.
    return true;
  }
  return pids.some((pid) => {
    const stat = statOf(pid);
    return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z';
  });
}

function signalReaches(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    // ESRCH: no member at all. EPERM: the id now belongs to someone else's group, so ours is gone.
    return false;
  }
}

/** State and process group of one process, from `/proc/<pid>/stat` (gone: undefined). */
function statOf(pid: string): { state: string; pgrp: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`${PROC}/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
}
