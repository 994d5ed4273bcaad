/**
 * The built-in tool set of the paper's Table 5, assembled by {@link builtinTools}.
 * @module
 */
import { HarnessError } from '../../errors.js';
import { unknownKeyMessage } from '../../util/did-you-mean.js';
import type { Tool } from '../types.js';
import { analyzeImageTool, type AnalyzeImageToolOptions } from './analyze-image.js';
import { editFileTool } from './edit-file.js';
import { executeCommandTool, type ExecuteCommandToolOptions } from './execute-command.js';
import { generateImageTool, type GenerateImageToolOptions } from './generate-image.js';
import { googleScholarTool } from './google-scholar.js';
import type { ImageBackend } from './image-backend.js';
import type { NetworkOptions } from './network-guard.js';
import { openAlexTool, type OpenAlexToolOptions } from './openalex.js';
import { pythonInterpreterTool, type PythonInterpreterToolOptions } from './python-interpreter.js';
import { readFileTool, type ReadFileToolOptions } from './read-file.js';
import { searchTool, type SearchToolOptions } from './search.js';
import { visitTool, type VisitToolOptions } from './visit.js';
import { writeToFileTool } from './write-to-file.js';

export { analyzeImageTool, type AnalyzeImageToolOptions } from './analyze-image.js';
export { editFileTool } from './edit-file.js';
export { generateImageTool, type GenerateImageToolOptions } from './generate-image.js';
export {
  openAIImages,
  type GeneratedImage,
  type ImageBackend,
  type ImageGenerationRequest,
  type OpenAIImagesOptions,
} from './image-backend.js';
export { readFileTool, type ReadFileToolOptions } from './read-file.js';
export { writeToFileTool } from './write-to-file.js';
export { searchTool, type SearchToolOptions } from './search.js';
export { googleScholarTool } from './google-scholar.js';
export {
  brave,
  searxng,
  serper,
  tavily,
  type BraveOptions,
  type HttpProviderOptions,
  type SearchProvider,
  type SearchRequest,
  type SearchResult,
  type SearxngOptions,
  type SerperOptions,
  type TavilyOptions,
} from './search-providers/index.js';
export { visitTool, type VisitToolOptions } from './visit.js';
export type { NetworkOptions } from './network-guard.js';
export { openAlexTool, type OpenAlexToolOptions } from './openalex.js';
export {
  pythonInterpreterTool,
  type PythonInterpreterTool,
  type PythonInterpreterToolOptions,
} from './python-interpreter.js';
export { executeCommandTool, type ExecuteCommandTool, type ExecuteCommandToolOptions } from './execute-command.js';
export {
  CommandPolicy,
  DEFAULT_COMMAND_RULES,
  type ApprovalRequest,
  type ApproveFn,
  type CommandPolicyOptions,
  type PolicyDecision,
  type PolicyEvaluation,
  type PolicyRule,
} from './command-policy.js';
export { sandboxStatus, type SandboxMode, type SandboxStatus, type WorkspaceAccess } from './sandbox.js';

/** Options of {@link builtinTools}: one entry per tool; `false` leaves a tool out. */
export interface BuiltinToolsOptions {
  /** Web search (`search`); left out without a provider. */
  search?: SearchToolOptions | false;
  /**
   * Scholarly search (`google_scholar`); by default it uses the search provider when that supports scholar queries,
   * and is left out otherwise.
   */
  scholar?: SearchToolOptions | false;
  /** Page visits (`visit`); on by default. */
  visit?: VisitToolOptions | false;
  /**
   * What the tools that fetch a URL the model chose (`visit`) may reach: by default no private network and no cloud
   * metadata service; `allowHosts` limits them to listed hosts. Same as `visit.network`; give it in one place only.
   */
  network?: NetworkOptions;
  /** OpenAlex metadata (`openalex`); on by default. */
  openalex?: OpenAlexToolOptions | false;
  /** `python_interpreter`; on by default, and `python3` must then exist. */
  python?: PythonInterpreterToolOptions | false;
  /** `execute_command`; on by default, under the default command policy. */
  shell?: ExecuteCommandToolOptions | false;
  /** `read_file` options. */
  readFile?: ReadFileToolOptions;
  /** `analyze_image`; on by default, it uses the `vision` role's backend (else the main one). */
  analyzeImage?: AnalyzeImageToolOptions | false;
  /** The image model of `generate_image`; the tool is left out without one. */
  imageBackend?: ImageBackend;
  /** `generate_image` options besides the backend. */
  generateImage?: Omit<GenerateImageToolOptions, 'backend'>;
}

/** Every key of {@link BuiltinToolsOptions}; the type makes a new option fail to compile until it is listed here. @internal */
export const BUILTIN_TOOLS_OPTION_KEYS = Object.keys({
  search: true,
  scholar: true,
  visit: true,
  network: true,
  openalex: true,
  python: true,
  shell: true,
  readFile: true,
  analyzeImage: true,
  imageBackend: true,
  generateImage: true,
} satisfies Record<keyof BuiltinToolsOptions, true>);

/** A misspelt key would otherwise leave a tool at its defaults (a policy or an allowlist silently dropped). */
function checkKeys(options: BuiltinToolsOptions): void {
  const unknown = Object.keys(options).filter((key) => !BUILTIN_TOOLS_OPTION_KEYS.includes(key));
  if (unknown.length === 0) return;
  const problems = unknown.map((key) => unknownKeyMessage('', key, BUILTIN_TOOLS_OPTION_KEYS));
  throw new HarnessError('invalid-options', `builtinTools: ${problems.join('; ')}.`);
}

function scholarOptions(options: BuiltinToolsOptions): SearchToolOptions | undefined {
  if (options.scholar === false) return undefined;
  if (options.scholar) return options.scholar;
  if (options.search && options.search.provider.supports.includes('scholar')) return options.search;
  return undefined;
}

function visitOptions(options: BuiltinToolsOptions): VisitToolOptions {
  const visit = options.visit || {};
  if (options.network === undefined) return visit;
  if (visit.network !== undefined) {
    throw new HarnessError(
      'invalid-options',
      'builtinTools: "network" is given both at the top level and under "visit"; give it in one place, so no allowlist is dropped by accident.',
    );
  }
  return { ...visit, network: options.network };
}

function python(options: PythonInterpreterToolOptions): Tool {
  try {
    return pythonInterpreterTool(options) as Tool;
  } catch (error) {
    if (HarnessError.isInstance(error) && error.code === 'tool-unavailable') {
      throw new HarnessError(
        'tool-unavailable',
        `${error.message} Or leave the tool out with builtinTools({ python: false }).`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/**
 * The paper's tool set (Table 5) in one call: `search`, `visit`, `google_scholar`, `openalex`, `python_interpreter`,
 * `execute_command`, `read_file`, `write_to_file`, `edit_file`, `analyze_image`, `generate_image`. Tools whose
 * required option is missing (a search provider, an image backend) are left out rather than failing.
 *
 * @example
 * ```ts
 * const tools = builtinTools({
 *   search: { provider: serper({ apiKey: process.env.SERPER_API_KEY! }) },
 *   imageBackend: openAIImages({ apiKey: process.env.OPENAI_API_KEY, model: 'gpt-image-1' }),
 *   shell: { approve: async (request) => confirm(request.command) },
 * });
 * ```
 */
export function builtinTools(options: BuiltinToolsOptions = {}): Tool[] {
  checkKeys(options);
  const tools: Tool[] = [];
  if (options.search) tools.push(searchTool(options.search) as Tool);
  if (options.visit !== false) tools.push(visitTool(visitOptions(options)) as Tool);
  const scholar = scholarOptions(options);
  if (scholar) tools.push(googleScholarTool(scholar) as Tool);
  if (options.openalex !== false) tools.push(openAlexTool(options.openalex ?? {}) as Tool);
  if (options.python !== false) tools.push(python(options.python ?? {}));
  if (options.shell !== false) tools.push(executeCommandTool(options.shell ?? {}) as Tool);
  tools.push(readFileTool(options.readFile ?? {}) as Tool, writeToFileTool() as Tool, editFileTool() as Tool);
  if (options.analyzeImage !== false) tools.push(analyzeImageTool(options.analyzeImage ?? {}) as Tool);
  if (options.imageBackend) {
    tools.push(generateImageTool({ ...options.generateImage, backend: options.imageBackend }) as Tool);
  }
  return tools;
}

/** The tools that never change the workspace or the outside world: the managed mode's auditor gets only these. */
export function readOnlyTools<T extends Tool>(tools: readonly T[]): T[] {
  return tools.filter((tool) => tool.readOnly);
}
