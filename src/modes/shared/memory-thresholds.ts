/**
 * The memory thresholds a run announces in `run-start`, so that a reader of its log (the viewer's context chart)
 * draws them where the run had them.
 * @module
 */
import type { RunStartEvent } from '../../events.js';
import { MemoryManager } from '../../memory/memory-manager.js';
import type { ExecutionMemory } from '../../memory/types.js';

/** The shipped memory's compression and emergency fractions; none for a custom memory, whose thresholds are its own. */
export function memoryThresholdsOf(memory: ExecutionMemory): Pick<RunStartEvent, 'memory'> {
  if (!(memory instanceof MemoryManager)) return {};
  const { compressAt, emergencyAt } = memory.options;
  return { memory: { compressAt, emergencyAt } };
}
