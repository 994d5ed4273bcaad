/**
 * Spotting command arguments that may name a path outside the workspace (`/etc/passwd`, `../../x`, `~/.ssh`,
 * `$HOME/x`), so that an allowed command reading them needs approval instead.
 * @module
 */

/** The spellings an argument may hide a path in: itself, the value of `--name=value`, the rest of `-fVALUE`. */
function candidates(arg: string): string[] {
  const found = [arg];
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    if (eq > 0) found.push(arg.slice(eq + 1));
  } else if (arg.startsWith('-') && arg.length > 2) {
    found.push(arg.slice(2));
  }
  return found;
}

function leavesWorkspace(value: string): boolean {
  if (value === '/dev/null') return false;
  return value.startsWith('/') || value.startsWith('~') || value.split('/').includes('..');
}

/**
 * The first argument (after the program name) that is absolute, starts with `~`, climbs with `..`, or holds an
 * expansion (`$…`, backticks) whose value is only known at run time; undefined when every argument stays inside.
 */
export function outsidePathArgument(argv: readonly string[]): string | undefined {
  return argv.slice(1).find((arg) => /[$`]/.test(arg) || candidates(arg).some(leavesWorkspace));
}
