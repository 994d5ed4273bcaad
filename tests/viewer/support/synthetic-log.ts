/**
 * A synthetic event log of a long single loop, built without running anything: `iterations` rounds of model call and
 * tool call (four events each), with a compression every `compressEvery` calls. For page-size checks only; the other
 * tests use real runs.
 */
import type { HarnessEvent } from '../../../src/events.js';

export function syntheticLongLog(iterations: number, compressEvery: number): HarnessEvent[] {
  const runId = 'synthetic-run';
  let t = 1_700_000_000_000;
  let seq = 0;
  const base = () => ({ runId, timestamp: (t += 7), seq: ++seq });
  const scope = { purpose: 'execute' as const, scope: 'subtask-1' };
  const events: HarnessEvent[] = [
    {
      ...base(),
      type: 'run-start',
      mode: 'pipeline',
      goal: 'A long loop',
      workspace: '/tmp/w',
      decomposition: false,
      verification: false,
      warnings: [],
    },
    {
      ...base(),
      type: 'subtask-start',
      index: 0,
      subtask: { id: 'subtask-1', title: 'Complete the request', objective: 'o', expectedOutput: 'e' },
    },
  ];
  for (let i = 1; i <= iterations; i += 1) {
    const size = 2_000 + (i % compressEvery) * 500;
    if (i % compressEvery === 0) {
      events.push({
        ...base(),
        ...scope,
        type: 'memory-compress',
        tokensBefore: size,
        tokensAfter: 2_000,
        roundsSummarized: compressEvery - 3,
      });
    }
    events.push(
      {
        ...base(),
        ...scope,
        type: 'llm-request',
        callId: `c${i}`,
        provider: 'p',
        modelId: 'm',
        messages: i,
        requestTokens: size,
      },
      {
        ...base(),
        ...scope,
        type: 'llm-response',
        callId: `c${i}`,
        finishReason: 'tool-calls',
        usage: { inputTokens: size, outputTokens: 40 },
        toolCalls: 1,
        durationMs: 5,
      },
      {
        ...base(),
        ...scope,
        type: 'tool-call',
        callId: `t${i}`,
        toolName: 'write_file',
        arguments: `{"path":"notes/${i}.md","content":"${'x'.repeat(300)}"}`,
      },
      {
        ...base(),
        ...scope,
        type: 'tool-result',
        callId: `t${i}`,
        toolName: 'write_file',
        isError: false,
        durationMs: 1,
        outputChars: 30,
        files: [`notes/${i}.md`],
      },
    );
  }
  return events;
}
