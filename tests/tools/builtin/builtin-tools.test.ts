import { describe, expect, it } from 'vitest';
import { builtinTools, readOnlyTools, type ImageBackend } from '../../../src/tools/builtin/index.js';
import type { SearchProvider } from '../../../src/tools/builtin/search-providers/types.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { makePng } from '../../workspace/support/make-files.js';

const webOnly: SearchProvider = { name: 'web-only', supports: ['web'], search: async () => [] };
const webAndScholar: SearchProvider = { name: 'both', supports: ['web', 'scholar'], search: async () => [] };
const images: ImageBackend = { generate: async () => ({ data: makePng(1, 1), mediaType: 'image/png' }) };

const names = (tools: readonly { name: string }[]): string[] => tools.map((tool) => tool.name);

describe('builtinTools', () => {
  it('gives the paper tool set in Table 5 order when every option is present', () => {
    const tools = builtinTools({ search: { provider: webAndScholar }, imageBackend: images });
    expect(names(tools)).toEqual([
      'search',
      'visit',
      'google_scholar',
      'openalex',
      'python_interpreter',
      'execute_command',
      'read_file',
      'write_to_file',
      'edit_file',
      'analyze_image',
      'generate_image',
    ]);
    expect(() => new ToolRegistry(tools)).not.toThrow();
  });

  it('leaves out the tools whose required option is missing', () => {
    expect(names(builtinTools())).toEqual([
      'visit',
      'openalex',
      'python_interpreter',
      'execute_command',
      'read_file',
      'write_to_file',
      'edit_file',
      'analyze_image',
    ]);
  });

  it('offers google_scholar only with a provider that supports scholar queries, or an explicit one', () => {
    expect(names(builtinTools({ search: { provider: webOnly } }))).not.toContain('google_scholar');
    expect(names(builtinTools({ scholar: { provider: webAndScholar } }))).toContain('google_scholar');
    expect(names(builtinTools({ search: { provider: webAndScholar }, scholar: false }))).not.toContain(
      'google_scholar',
    );
  });

  it('leaves out every tool set to false', () => {
    const tools = builtinTools({
      visit: false,
      openalex: false,
      python: false,
      shell: false,
      analyzeImage: false,
    });
    expect(names(tools)).toEqual(['read_file', 'write_to_file', 'edit_file']);
  });

  it('passes per-tool options through', () => {
    const tools = builtinTools({ python: false, shell: false, imageBackend: images, readFile: { maxChars: 300 } });
    expect(names(tools)).toContain('generate_image');
    expect(() => builtinTools({ python: false, shell: { timeoutMs: -1 } })).toThrow(/timeoutMs/);
  });

  it('fails clearly when python3 is missing and the tool is enabled, naming the way out', () => {
    let error: unknown;
    try {
      builtinTools({ python: { python: '/nonexistent/python3' } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'tool-unavailable' });
    expect((error as Error).message).toContain('builtinTools({ python: false })');
  });
});

describe('readOnlyTools', () => {
  it('keeps only the tools that cannot change the workspace or the world', () => {
    const all = builtinTools({ search: { provider: webAndScholar }, imageBackend: images });
    expect(names(readOnlyTools(all))).toEqual([
      'search',
      'visit',
      'google_scholar',
      'openalex',
      'read_file',
      'analyze_image',
    ]);
    expect(readOnlyTools([])).toEqual([]);
  });
});
