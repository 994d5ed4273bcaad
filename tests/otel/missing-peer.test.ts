import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Node, with tsx for the TypeScript sources and a resolve hook that answers `@opentelemetry/api` the way Node answers
 * a package that is not installed; the script prints what `instrument` rejected with.
 */
const HIDE_PEER = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  export async function resolve(specifier, context, next) {
    if (specifier === '@opentelemetry/api') {
      const error = new Error("Cannot find package '@opentelemetry/api' imported from " + context.parentURL);
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return next(specifier, context);
  }\`));
`;
const SCRIPT = `
const { instrument } = await import('./src/otel/index.ts');
const harness = { on: () => () => {}, captureContent: () => () => {} };
try {
  await instrument(harness);
  console.log(JSON.stringify({ resolved: true }));
} catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message }));
}
`;

describe('instrument without @opentelemetry/api', () => {
  it('rejects with missing-peer-dependency naming the package to install', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        `data:text/javascript,${encodeURIComponent(HIDE_PEER)}`,
        '--input-type=module',
        '-e',
        SCRIPT,
      ],
      { cwd: root },
    );
    const outcome = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(outcome.code).toBe('missing-peer-dependency');
    expect(outcome.message).toContain('horizon-harness/otel');
    expect(outcome.message).toContain('npm install @opentelemetry/api');
  });
});
