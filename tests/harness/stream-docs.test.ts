import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HARNESS_EVENT_TYPES } from '../../src/events.js';

const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
const sections = new Set([...doc.matchAll(/^### (\S+)$/gm)].map((match) => match[1]));

describe('docs/events.md', () => {
  it.each([...HARNESS_EVENT_TYPES])('has a section for the "%s" event', (type) => {
    expect(sections.has(type)).toBe(true);
  });

  it('documents no event type the harness does not have', () => {
    const known = new Set<string>(HARNESS_EVENT_TYPES);
    const headings = [...sections].filter((heading) => /^[a-z]+(-[a-z]+)*$/.test(heading ?? ''));
    expect(headings.filter((heading) => !known.has(heading ?? ''))).toEqual([]);
  });

  it('documents harness.stream()', () => {
    expect(doc).toContain('## The streaming face: `harness.stream()`');
  });
});
