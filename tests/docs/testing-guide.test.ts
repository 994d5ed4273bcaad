import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

describe('docs/testing.md', () => {
  // The guide's complete example must be the test that runs in this suite, so it cannot rot.
  it('shows word-count-tool.test.ts verbatim as its complete example', async () => {
    const guide = await readFile(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const example = await readFile(new URL('./word-count-tool.test.ts', import.meta.url), 'utf8');
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toContain(example);
  });
});
