import { describe, expect, it } from 'vitest';
import { headTail, searchSnippets } from '../../src/memory/truncate.js';

describe('headTail', () => {
  it('returns a text that fits unchanged', () => {
    expect(headTail('short', 10)).toBe('short');
  });

  it('keeps head and tail with a marker naming the omitted count and the note', () => {
    const text = `${'A'.repeat(5000)}${'M'.repeat(5000)}${'Z'.repeat(5000)}`;
    const out = headTail(text, 1000, 'full output saved to x.txt');
    expect(out.length).toBeLessThanOrEqual(1000);
    expect(out.startsWith('A')).toBe(true);
    expect(out.endsWith('Z')).toBe(true);
    const omitted = Number(/\[… (\d+) characters omitted; full output saved to x\.txt …\]/.exec(out)?.[1]);
    expect(omitted + out.length - /\n\n\[…[^\]]*…\]\n\n/.exec(out)![0].length).toBe(text.length);
  });

  it('never splits a surrogate pair', () => {
    const out = headTail('😀'.repeat(2000), 301);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(out).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});

describe('searchSnippets', () => {
  it('keeps whole JSON entries and says how many were shown', () => {
    const results = Array.from({ length: 40 }, (_, i) => ({
      title: `Result ${i}`,
      url: `https://e.com/${i}`,
      snippet: 'x'.repeat(150),
    }));
    const out = searchSnippets(JSON.stringify({ organic: results }), 1500, 'saved');
    expect(out.length).toBeLessThanOrEqual(1500);
    const lines = out.split('\n\n').filter((line) => line.startsWith('{'));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(out).toContain(`[${lines.length} of 40 results shown; the rest were omitted; saved]`);
  });

  it('keeps whole blank-line-separated text entries', () => {
    const entries = Array.from(
      { length: 30 },
      (_, i) => `${i}. Title ${i}\nhttps://e.com/${i}\n${'snippet '.repeat(20)}`,
    );
    const out = searchSnippets(entries.join('\n\n'), 1200);
    const kept = out.split('\n\n').slice(0, -1);
    kept.forEach((entry, i) => expect(entry).toBe(entries[i]));
  });

  it('cuts a single oversized entry head-and-tail', () => {
    const out = searchSnippets(JSON.stringify([{ snippet: 'y'.repeat(5000) }]), 800);
    expect(out.length).toBeLessThanOrEqual(800);
    expect(out).toContain('characters omitted');
  });
});
