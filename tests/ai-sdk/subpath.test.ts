import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SOURCES = path.resolve(import.meta.dirname, '../../src/ai-sdk');

describe('horizon-harness/ai-sdk', () => {
  it('imports only the types of @ai-sdk/provider (nothing of the AI SDK loads at run time)', () => {
    // Import statements start a line; the TSDoc examples (` * import …`) do not count.
    const imports = readdirSync(SOURCES)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => {
        const text = readFileSync(path.join(SOURCES, name), 'utf8');
        return [...text.matchAll(/^import\s+(type\b)?[^;]*?from\s+'((?:@ai-sdk\/|ai\/?)[^']*)'/gm)].map(
          (match) => `${name}: ${match[1] ? 'type' : 'value'} import of ${match[2]}`,
        );
      });
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((entry) => entry.includes(': value import'))).toEqual([]);
  });
});
