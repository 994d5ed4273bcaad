/**
 * Debian's `chromium` for the viewer's browser tests, driven by playwright-core. Where it is missing the tests skip,
 * except under `CI=true`, where `.ci/run` installs it and a missing browser is a failure.
 */
import { spawnSync } from 'node:child_process';
import { type Browser, chromium } from 'playwright-core';

/** The browser binary: `CHROMIUM_BIN`, else Debian's. */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** Whether chromium can be started here, and why not. */
export function probeChromium(): { available: boolean; reason: string } {
  const probe = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return {
      available: false,
      reason: `${CHROMIUM} is not installed; install the Debian package chromium (apt-get install chromium) to run the viewer's browser tests`,
    };
  }
  return { available: true, reason: probe.stdout.trim() };
}

/** Launches headless chromium; as root it needs --no-sandbox (tests only: the pages are our own). */
export function launchChromium(): Promise<Browser> {
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({ executablePath: CHROMIUM, args: asRoot ? ['--no-sandbox'] : [] });
}
