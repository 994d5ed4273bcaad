/**
 * The examples' tool set: the built-in tools, with web search when SERPER_API_KEY is set.
 * @module
 */
import { builtinTools, serper, type Tool } from 'horizon-harness';

/**
 * `builtinTools()` as a host would configure it for an unattended demo: commands that the policy or a missing
 * sandbox sends for approval are refused, and the refusal is printed.
 */
export function demoTools(log: (line: string) => void = console.log): Tool[] {
  const serperKey = process.env.SERPER_API_KEY;
  return builtinTools({
    ...(serperKey ? { search: { provider: serper({ apiKey: serperKey }) } } : {}),
    shell: {
      approve: (request) => {
        log(`   ⚠ not approved (the demo approves no commands): ${request.command.slice(0, 80)}`);
        return false;
      },
    },
    python: {
      approve: (request) => {
        log(`   ⚠ not approved (the demo approves no unsandboxed Python): ${request.command.slice(0, 80)}`);
        return false;
      },
    },
  });
}
