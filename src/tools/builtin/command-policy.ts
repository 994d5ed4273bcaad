/**
 * Command policy for `execute_command`: allow / ask / deny rules matched on the argv prefixes of the simple commands
 * that `shell-parser.ts` finds in a command line. Decisions come from the rules and the command text only: nothing a tool prints or a model writes
 * can change a rule.
 * @module
 */
import path from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { outsidePathArgument } from './sandbox/path-arguments.js';
import { parseOptions } from './search-providers/http.js';
import {
  parseShell,
  splitShellWords,
  type ParsedShell,
  type ShellCommand,
  type ShellRedirect,
} from './shell-parser.js';

export {
  parseShell,
  splitShellWords,
  type ParsedShell,
  type ShellCommand,
  type ShellRedirect,
} from './shell-parser.js';

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
