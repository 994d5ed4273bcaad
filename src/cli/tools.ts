/**
 * The CLI's tool set: the built-in tools as an unattended run should have them.
 * @module
 */
import { HarnessError } from '../errors.js';
import { builtinTools, type BuiltinToolsOptions } from '../tools/builtin/index.js';
import type { ApprovalRequest } from '../tools/builtin/command-policy.js';
import { serper } from '../tools/builtin/search-providers/index.js';
import type { Tool } from '../tools/types.js';

/**
 * `builtinTools()` with web search when SERPER_API_KEY is set. Nobody is there to approve a command, so a command that
 * the policy (or a missing sandbox) sends for approval is refused, and `note` says so. Without python3 the Python tool
 * is left out, also with a note.
 */
export function cliTools(env: Readonly<Record<string, string | undefined>>, note: (text: string) => void): Tool[] {
  const refuse = (request: ApprovalRequest): boolean => {
    note(`  ⚠ not approved (the CLI approves no commands): ${request.command.replace(/\s+/g, ' ').slice(0, 80)}`);
    return false;
  };
  const serperKey = env.SERPER_API_KEY?.trim();
  const options: BuiltinToolsOptions = {
    ...(serperKey ? { search: { provider: serper({ apiKey: serperKey }) } } : {}),
    shell: { approve: refuse },
    python: { approve: refuse },
  };
  try {
    return builtinTools(options);
  } catch (error) {
    if (!HarnessError.isInstance(error) || error.code !== 'tool-unavailable') throw error;
    note(`  ⚠ python_interpreter left out: ${error.message}`);
    return builtinTools({ ...options, python: false });
  }
}
