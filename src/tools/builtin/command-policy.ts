/**
 * Command policy for `execute_command`: a small POSIX-shell tokenizer and allow / ask / deny rules matched on
 * argv prefixes. Decisions come from the rules and the command text only: nothing a tool prints or a model writes
 * can change a rule.
 * @module
 */
import path from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { outsidePathArgument } from './sandbox/path-arguments.js';
import { parseOptions } from './search-providers/http.js';

/** What the policy says about a command. */
export type PolicyDecision = 'allow' | 'ask' | 'deny';

/** One rule: an argv prefix (`['git', 'push']`, or the string `'git push'`) and its decision. */
export interface PolicyRule {
  match: string | readonly string[];
  decision: PolicyDecision;
  /** Shown in the observation and the approval request. */
  reason?: string;
  /**
   * Where the arguments of an allowed command may point. `'workspace'`: an argument that is absolute, starts with
   * `~`, climbs with `..` or holds an expansion turns `allow` into `ask`. `'any'`: arguments are not paths
   * (`echo`, `printf`). Commands allowed by `defaultDecision: 'allow'` are not checked.
   * @defaultValue 'workspace'
   */
  paths?: 'workspace' | 'any';
}

/** A redirect such as `> out.txt`, `2>&1` or `< in.csv`. */
export interface ShellRedirect {
  op: string;
  target: string;
  /** True when the target holds an expansion (`$HOME`, globs, substitutions). */
  dynamic: boolean;
}

/** One simple command of a command line. */
export interface ShellCommand {
  argv: string[];
  /** Leading `NAME=value` words. */
  assignments: string[];
  redirects: ShellRedirect[];
  /** True when the command name holds an expansion, so the program cannot be known before it runs. */
  dynamic: boolean;
}

/** A command line split into simple commands. */
export interface ParsedShell {
  commands: ShellCommand[];
  /** Control operators between the commands: `|`, `||`, `&&`, `;`, `&`, newline as `;`. */
  operators: string[];
  /** Inner command lines of `$(…)`, backticks and `<(…)`/`>(…)`. */
  substitutions: string[];
  /** Constructs the policy cannot analyse (subshells, keywords, here-documents, …). */
  unsupported: string[];
}

const KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'function',
  'select',
  '!',
  '[[',
  ']]',
  '{',
  '}',
  'time',
  'coproc',
]);

type Token =
  | { kind: 'word'; value: string; dynamic: boolean; quoted: boolean; firstQuote: number }
  | { kind: 'op'; value: string }
  | { kind: 'redirect'; value: string };

function syntaxError(message: string): HarnessError {
  return new HarnessError('invalid-input', `Cannot parse the command: ${message}.`);
}

/** Reads from `start` (just after the opening `(`) to the matching `)`, honouring quotes; returns the inner text and end index. */
function readBalanced(src: string, start: number): { inner: string; end: number } {
  let depth = 1;
  let i = start;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') i += 2;
    else if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) throw syntaxError('unterminated single quote');
      i = close + 1;
    } else if (c === '"') {
      i += 1;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      if (i >= src.length) throw syntaxError('unterminated double quote');
      i += 1;
    } else if (c === '(') {
      depth += 1;
      i += 1;
    } else if (c === ')') {
      depth -= 1;
      if (depth === 0) return { inner: src.slice(start, i), end: i + 1 };
      i += 1;
    } else i += 1;
  }
  throw syntaxError('unterminated "$(" or "("');
}

function readBacktick(src: string, start: number): { inner: string; end: number } {
  let i = start;
  let inner = '';
  while (i < src.length && src[i] !== '`') {
    if (src[i] === '\\' && i + 1 < src.length) {
      inner += src[i + 1];
      i += 2;
    } else {
      inner += src[i];
      i += 1;
    }
  }
  if (i >= src.length) throw syntaxError('unterminated backtick');
  return { inner, end: i + 1 };
}

function tokenize(src: string, substitutions: string[], unsupported: string[]): Token[] {
  const tokens: Token[] = [];
  let word = '';
  let inWord = false;
  let dynamic = false;
  let quoted = false;
  /** Length of the word when quoting first started (tells `A="x y"` assignments from `"A=x"` words). */
  let firstQuote = -1;
  const quote = (): void => {
    if (!quoted) firstQuote = word.length;
    quoted = true;
  };
  const endWord = (): void => {
    if (inWord) tokens.push({ kind: 'word', value: word, dynamic, quoted, firstQuote });
    word = '';
    inWord = false;
    dynamic = false;
    quoted = false;
    firstQuote = -1;
  };
  /** Handles `$…` at `i` (inside or outside double quotes); returns the next index. */
  const dollar = (i: number): number => {
    const next = src[i + 1];
    dynamic = true;
    inWord = true;
    if (next === '(' && src[i + 2] === '(') {
      const { inner, end } = readBalanced(src, i + 2);
      word += `$(${inner})`;
      if (/[`$]/.test(inner)) unsupported.push('substitution inside arithmetic expansion');
      return end;
    }
    if (next === '(') {
      const { inner, end } = readBalanced(src, i + 2);
      substitutions.push(inner);
      word += `$(${inner})`;
      return end;
    }
    if (next === '{') {
      const close = src.indexOf('}', i + 2);
      if (close < 0) throw syntaxError('unterminated "${"');
      const inner = src.slice(i + 2, close);
      if (/[`$]/.test(inner)) unsupported.push('nested expansion in "${…}"');
      word += src.slice(i, close + 1);
      return close + 1;
    }
    if (next === "'" || next === '"') {
      // $'…' and $"…" are quoting forms; treat their content as dynamic text.
      word += '$';
      return i + 1;
    }
    word += '$';
    return i + 1;
  };

  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === ' ' || c === '\t') {
      endWord();
      i += 1;
    } else if (c === '\n') {
      endWord();
      tokens.push({ kind: 'op', value: ';' });
      i += 1;
    } else if (c === '#' && !inWord) {
      while (i < src.length && src[i] !== '\n') i += 1;
    } else if (c === '\\') {
      if (src[i + 1] === '\n') i += 2;
      else {
        if (i + 1 >= src.length) throw syntaxError('trailing backslash');
        quote();
        word += src[i + 1];
        inWord = true;
        i += 2;
      }
    } else if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) throw syntaxError('unterminated single quote');
      quote();
      word += src.slice(i + 1, close);
      inWord = true;
      i = close + 1;
    } else if (c === '"') {
      quote();
      inWord = true;
      i += 1;
      for (;;) {
        if (i >= src.length) throw syntaxError('unterminated double quote');
        const d = src[i] as string;
        if (d === '"') {
          i += 1;
          break;
        }
        if (d === '\\' && i + 1 < src.length && '$`"\\\n'.includes(src[i + 1] as string)) {
          if (src[i + 1] !== '\n') word += src[i + 1];
          i += 2;
        } else if (d === '$') {
          i = dollar(i);
        } else if (d === '`') {
          const { inner, end } = readBacktick(src, i + 1);
          substitutions.push(inner);
          word += `\`${inner}\``;
          dynamic = true;
          i = end;
        } else {
          word += d;
          i += 1;
        }
      }
    } else if (c === '$') {
      i = dollar(i);
    } else if (c === '`') {
      const { inner, end } = readBacktick(src, i + 1);
      substitutions.push(inner);
      word += `\`${inner}\``;
      inWord = true;
      dynamic = true;
      i = end;
    } else if ((c === '<' || c === '>') && src[i + 1] === '(') {
      endWord();
      const { inner, end } = readBalanced(src, i + 2);
      substitutions.push(inner);
      tokens.push({ kind: 'word', value: `${c}(${inner})`, dynamic: true, quoted: false, firstQuote: -1 });
      i = end;
    } else if (c === '<' || c === '>' || (c === '&' && src[i + 1] === '>')) {
      // A word of digits right before the operator is its file descriptor (`2>`).
      if (inWord && !quoted && /^\d+$/.test(word)) {
        word = '';
        inWord = false;
      } else endWord();
      const op = /^(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)/.exec(src.slice(i))?.[0] ?? c;
      if (op.startsWith('<<') && op !== '<<<') unsupported.push('here-document');
      tokens.push({ kind: 'redirect', value: op });
      i += op.length;
    } else if (c === '|' || c === '&' || c === ';') {
      endWord();
      const op = /^(\|\||&&|;;|\|&|\||&|;)/.exec(src.slice(i))?.[0] ?? c;
      if (op === ';;') unsupported.push('case terminator ";;"');
      tokens.push({ kind: 'op', value: op });
      i += op.length;
    } else if (c === '(' || c === ')') {
      endWord();
      unsupported.push(c === '(' ? 'subshell "( … )"' : 'unbalanced ")"');
      if (c === '(') {
        const { inner, end } = readBalanced(src, i + 1);
        substitutions.push(inner);
        i = end;
      } else i += 1;
    } else {
      if (!inWord && c === '~') dynamic = true;
      if (c === '*' || c === '?' || c === '[') dynamic = true;
      word += c;
      inWord = true;
      i += 1;
    }
  }
  endWord();
  return tokens;
}

function isAssignment(token: Extract<Token, { kind: 'word' }>): boolean {
  const name = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(token.value);
  return name !== null && (token.firstQuote < 0 || token.firstQuote >= name[0].length);
}

/**
 * Splits a command line into simple commands, control operators, redirects and substitutions, the way a POSIX shell
 * reads it (quotes, escapes, `$(…)`, backticks, `${…}`, comments). Throws `HarnessError('invalid-input')` on
 * unterminated quotes or substitutions.
 */
export function parseShell(command: string): ParsedShell {
  const substitutions: string[] = [];
  const unsupported: string[] = [];
  const tokens = tokenize(command, substitutions, unsupported);
  const commands: ShellCommand[] = [];
  const operators: string[] = [];
  let current: ShellCommand = { argv: [], assignments: [], redirects: [], dynamic: false };
  const flush = (): void => {
    if (current.argv.length > 0 || current.assignments.length > 0 || current.redirects.length > 0)
      commands.push(current);
    current = { argv: [], assignments: [], redirects: [], dynamic: false };
  };
  for (let t = 0; t < tokens.length; t += 1) {
    const token = tokens[t] as Token;
    if (token.kind === 'op') {
      flush();
      operators.push(token.value);
    } else if (token.kind === 'redirect') {
      const target = tokens[t + 1];
      if (target?.kind !== 'word') throw syntaxError(`"${token.value}" has no target`);
      current.redirects.push({ op: token.value, target: target.value, dynamic: target.dynamic });
      t += 1;
    } else if (current.argv.length === 0 && isAssignment(token)) {
      current.assignments.push(token.value);
    } else {
      if (current.argv.length === 0) {
        current.dynamic = token.dynamic;
        if (!token.quoted && KEYWORDS.has(token.value)) unsupported.push(`shell keyword "${token.value}"`);
      }
      current.argv.push(token.value);
    }
  }
  flush();
  return { commands, operators, substitutions, unsupported };
}

/** Splits a string into shell words (quotes and escapes honoured); throws when it holds operators or redirects. */
export function splitShellWords(text: string): string[] {
  const parsed = parseShell(text);
  const only = parsed.commands[0];
  if (
    parsed.commands.length !== 1 ||
    parsed.operators.length > 0 ||
    !only ||
    only.redirects.length > 0 ||
    only.assignments.length > 0
  ) {
    throw new HarnessError(
      'invalid-input',
      `"${text}" is not a single plain command (operators, redirects or assignments found).`,
    );
  }
  return only.argv;
}

/** How one part of a command line was judged. */
export interface PolicyPart {
  /** The simple command, substitution, redirect or construct judged. */
  part: string;
  decision: PolicyDecision;
  reason: string;
}

/** The decision on a whole command line, with the part that decided it. */
export interface PolicyEvaluation {
  decision: PolicyDecision;
  /** Why: the deciding part's reason. */
  reason: string;
  parts: PolicyPart[];
  /** True when the line has more than one command, substitutions or redirects. */
  compound: boolean;
}

/** Options of {@link CommandPolicy}. */
export interface CommandPolicyOptions {
  /**
   * The rules; they replace {@link DEFAULT_COMMAND_RULES} (spread those in to extend them).
   */
  rules?: readonly PolicyRule[];
  /**
   * Decision for a command no rule matches.
   * @defaultValue 'ask'
   */
  defaultDecision?: PolicyDecision;
  /**
   * Let sandboxed commands use the network (the sandbox unshares it otherwise).
   * @defaultValue false
   */
  allowNetwork?: boolean;
}

/** The default rules: read-only inspection commands are allowed, privilege changes and machine-level commands denied; everything else asks. */
export const DEFAULT_COMMAND_RULES: readonly PolicyRule[] = Object.freeze([
  // Only programs that cannot write files by themselves (`sort -o`, `uniq in out` and `date -s` can, so they ask).
  // Their arguments must stay inside the workspace, or they ask.
  ...[
    'ls',
    'cat',
    'head',
    'tail',
    'wc',
    'pwd',
    'grep',
    'cut',
    'tr',
    'diff',
    'file',
    'stat',
    'du',
    'realpath',
    'cmp',
    'md5sum',
    'sha256sum',
  ].map((cmd): PolicyRule => ({ match: [cmd], decision: 'allow', reason: 'read-only inspection command' })),
  // Their arguments are text, not files.
  ...['echo', 'printf', 'true', 'basename', 'dirname', 'which'].map(
    (cmd): PolicyRule => ({ match: [cmd], decision: 'allow', reason: 'prints its arguments', paths: 'any' }),
  ),
  ...['sudo', 'su', 'doas', 'shutdown', 'reboot', 'halt', 'poweroff', 'mkfs', 'mount', 'umount', 'chown'].map(
    (cmd): PolicyRule => ({ match: [cmd], decision: 'deny', reason: 'changes privileges or the machine' }),
  ),
]);

const STRICTNESS: Record<PolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

function strictest<T extends { decision: PolicyDecision }>(items: T[]): T | undefined {
  return items.reduce<T | undefined>(
    (worst, item) => (!worst || STRICTNESS[item.decision] > STRICTNESS[worst.decision] ? item : worst),
    undefined,
  );
}

const RuleSchema = z.strictObject({
  match: z.union([z.string().trim().min(1), z.array(z.string().min(1)).min(1)], {
    error: 'must be an argv prefix: a non-empty string or array of strings',
  }),
  decision: z.enum(['allow', 'ask', 'deny']),
  reason: z.string().optional(),
  paths: z.enum(['workspace', 'any']).optional(),
});
const PolicyOptionsSchema = z.strictObject({
  rules: z.array(RuleSchema).optional(),
  defaultDecision: z.enum(['allow', 'ask', 'deny']).default('ask'),
  allowNetwork: z.boolean().default(false),
});

interface CompiledRule {
  prefix: string[];
  decision: PolicyDecision;
  reason: string;
  paths: 'workspace' | 'any';
}

/**
 * Allow / ask / deny rules on argv prefixes; the strictest matching rule wins. A compound command (pipes, `;`,
 * `&&`, `||`, substitutions, redirects) is judged part by part and gets the strictest part's decision, so it is
 * allowed only when every part is.
 *
 * @example
 * ```ts
 * const policy = new CommandPolicy({
 *   rules: [...DEFAULT_COMMAND_RULES, { match: 'git', decision: 'allow' }, { match: ['git', 'push'], decision: 'deny' }],
 * });
 * policy.evaluate('git status | head').decision; // 'allow'
 * policy.evaluate('git push origin main').decision; // 'deny'
 * ```
 */
export class CommandPolicy {
  /** Whether sandboxed commands keep network access. */
  readonly allowNetwork: boolean;
  readonly defaultDecision: PolicyDecision;
  private readonly rules: readonly CompiledRule[];

  constructor(options: CommandPolicyOptions = {}) {
    const opts = parseOptions(PolicyOptionsSchema, options, 'CommandPolicy');
    this.allowNetwork = opts.allowNetwork;
    this.defaultDecision = opts.defaultDecision;
    this.rules = Object.freeze(
      (opts.rules ?? DEFAULT_COMMAND_RULES).map((rule, index): CompiledRule => {
        let prefix: string[];
        try {
          prefix = typeof rule.match === 'string' ? splitShellWords(rule.match) : [...rule.match];
        } catch (error) {
          throw new HarnessError(
            'invalid-options',
            `CommandPolicy: option "rules.${index}.match" must be a plain argv prefix such as "git status".`,
            { cause: error },
          );
        }
        return {
          prefix,
          decision: rule.decision,
          reason: rule.reason ?? `rule "${prefix.join(' ')}" → ${rule.decision}`,
          paths: rule.paths ?? 'workspace',
        };
      }),
    );
  }

  /** Judges a command line. Never throws: an unparseable line is `ask`. */
  evaluate(command: string): PolicyEvaluation {
    let parsed: ParsedShell;
    try {
      parsed = parseShell(command);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { decision: 'ask', reason, parts: [{ part: command, decision: 'ask', reason }], compound: false };
    }
    return this.evaluateParsed(parsed, 0);
  }

  private evaluateParsed(parsed: ParsedShell, depth: number): PolicyEvaluation {
    const parts: PolicyPart[] = [];
    for (const construct of parsed.unsupported) {
      parts.push({ part: construct, decision: 'ask', reason: `${construct} cannot be checked against the rules` });
    }
    for (const cmd of parsed.commands) {
      parts.push(this.judgeCommand(cmd));
      for (const redirect of cmd.redirects) parts.push(judgeRedirect(redirect));
    }
    for (const inner of parsed.substitutions) {
      if (depth >= 8) {
        parts.push({ part: inner, decision: 'ask', reason: 'substitutions nested too deeply to check' });
        continue;
      }
      let innerParsed: ParsedShell;
      try {
        innerParsed = parseShell(inner);
      } catch (error) {
        parts.push({ part: inner, decision: 'ask', reason: error instanceof Error ? error.message : String(error) });
        continue;
      }
      parts.push(...this.evaluateParsed(innerParsed, depth + 1).parts);
    }
    if (parts.length === 0) parts.push({ part: '', decision: 'deny', reason: 'the command is empty' });
    const worst = strictest(parts) as PolicyPart;
    const compound =
      parsed.commands.length > 1 ||
      parsed.substitutions.length > 0 ||
      parsed.commands.some((c) => c.redirects.length > 0);
    return { decision: worst.decision, reason: worst.reason, parts, compound };
  }

  private judgeCommand(cmd: ShellCommand): PolicyPart {
    const part = [...cmd.assignments, ...cmd.argv].join(' ');
    if (cmd.argv.length === 0) return { part, decision: 'ask', reason: 'a redirect or assignment without a command' };
    if (cmd.dynamic)
      return { part, decision: 'ask', reason: `the program name "${cmd.argv[0] ?? ''}" is only known at run time` };
    const matches = this.rules.filter((rule) => matchesPrefix(rule.prefix, cmd.argv));
    const rule = strictest(matches);
    const ruled: PolicyPart = rule
      ? { part, decision: rule.decision, reason: rule.reason }
      : {
          part,
          decision: this.defaultDecision,
          reason: `no rule matches "${cmd.argv[0] ?? ''}" (default: ${this.defaultDecision})`,
        };
    if (cmd.assignments.length > 0 && ruled.decision === 'allow') {
      return { part, decision: 'ask', reason: 'environment assignments can change what an allowed program does' };
    }
    if (ruled.decision === 'allow' && rule?.paths === 'workspace') {
      const outside = outsidePathArgument(cmd.argv);
      if (outside !== undefined)
        return { part, decision: 'ask', reason: `the argument "${outside}" may name a path outside the workspace` };
    }
    return ruled;
  }
}

function matchesPrefix(prefix: readonly string[], argv: readonly string[]): boolean {
  if (prefix.length === 0 || prefix.length > argv.length) return false;
  return prefix.every((word, index) => {
    const arg = argv[index] as string;
    // `/bin/rm` is still `rm` for a rule written without a path.
    if (index === 0 && !word.includes('/')) return arg === word || path.posix.basename(arg) === word;
    return arg === word;
  });
}

function judgeRedirect(redirect: ShellRedirect): PolicyPart {
  const part = `${redirect.op} ${redirect.target}`;
  if (/^(\d+|-)$/.test(redirect.target) && (redirect.op === '>&' || redirect.op === '<&')) {
    return { part, decision: 'allow', reason: 'file-descriptor duplication' };
  }
  if (redirect.target === '/dev/null') return { part, decision: 'allow', reason: 'redirect to /dev/null' };
  const inside =
    !redirect.dynamic &&
    redirect.target !== '' &&
    !redirect.target.startsWith('/') &&
    !redirect.target.startsWith('-') &&
    !redirect.target.split('/').includes('..');
  return inside
    ? { part, decision: 'allow', reason: 'redirect to a path inside the working directory' }
    : { part, decision: 'ask', reason: `redirect to "${redirect.target}" may leave the workspace` };
}

/** What the `approve` callback is asked about. */
export interface ApprovalRequest {
  tool: 'execute_command' | 'python_interpreter';
  /** The command line, or the Python code. */
  command: string;
  /** Why approval is needed. */
  reason: string;
  /** The judged parts of a command line (empty for Python). */
  parts: PolicyPart[];
  /** True when it would run inside the bwrap sandbox. */
  sandboxed: boolean;
  /** Absolute working directory. */
  cwd: string;
  runId: string;
  scope: string;
}

/** Decides an `ask`; anything but `true` refuses. */
export type ApproveFn = (request: ApprovalRequest) => boolean | Promise<boolean>;

/** Asks `approve` (when given) and throws `HarnessError('policy-denied')` unless it returns exactly `true`. */
export async function requireApproval(request: ApprovalRequest, approve: ApproveFn | undefined): Promise<void> {
  const what = request.tool === 'python_interpreter' ? 'This Python code' : 'This command';
  if (!approve) {
    throw new HarnessError(
      'policy-denied',
      `${what} needs approval (${request.reason}) and no approve callback is configured, so it was not run. ` +
        'Use an allowed command instead, or configure `approve` / an allow rule.',
    );
  }
  let approved: unknown;
  try {
    approved = await approve(request);
  } catch (error) {
    throw new HarnessError(
      'policy-denied',
      `${what} was not run: the approve callback failed (${error instanceof Error ? error.message : String(error)}).`,
      { cause: error },
    );
  }
  if (approved !== true) {
    throw new HarnessError(
      'policy-denied',
      `${what} was not approved (${request.reason}), so it was not run. Try a different approach.`,
    );
  }
}
