/**
 * Recognising a {@link RunStore} passed as an option.
 * @module
 */
import type { RunStore } from './types.js';

/** Whether `value` has the four methods of a {@link RunStore}. @internal */
export function isRunStore(value: unknown): value is RunStore {
  if (typeof value !== 'object' || value === null) return false;
  const store = value as Record<string, unknown>;
  return ['save', 'load', 'list', 'delete'].every((method) => typeof store[method] === 'function');
}
