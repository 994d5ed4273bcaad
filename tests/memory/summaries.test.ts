import { describe, expect, it } from 'vitest';
import type { Message, ToolSpec } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import type { EventInput } from '../../src/events.js';
import { CALIBRATION_MARGIN } from '../../src/memory/calibration.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { TokenCounter } from '../../src/memory/token-counter.js';
import {
  deterministicText,
  fakeBackend,
  hostWorkspace,
  invocation,
  quarterTokenizer,
  round,
  scopeFor,
} from './helpers.js';

const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
const prefix: Message[] = [
  { role: 'system', content: 'You are an agent.' },
  { role: 'user', content: 'ORIGINAL REQUEST: compare three libraries' },
];
/** 20 rounds of 2 000 tokens (quarter tokenizer): well over any threshold of a 32 000-token window. */
const longDialogue = () => [
  ...prefix,
  ...Array.from({ length: 20 }, (_, i) => round(`r${i}`, ['o'.repeat(8_000)])).flat(),
];

const summarizerWarnings = (events: EventInput[]) =>
  events.filter((e) => e.type === 'run-warning' && e.code === 'summarizer-failed') as Array<
    Extract<EventInput, { type: 'run-warning' }>
  >;

describe('a failing summariser', () => {
  it('is reported once per run with its error, while every fallback is still marked', async () => {
    const summarizer = fakeBackend(32_000, () => {
      throw new HarnessError('authentication', 'HTTP 401: invalid API key');
    });
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const run1 = scopeFor(fakeBackend(32_000), hostWorkspace(), summarizer);
    await memory.fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, run1);
    await memory.fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, run1);
    const page = await memory.boundObservation(invocation(deterministicText(1, 30_000), 'visit'), run1);
    expect(page).toContain('characters omitted');
    expect(summarizer.calls).toHaveLength(3);
    const warnings = summarizerWarnings(run1.events);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ runId: 'run-1', purpose: 'execute', scope: 'subtask-1' });
    expect(warnings[0]!.message).toContain('HTTP 401: invalid API key');
    const prunes = run1.events.filter((e) => e.type === 'memory-prune');
    expect(prunes.map((e) => e.type === 'memory-prune' && e.reason)).toEqual(['summary-failed', 'summary-failed']);

    const run2 = { ...scopeFor(fakeBackend(32_000), hostWorkspace(), summarizer), runId: 'run-2' };
    await memory.fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, run2);
    expect(summarizerWarnings(run2.events)).toEqual([expect.objectContaining({ runId: 'run-2' })]);
  });

  it('says nothing when it merely answers with nothing (no error to report)', async () => {
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const scope = scopeFor(
      fakeBackend(32_000, () => '   '),
      hostWorkspace(),
    );
    await memory.fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, scope);
    expect(summarizerWarnings(scope.events)).toEqual([]);
    expect(scope.events).toContainEqual(expect.objectContaining({ type: 'memory-prune', reason: 'summary-failed' }));
  });

  it('still propagates an abort, without a warning', async () => {
    const controller = new AbortController();
    const summarizer = fakeBackend(32_000, () => {
      controller.abort();
      throw new Error('request aborted');
    });
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const scope = { ...scopeFor(fakeBackend(32_000), hostWorkspace(), summarizer), signal: controller.signal };
    const error = await memory
      .fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, scope)
      .catch((e: unknown) => e);
    expect(HarnessError.isInstance(error) && error.code).toBe('aborted');
    expect(summarizerWarnings(scope.events)).toEqual([]);
  });
});

describe('the summariser call', () => {
  it("goes through the observed model call: the scope's sampling, its output reserve, its events and its usage", async () => {
    const counter = new TokenCounter(quarterTokenizer);
    // The summariser's provider counts 30 % more than the tokenizer here.
    const summarizer = fakeBackend(
      32_000,
      () => 'Did 17 probes; found nothing.',
      (request) => ({ inputTokens: Math.round(counter.request(request.messages, []) * 1.3), outputTokens: 9 }),
    );
    const backend = fakeBackend(32_000);
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const scope = { ...scopeFor(backend, hostWorkspace(), summarizer), sampling: { temperature: 0.2, topP: 0.9 } };
    await memory.fitRequest({ messages: longDialogue(), tools, protectedCount: 2 }, scope);

    const [call] = summarizer.calls;
    expect(call).toMatchObject({ purpose: 'summarize', temperature: 0.2, topP: 0.9, maxOutputTokens: 4_000 });
    const counted = counter.request(call!.messages, []);
    expect(scope.events.find((e) => e.type === 'llm-request')).toMatchObject({
      purpose: 'summarize',
      scope: 'subtask-1',
      provider: 'fake',
      requestTokens: counted,
      maxOutputTokens: 4_000,
    });
    expect(scope.events.find((e) => e.type === 'llm-response')).toMatchObject({
      purpose: 'summarize',
      usage: { outputTokens: 9 },
    });
    // The usage calibrated the summariser's counts, and only the summariser's.
    const probe: Message[] = [{ role: 'user', content: 'x'.repeat(40_000) }];
    const raw = counter.request(probe, []);
    expect(memory.countRequest(probe, [], summarizer)).toBe(
      Math.ceil(raw * (Math.round(counted * 1.3) / counted) * CALIBRATION_MARGIN),
    );
    expect(memory.countRequest(probe, [], backend)).toBe(raw);
  });

  it('sends no sampling when the scope has none', async () => {
    const summarizer = fakeBackend(32_000, () => 'summary');
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    await memory.fitRequest(
      { messages: longDialogue(), tools, protectedCount: 2 },
      scopeFor(fakeBackend(32_000), hostWorkspace(), summarizer),
    );
    expect(summarizer.calls[0]).not.toHaveProperty('temperature');
    expect(summarizer.calls[0]).not.toHaveProperty('topP');
  });
});
