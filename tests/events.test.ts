import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { HarnessEvents, eventSender } from '../src/event-bus.js';
import { HARNESS_EVENT_TYPES, type HarnessEvent, type ToolCallEvent } from '../src/events.js';

const toolCallEvent: ToolCallEvent = {
  type: 'tool-call',
  runId: 'r1',
  timestamp: 1,
  purpose: 'execute',
  scope: 'subtask-1',
  callId: 'c1',
  toolName: 'echo',
  arguments: '{}',
};

describe('HarnessEvents', () => {
  it('delivers typed events to listeners of that type only', () => {
    const events = new HarnessEvents();
    const onTool = vi.fn();
    const onRun = vi.fn();
    events.on('tool-call', (event) => {
      expectTypeOf(event).toEqualTypeOf<ToolCallEvent>();
      onTool(event.toolName);
    });
    events.on('run-start', onRun);
    events.send(toolCallEvent);
    expect(onTool).toHaveBeenCalledWith('echo');
    expect(onRun).not.toHaveBeenCalled();
  });

  it('once fires a single time; off and the returned function remove listeners', () => {
    const events = new HarnessEvents();
    const once = vi.fn();
    const viaOff = vi.fn();
    const viaDispose = vi.fn();
    events.once('tool-call', once);
    events.on('tool-call', viaOff);
    const dispose = events.on('tool-call', viaDispose);
    events.send(toolCallEvent);
    events.off('tool-call', viaOff);
    dispose();
    events.send(toolCallEvent);
    expect(once).toHaveBeenCalledTimes(1);
    expect(viaOff).toHaveBeenCalledTimes(1);
    expect(viaDispose).toHaveBeenCalledTimes(1);
    expect(events.listenerCount('tool-call')).toBe(0);
  });

  it('onAny receives every event type until disposed', () => {
    const events = new HarnessEvents();
    const seen: string[] = [];
    const dispose = events.onAny((event) => seen.push(event.type));
    events.send(toolCallEvent);
    events.send({
      type: 'run-error',
      runId: 'r1',
      timestamp: 2,
      error: { code: 'internal', message: 'x' },
      stage: 'plan',
    });
    dispose();
    events.send(toolCallEvent);
    expect(seen).toEqual(['tool-call', 'run-error']);
    for (const type of HARNESS_EVENT_TYPES) expect(events.listenerCount(type)).toBe(0);
  });

  it('a throwing listener does not break emission or the other listeners', () => {
    const onListenerError = vi.fn();
    const events = new HarnessEvents({ onListenerError });
    const after = vi.fn();
    events.on('tool-call', () => {
      throw new Error('listener bug');
    });
    events.on('tool-call', after);
    expect(() => events.send(toolCallEvent)).not.toThrow();
    expect(after).toHaveBeenCalledTimes(1);
    expect(onListenerError).toHaveBeenCalledWith(expect.objectContaining({ message: 'listener bug' }), toolCallEvent);
  });

  it('survives an error hook that throws too', () => {
    const events = new HarnessEvents({
      onListenerError: () => {
        throw new Error('hook bug');
      },
    });
    events.on('tool-call', () => {
      throw new Error('listener bug');
    });
    expect(() => events.send(toolCallEvent)).not.toThrow();
  });

  it('eventSender stamps the timestamp from the given clock', () => {
    const events = new HarnessEvents();
    const seen: HarnessEvent[] = [];
    events.onAny((event) => seen.push(event));
    const emit = eventSender(events, () => 42);
    const { timestamp: _ignored, ...input } = toolCallEvent;
    emit(input);
    expect(seen).toEqual([{ ...toolCallEvent, timestamp: 42 }]);
  });

  it('lists every event name of the architecture', () => {
    expect([...HARNESS_EVENT_TYPES].sort()).toEqual(
      [
        'run-start',
        'plan-created',
        'subtask-start',
        'subtask-attempt',
        'llm-request',
        'llm-retry',
        'text-delta',
        'reasoning-delta',
        'tool-call-delta',
        'llm-response',
        'tool-call',
        'tool-result',
        'memory-truncate',
        'memory-compress',
        'memory-prune',
        'cache-break',
        'subtask-finish',
        'synthesis-finish',
        'verify-finish',
        'repair-start',
        'repair-finish',
        'manager-decision',
        'audit-finish',
        'integrity-violation',
        'run-warning',
        'run-finish',
        'run-error',
        'run-resume',
      ].sort(),
    );
  });
});
