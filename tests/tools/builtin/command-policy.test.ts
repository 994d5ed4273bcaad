import { describe, expect, it } from 'vitest';
import {
  CommandPolicy,
  DEFAULT_COMMAND_RULES,
  parseShell,
  requireApproval,
  splitShellWords,
  type ApprovalRequest,
} from '../../../src/tools/builtin/command-policy.js';

describe('splitShellWords', () => {
  it.each([
    ['ls -la', ['ls', '-la']],
    ['  git   commit  -m "fix: a bug"  ', ['git', 'commit', '-m', 'fix: a bug']],
    ['echo \'single $HOME\' "double \\"q\\""', ['echo', 'single $HOME', 'double "q"']],
    ['printf a\\ b', ['printf', 'a b']],
    ['grep "" file', ['grep', '', 'file']],
    ['echo it"s"\'s\'', ['echo', 'itss']],
    ['echo a # a comment', ['echo', 'a']],
    ['echo a#b', ['echo', 'a#b']],
  ])('%s', (input, words) => {
    expect(splitShellWords(input)).toEqual(words);
  });

  it('refuses operators and unterminated quotes', () => {
    expect(() => splitShellWords('ls | wc')).toThrowError(/not a single plain command/);
    expect(() => splitShellWords('echo "open')).toThrowError(/unterminated double quote/);
    expect(() => splitShellWords("echo 'open")).toThrowError(/unterminated single quote/);
  });
});

describe('parseShell', () => {
  it('splits pipelines and lists into commands with their operators', () => {
    const parsed = parseShell('cat a.txt | grep x && echo ok || echo fail; ls &\nwc');
    expect(parsed.commands.map((c) => c.argv)).toEqual([
      ['cat', 'a.txt'],
      ['grep', 'x'],
      ['echo', 'ok'],
      ['echo', 'fail'],
      ['ls'],
      ['wc'],
    ]);
    expect(parsed.operators).toEqual(['|', '&&', '||', ';', '&', ';']);
  });

  it('finds substitutions, also inside double quotes and nested', () => {
    const parsed = parseShell('echo "today: $(date +%F)" `whoami` $(cat $(ls))');
    expect(parsed.substitutions).toEqual(['date +%F', 'whoami', 'cat $(ls)']);
    expect(parsed.commands).toHaveLength(1);
  });

  it('reads redirects with their file descriptors and targets', () => {
    const parsed = parseShell('python3 run.py > out.txt 2>&1 < in.csv');
    expect(parsed.commands[0]?.argv).toEqual(['python3', 'run.py']);
    expect(parsed.commands[0]?.redirects.map((r) => [r.op, r.target])).toEqual([
      ['>', 'out.txt'],
      ['>&', '1'],
      ['<', 'in.csv'],
    ]);
  });

  it('keeps operators inside quotes as text', () => {
    const parsed = parseShell('echo "a | b; c && d > e" \'$(no)\'');
    expect(parsed.commands).toHaveLength(1);
    expect(parsed.commands[0]?.argv).toEqual(['echo', 'a | b; c && d > e', '$(no)']);
    expect(parsed.substitutions).toEqual([]);
  });

  it('separates leading assignments and marks dynamic program names', () => {
    const parsed = parseShell('FOO=1 BAR="x y" env; $CMD arg');
    expect(parsed.commands[0]?.assignments).toEqual(['FOO=1', 'BAR=x y']);
    expect(parsed.commands[0]?.argv).toEqual(['env']);
    expect(parsed.commands[1]?.dynamic).toBe(true);
  });

  it('lists what it cannot analyse', () => {
    expect(parseShell('(cd /; rm x)').unsupported).toContain('subshell "( … )"');
    expect(parseShell('cat <<EOF\nhi\nEOF').unsupported).toContain('here-document');
    expect(parseShell('for f in *; do rm $f; done').unsupported).toContain('shell keyword "for"');
  });
});

describe('CommandPolicy', () => {
  const policy = new CommandPolicy({
    rules: [
      ...DEFAULT_COMMAND_RULES,
      { match: 'git', decision: 'allow' },
      { match: ['git', 'push'], decision: 'deny', reason: 'no publishing' },
      { match: 'python3', decision: 'allow' },
      { match: 'rm', decision: 'ask' },
    ],
  });

  it.each([
    ['git status', 'allow'],
    ['git push origin main', 'deny'],
    ['git   push', 'deny'],
    ['/usr/bin/git push', 'deny'],
    ['rm -rf build', 'ask'],
    ['curl https://example.com', 'ask'],
    ['sudo ls', 'deny'],
    ['ls -la | grep txt | wc -l', 'allow'],
    ['ls; rm x', 'ask'],
    ['git status && git push', 'deny'],
    ['cat $(ls)', 'ask'], // the argument is only known at run time: it could name any path
    ['echo $(ls)', 'allow'],
    ['echo $(curl evil.sh)', 'ask'],
    ['echo `sudo id`', 'deny'],
    ['python3 run.py > out/result.txt 2>&1', 'allow'],
    ['python3 run.py > /etc/passwd', 'ask'],
    ['cat ../secret.txt > ../../x', 'ask'],
    ['cat x > /dev/null', 'allow'],
    ['ls >& 2', 'allow'],
    ['ls >& /tmp/x', 'ask'],
    ['"A=1" ls', 'ask'],
    ['LD_PRELOAD=/tmp/x.so ls', 'ask'],
    ['$SHELL -c ls', 'ask'],
    ['(ls)', 'ask'],
    ['echo "unterminated', 'ask'],
    ['', 'deny'],
  ])('%s → %s', (command, decision) => {
    expect(policy.evaluate(command).decision).toBe(decision);
  });

  it('lets the strictest matching rule win whatever the rule order', () => {
    const rules = [
      { match: 'git', decision: 'allow' as const },
      { match: ['git', 'push'], decision: 'deny' as const },
      { match: ['git', 'commit'], decision: 'ask' as const },
    ];
    for (const order of [rules, [...rules].reverse()]) {
      const ordered = new CommandPolicy({ rules: order });
      expect(['git log', 'git push -f', 'git commit -m x'].map((c) => ordered.evaluate(c).decision)).toEqual([
        'allow',
        'deny',
        'ask',
      ]);
    }
  });

  // Each operator the issue names, with one part that is not allowed: the whole line asks; with every part allowed it runs.
  it.each([
    ['pipe', 'ls | wc -l', 'ls | touch x'],
    ['semicolon', 'ls; pwd', 'ls; touch x'],
    ['and-list', 'ls && pwd', 'ls && touch x'],
    ['or-list', 'ls || pwd', 'ls || touch x'],
    ['$(…)', 'echo $(pwd)', 'echo $(touch x)'],
    ['backticks', 'echo `pwd`', 'echo `touch x`'],
    ['redirect', 'ls > listing.txt', 'ls > /tmp/listing.txt'],
    ['input redirect', 'wc -l < data.csv', 'wc -l < /etc/shadow'],
  ])('%s: allowed only when every part is (%s / %s)', (_name, allowed, asked) => {
    const defaults = new CommandPolicy();
    expect(defaults.evaluate(allowed)).toMatchObject({ decision: 'allow', compound: true });
    const judged = defaults.evaluate(asked);
    expect(judged.decision).toBe('ask');
    expect(judged.parts.some((part) => part.decision === 'allow')).toBe(true);
  });

  it('explains the deciding part', () => {
    const result = policy.evaluate('git status && git push');
    expect(result.reason).toBe('no publishing');
    expect(result.compound).toBe(true);
    expect(result.parts.map((p) => [p.part, p.decision])).toEqual([
      ['git status', 'allow'],
      ['git push', 'deny'],
    ]);
  });

  it('uses the default decision for unmatched commands', () => {
    expect(new CommandPolicy({ rules: [], defaultDecision: 'deny' }).evaluate('ls').decision).toBe('deny');
    expect(new CommandPolicy({ rules: [] }).evaluate('ls').reason).toContain('no rule matches "ls"');
  });

  it('does not let command text or output change the rules', () => {
    const fresh = new CommandPolicy();
    fresh.evaluate('echo \'{"match":"curl","decision":"allow"}\'');
    fresh.evaluate('# policy: allow everything');
    expect(fresh.evaluate('curl https://example.com').decision).toBe('ask');
  });

  it('rejects malformed rules naming the option', () => {
    expect(() => new CommandPolicy({ rules: [{ match: 'ls | wc', decision: 'allow' }] })).toThrowError(
      /option "rules.0.match"/,
    );
    expect(() => new CommandPolicy({ rules: [{ match: [], decision: 'allow' }] })).toThrowError(/rules.0.match/);
    expect(() => new CommandPolicy({ rules: [{ match: 'ls', decision: 'maybe' as never }] })).toThrowError(
      /rules.0.decision/,
    );
  });
});

describe('CommandPolicy: path arguments of allowed commands', () => {
  const policy = new CommandPolicy();
  it.each([
    'cat /etc/passwd',
    'head ../../x',
    'grep -r foo /',
    'cat ~/.ssh/id_rsa',
    'cat $HOME/.ssh/id_rsa',
    'grep --file=/etc/shadow x',
    'tail -n1 sub/../../outside.txt',
    'ls | cat /etc/hosts',
  ])('%s asks', (command) => {
    const evaluation = policy.evaluate(command);
    expect(evaluation.decision).toBe('ask');
    expect(evaluation.reason).toMatch(/may name a path outside the workspace/);
  });

  it.each([
    'cat notes.md',
    'grep -rn TODO src',
    'head -n 5 data/x.csv',
    'ls -la',
    'wc -l *.txt',
    'echo /etc/passwd',
    'cat /dev/null',
  ])('%s is still allowed', (command) => {
    expect(policy.evaluate(command).decision).toBe('allow');
  });

  it("a rule with paths: 'any' does not check its arguments", () => {
    const custom = new CommandPolicy({ rules: [{ match: 'cat', decision: 'allow', paths: 'any' }] });
    expect(custom.evaluate('cat /etc/hostname').decision).toBe('allow');
  });
});

describe('requireApproval', () => {
  const request: ApprovalRequest = {
    tool: 'execute_command',
    command: 'rm x',
    reason: 'rule "rm" → ask',
    parts: [],
    sandboxed: true,
    cwd: '/w',
    runId: 'r',
    scope: 's',
  };

  it('refuses without a callback, saying how to fix it', async () => {
    await expect(requireApproval(request, undefined)).rejects.toMatchObject({
      code: 'policy-denied',
      message: expect.stringMatching(/no approve callback/),
    });
  });

  it('passes only on exactly true', async () => {
    const seen: ApprovalRequest[] = [];
    await expect(requireApproval(request, (r) => (seen.push(r), true))).resolves.toBeUndefined();
    expect(seen).toEqual([request]);
    await expect(requireApproval(request, () => false)).rejects.toMatchObject({ code: 'policy-denied' });
    await expect(requireApproval(request, () => 'yes' as unknown as boolean)).rejects.toMatchObject({
      code: 'policy-denied',
    });
    await expect(
      requireApproval(request, () => {
        throw new Error('ui closed');
      }),
    ).rejects.toMatchObject({ code: 'policy-denied', message: expect.stringContaining('ui closed') });
  });
});
