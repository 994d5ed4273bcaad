import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** Absolute path of the shared fixtures folder (`../shared/fixtures` beside the checkout). */
export const FIXTURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/fixtures');

/** Absolute path of a file under the shared fixtures. */
export function fixturePath(...parts: string[]): string {
  return path.join(FIXTURES_DIR, ...parts);
}

/** A shared fixture's text. */
export function readFixture(...parts: string[]): string {
  return readFileSync(fixturePath(...parts), 'utf8');
}
