/**
 * A small POSIX-shell tokenizer for the command policy: a command line split into simple commands, their argv,
 * assignments and redirects, with command and process substitutions found and unsupported syntax reported.
 * @module
 */
import { HarnessError } from '../../errors.js';

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
