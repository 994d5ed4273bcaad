import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_URL } from '../../src/project-links.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface PackageJson {
  repository?: { url?: string };
  homepage?: string;
  bugs?: { url?: string };
  scripts?: Record<string, string>;
}

async function packageJson(): Promise<PackageJson> {
  return JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;
}

/** The files `npm pack` would put in the tarball, without running the build (dist/ may or may not exist here). */
async function packedFiles(): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return pack.files.map((file) => file.path);
}

describe('package.json and the tarball', () => {
  it('names the repository, homepage and issue tracker, all from the one PROJECT_URL the code links to', async () => {
    const pkg = await packageJson();
    expect(pkg.repository?.url).toBe(`git+${PROJECT_URL}.git`);
    expect(pkg.homepage).toBe(`${PROJECT_URL}#readme`);
    expect(pkg.bugs?.url).toBe(`${PROJECT_URL}/issues`);
  });

  it('has no install scripts: the build runs in prepack, so installing the tarball runs nothing', async () => {
    const { scripts = {} } = await packageJson();
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(scripts).not.toHaveProperty(hook);
    expect(scripts.prepack).toBe('tsup');
  });

  it('ships LICENSE, CHANGELOG.md, README.md and every page the README links to', async () => {
    const files = await packedFiles();
    for (const file of ['LICENSE', 'CHANGELOG.md', 'README.md', 'package.json']) expect(files).toContain(file);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const relativeLinks = [...readme.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)].map((match) => match[1] as string);
    expect(relativeLinks.length).toBeGreaterThan(10);
    for (const link of relativeLinks) expect(files, `README links to ${link}`).toContain(link);
    expect(files.some((file) => file.startsWith('docs/api/'))).toBe(false);
  }, 60_000);
});
