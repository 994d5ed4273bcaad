import { describe, expect, it } from 'vitest';
import type { Message, ToolSpec } from '../../src/backend/types.js';
import type { EventInput } from '../../src/events.js';
import {
  CALIBRATION_CEILING,
  CALIBRATION_FLOOR,
  CALIBRATION_MARGIN,
  MIN_CALIBRATION_TOKENS,
  MIN_REPORTED_SHARE,
  UsageCalibration,
} from '../../src/memory/calibration.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { TokenCounter } from '../../src/memory/token-counter.js';
import { deterministicText, fakeBackend, hostWorkspace, quarterTokenizer, round, scopeFor } from './helpers.js';

const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 1 });

describe('UsageCalibration', () => {
  it('starts at the configured factor and learns the running ratio of reported to counted tokens, plus a margin', () => {
    const calibration = new UsageCalibration(1.2);
    const backend = fakeBackend(32_000);
    expect(calibration.factor(backend)).toBe(1.2);
    expect(calibration.factor()).toBe(1.2);
    // Counted 12 000 with factor 1.2: 10 000 uncalibrated; the provider said 13 000.
    calibration.observe(backend, 12_000, usage(13_000));
    expect(calibration.factor(backend)).toBeCloseTo(1.3 * CALIBRATION_MARGIN, 10);
    // A second call is averaged in by tokens: (13 000 + 11 000) / (10 000 + 10 000).
    calibration.observe(backend, Math.round(10_000 * calibration.factor(backend)), usage(11_000));
    expect(calibration.factor(backend)).toBeCloseTo(1.2 * CALIBRATION_MARGIN, 10);
    expect(calibration.factor()).toBe(1.2);
  });

  it('keeps one factor per backend object', () => {
    const calibration = new UsageCalibration(1);
    const [a, b] = [fakeBackend(32_000), fakeBackend(32_000)];
    calibration.observe(a, 10_000, usage(9_000));
    expect(calibration.factor(a)).toBeCloseTo(0.9 * CALIBRATION_MARGIN, 10);
    expect(calibration.factor(b)).toBe(1);
  });

  it('ignores calls without usage and tiny ones', () => {
    const calibration = new UsageCalibration(1);
    const backend = fakeBackend(32_000);
    calibration.observe(backend, 50_000, usage(0));
    calibration.observe(backend, 50_000, { inputTokens: Number.NaN, outputTokens: 0 });
    calibration.observe(backend, MIN_CALIBRATION_TOKENS - 1, usage(5 * MIN_CALIBRATION_TOKENS));
    expect(calibration.factor(backend)).toBe(1);
  });

  it('raises counts up to the ceiling, and lowers them only down to the floor', () => {
    const calibration = new UsageCalibration(1);
    const [huge, low] = [fakeBackend(32_000), fakeBackend(32_000)];
    calibration.observe(huge, 10_000, usage(1_000_000));
    calibration.observe(low, 10_000, usage(6_000));
    expect(calibration.factor(huge)).toBe(CALIBRATION_CEILING);
    expect(calibration.factor(low)).toBe(CALIBRATION_FLOOR);
  });

  it('lowers counts further only when the configured factor starts lower', () => {
    const calibration = new UsageCalibration(0.5);
    const backend = fakeBackend(32_000);
    calibration.observe(backend, 5_000, usage(6_000));
    expect(calibration.factor(backend)).toBeCloseTo(0.6 * CALIBRATION_MARGIN, 10);
  });

  it('ignores a report under half the local count, warning once per backend with the figures', () => {
    const calibration = new UsageCalibration(1);
    const [ollama, other] = [fakeBackend(32_000), fakeBackend(32_000)];
    const events: EventInput[] = [];
    const report = {
      runId: 'run-1',
      purpose: 'execute' as const,
      scope: 'subtask-1',
      emit: (e: EventInput) => events.push(e),
    };
    calibration.observe(ollama, 20_000, usage(10), report);
    calibration.observe(ollama, 30_000, usage(10), report);
    calibration.observe(ollama, 20_000, usage(Math.round(MIN_REPORTED_SHARE * 20_000) - 1), report);
    expect(calibration.factor(ollama)).toBe(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'run-warning',
      runId: 'run-1',
      code: 'usage-under-reported',
      purpose: 'execute',
      scope: 'subtask-1',
    });
    const message = (events[0] as { message: string }).message;
    expect(message).toContain('fake fake-1 reported 10 input tokens for a request of 20000 tokens');
    expect(message).toContain('ignored');
    // Another backend is warned about on its own; a report of at least half is learned from.
    calibration.observe(other, 20_000, usage(10), report);
    expect(events).toHaveLength(2);
    calibration.observe(other, 20_000, usage(MIN_REPORTED_SHARE * 20_000));
    expect(calibration.factor(other)).toBe(CALIBRATION_FLOOR);
  });
});

describe('MemoryManager calibration', () => {
  const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
  const prefix: Message[] = [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'ORIGINAL REQUEST: compare three libraries' },
  ];

  it("counts each backend's requests with its own factor, tokenizing every message once", () => {
    const seen: string[] = [];
    const memory = new MemoryManager({ tokenizer: { count: (text) => (seen.push(text), Math.ceil(text.length / 4)) } });
    const [strict, plain] = [fakeBackend(32_000), fakeBackend(32_000)];
    const dialogue = [...prefix, ...round('a', ['o'.repeat(20_000)])];
    const raw = memory.countRequest(dialogue, tools);
    memory.observeUsage(strict, raw, usage(Math.round(raw * 1.3)));
    const tokenized = seen.length;
    expect(memory.countRequest(dialogue, tools, strict)).toBe(
      Math.ceil(raw * (Math.round(raw * 1.3) / raw) * CALIBRATION_MARGIN),
    );
    expect(memory.countRequest(dialogue, tools, plain)).toBe(raw);
    expect(seen.length).toBe(tokenized);
  });

  it('keeps a model whose tokenizer counts 30 % more under its window, as its provider counts', async () => {
    const counter = new TokenCounter(quarterTokenizer);
    const provider = (messages: Message[], specs: ToolSpec[] = []) => Math.ceil(counter.request(messages, specs) * 1.3);
    const backend = fakeBackend(
      32_000,
      () => 'Did the probes.',
      (request) => usage(provider(request.messages)),
    );
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const dialogue = [...prefix, ...Array.from({ length: 12 }, (_, i) => round(`r${i}`, ['o'.repeat(7_200)])).flat()];
    // Uncalibrated, the dialogue fits under the compression threshold; as the provider counts, it leaves no room
    // for the answer.
    const request = { messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 4_000 };
    expect(memory.countRequest(dialogue, tools)).toBeLessThan(28_000);
    expect(provider(dialogue, tools) + 4_000).toBeGreaterThan(32_000);
    memory.observeUsage(backend, 20_000, usage(26_000));
    const fitted = await memory.fitRequest(request, scopeFor(backend, hostWorkspace()));
    expect(provider(fitted, tools) + 4_000).toBeLessThanOrEqual(32_000);
  });

  it('uses what the summary call itself taught about a backend that also summarises', async () => {
    const counter = new TokenCounter(quarterTokenizer);
    const provider = (messages: Message[], specs: ToolSpec[] = []) => Math.ceil(counter.request(messages, specs) * 1.3);
    const backend = fakeBackend(
      32_000,
      () => 'Did the probes.',
      (request) => usage(provider(request.messages)),
    );
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    // Five rounds of 7 700 tokens: the three kept by a compression fit the limit uncalibrated, not as the provider counts.
    const dialogue = [
      ...prefix,
      ...Array.from({ length: 5 }, (_, i) => round(`r${i}`, ['o'.repeat(4 * 7_700)])).flat(),
    ];
    const scope = scopeFor(backend, hostWorkspace());
    const fitted = await memory.fitRequest(
      { messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 4_000 },
      scope,
    );
    expect(backend.calls).toHaveLength(1);
    expect(provider(fitted, tools) + 4_000).toBeLessThanOrEqual(32_000);
    expect(scope.events.map((e) => e.type)).toEqual(['llm-request', 'llm-response', 'memory-compress', 'memory-prune']);
  });

  it('keeps every request under the window when the provider reports 10 input tokens per call', async () => {
    const backend = fakeBackend(
      16_000,
      () => 'Summary of the probes.',
      () => usage(10),
    );
    const memory = new MemoryManager({ tokenizer: quarterTokenizer });
    const truth = new TokenCounter(quarterTokenizer);
    const scope = scopeFor(backend, hostWorkspace());
    let dialogue: Message[] = [...prefix];
    const sizes: number[] = [];
    for (let step = 0; step < 10; step++) {
      dialogue = [...dialogue, ...round(`r${step}`, [deterministicText(step, 12_000)])];
      dialogue = await memory.fitRequest(
        { messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 2_000 },
        scope,
      );
      // As the executor does: the exact count and the provider's figure go back to the memory.
      memory.observeUsage(backend, memory.countRequest(dialogue, tools, backend), usage(10), scope);
      sizes.push(truth.request(dialogue, tools) + 2_000);
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16_000);
    expect(memory.countRequest(dialogue, tools, backend)).toBe(memory.countRequest(dialogue, tools));
    const warnings = scope.events.filter((e) => e.type === 'run-warning');
    expect(warnings).toEqual([expect.objectContaining({ code: 'usage-under-reported' })]);
  });

  it('starts from the configured calibration', () => {
    const memory = new MemoryManager({ tokenizer: quarterTokenizer, calibration: 1.5 });
    const messages: Message[] = [{ role: 'user', content: 'x'.repeat(4_000) }];
    const raw = new TokenCounter(quarterTokenizer).request(messages, []);
    expect(memory.countRequest(messages, [], fakeBackend(32_000))).toBe(Math.ceil(raw * 1.5));
    expect(memory.countRequest(messages, [])).toBe(Math.ceil(raw * 1.5));
  });
});
