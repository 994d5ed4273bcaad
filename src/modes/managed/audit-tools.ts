/**
 * The built-in auditor's default tools: the host's read-only tools, plus a read-only command tool where the sandbox
 * can mount the workspace read-only.
 * @module
 */
import { HarnessError } from '../../errors.js';
import { DEFAULT_COMMAND_RULES, executeCommandTool, readOnlyTools } from '../../tools/builtin/index.js';
import type { Tool } from '../../tools/types.js';

/**
 * The policy of the auditor's command tool: the default rules' denials (privileges, the machine), everything else
 * allowed, since the sandbox mounts the workspace read-only, shares no network and keeps nothing of `/tmp`.
 */
const AUDIT_COMMAND_POLICY = {
  rules: DEFAULT_COMMAND_RULES.filter((rule) => rule.decision === 'deny'),
  defaultDecision: 'allow' as const,
};

/** The auditor's tools, and what the user should know about them (`run-start` warnings). */
export interface AuditorToolSet {
  tools: Tool[];
  warnings: string[];
}

/**
 * The default tools of the built-in auditor: every `readOnly` tool of `hostTools`, plus `execute_command` with the
 * workspace mounted read-only and no network when the host gave no read-only tool of that name. Where bubblewrap is
 * unusable there is no command tool, and a warning says so: criteria about command output are then unverifiable.
 */
export function defaultAuditorTools(hostTools: readonly Tool[]): AuditorToolSet {
  const tools = readOnlyTools(hostTools);
  if (tools.some((tool) => tool.name === 'execute_command')) return { tools, warnings: [] };
  try {
    const command = executeCommandTool({
      workspaceAccess: 'read-only',
      sandbox: 'bwrap',
      policy: AUDIT_COMMAND_POLICY,
    });
    return { tools: [...tools, command as Tool], warnings: [...(command.warnings ?? [])] };
  } catch (error) {
    if (!HarnessError.isInstance(error) || error.code !== 'tool-unavailable') throw error;
    return {
      tools,
      warnings: [
        `The auditor has no command tool (${error.message}); acceptance criteria about command output cannot be verified in this run.`,
      ],
    };
  }
}
