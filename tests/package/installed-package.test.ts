import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('the packed package', () => {
  // `npm pack` runs the `prepack` build, so this also checks that a tarball packed from a fresh clone holds dist/.
  it('packs with dist/, installs into an empty folder and works through import and require', async () => {
    const { stdout } = await run('bash', ['.ci/smoke-pack'], { maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('import ok');
    expect(stdout).toContain('require ok');
    expect(stdout).toContain('import peers ok');
    expect(stdout).toContain('require peers ok');
  }, 300_000);
});
