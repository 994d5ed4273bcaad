import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeCommandTool } from '../../../src/tools/builtin/execute-command.js';
import { pythonInterpreterTool } from '../../../src/tools/builtin/python-interpreter.js';
import { probeBwrap, sandboxStatus } from '../../../src/tools/builtin/sandbox.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';

const probe = probeBwrap();
const noBwrap = !probe.available;
const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

describe.skipIf(noBwrap)(
  `the sandbox shows only the workspace and the system (${noBwrap ? probe.reason : 'bwrap available'})`,
  () => {
    let test: TestContext;
    const canary = `hh-canary-${randomBytes(6).toString('hex')}`;
    const homeFile = path.join(os.homedir(), `.${canary}`);
    const rootFile = path.join('/root', `.${canary}`);
    let hostSleeper: ChildProcess;

    beforeAll(async () => {
      test = await createTestContext();
      await writeFile(homeFile, `${canary}-home`);
      if (process.getuid?.() === 0) await writeFile(rootFile, `${canary}-root`);
      hostSleeper = spawn('sh', ['-c', 'sleep 300; :', canary], { stdio: 'ignore', detached: true });
    });
    afterAll(async () => {
      process.kill(-(hostSleeper.pid as number), 'SIGKILL');
      await test.dispose();
      await rm(homeFile, { force: true });
      await rm(rootFile, { force: true });
    });

    // The default policy: `cat` is allow-listed, its absolute paths need approval, which is given here. Made on first
    // use: without bwrap this suite is skipped, and building the tool would throw while its body is collected.
    let made: ReturnType<typeof executeCommandTool> | undefined;
    const shell = () => {
      made ??= executeCommandTool({ sandbox: 'bwrap', approve: () => true });
      return made;
    };
    const run = async (command: string): Promise<string> => textOf(await shell().execute({ command }, test.ctx));

    it('cannot read files in HOME, /root or /etc/shadow from the shell', async () => {
      const text = await run(`cat ${homeFile}; cat ${rootFile}; cat /etc/shadow; ls /root /home; echo end`);
      expect(text).not.toContain(`${canary}-`);
      expect(text).not.toMatch(/^root:/m);
      expect(text).toContain(`cat: ${homeFile}: No such file or directory`);
      expect(text).toContain('cat: /etc/shadow: No such file or directory');
      expect(text).toContain('end');
    });

    it('cannot read them from Python either', async () => {
      const python = pythonInterpreterTool({ sandbox: 'bwrap' });
      const text = textOf(
        await python.execute(
          {
            code: [
              'found = {}',
              `for p in [${JSON.stringify(homeFile)}, ${JSON.stringify(rootFile)}, "/etc/shadow", "/etc/gshadow", "/etc/sudoers"]:`,
              '    try:',
              '        found[p] = open(p).read()',
              '    except OSError as e:',
              '        found[p] = type(e).__name__',
              'found',
            ].join('\n'),
          },
          test.ctx,
        ),
      );
      expect(text).not.toContain(`${canary}-`);
      expect(text).toContain("'/etc/shadow': 'FileNotFoundError'");
      expect(text).toContain("'/etc/sudoers': 'FileNotFoundError'");
      await test.endScope();
    });

    it('sees no host process: ps and /proc show only the sandbox', async () => {
      const text = await run('ps -eo pid,args; echo ---; ls /proc');
      expect(readFileSync(`/proc/${hostSleeper.pid}/cmdline`, 'utf8')).toContain(canary);
      expect(text).not.toContain(canary);
      expect(text).toContain('Exit code: 0');
      expect(text.split('\n').filter((line) => /^\d+$/.test(line))).not.toContain(String(process.pid));
    });

    it('cannot write under .harness/, and writes in the workspace', async () => {
      const text = await run(
        'echo planted > .harness/planted; ln -s /etc .harness/link; echo ok > made.txt; cat made.txt',
      );
      expect(text).toContain('Read-only file system');
      expect(text).toContain('--- stdout ---\nok');
      const root = test.workspace.root;
      expect(existsSync(path.join(root, '.harness', 'planted'))).toBe(false);
      expect(existsSync(path.join(root, '.harness', 'link'))).toBe(false);
      expect(readFileSync(path.join(root, 'made.txt'), 'utf8')).toBe('ok\n');
    });

    // Read only when bwrap exists: a skipped suite's body still runs at collection.
    const limited = !noBwrap && sandboxStatus('bwrap').processLimit !== 'none';
    // As root without a writable pids cgroup no limit can be enforced (the status warns); CI must have one.
    it.runIf(limited || process.env.CI === 'true')(
      'bounds a fork bomb at the process limit (256 by default)',
      async () => {
        expect(shell().sandbox.processLimit).not.toBe('none');
        const bomb = [
          'import subprocess',
          'started, failed = [], 0',
          'for _ in range(400):',
          '    try:',
          '        started.append(subprocess.Popen(["sleep", "5"]))',
          '    except OSError:',
          '        failed += 1',
          'for p in started:',
          '    p.kill()',
          'print("started", len(started), "failed", failed)',
        ].join('\n');
        await writeFile(path.join(test.workspace.root, 'bomb.py'), bomb);
        const text = await run('python3 bomb.py');
        const [, started, failed] = /started (\d+) failed (\d+)/.exec(text) ?? [];
        expect(Number(failed)).toBeGreaterThan(0);
        expect(Number(started)).toBeLessThan(256);
      },
    );
  },
);
