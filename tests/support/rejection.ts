import { expect } from 'vitest';
import { HarnessError } from '../../src/errors.js';

/** The HarnessError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function harnessRejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  return error as HarnessError;
}
