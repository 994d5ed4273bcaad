/**
 * Loading an optional peer dependency on first use, so that the core import never loads it and a missing one is
 * named in a clear error instead of a bare module-resolution failure.
 * @module
 */
import { HarnessError } from '../errors.js';

/**
 * Runs `load` (a dynamic `import()` of the peer) and returns its module; when the package cannot be resolved,
 * throws `missing-peer-dependency` naming the package to install and the subpath that needs it. Any other failure
 * of the import is rethrown as it is.
 */
export async function loadPeer<T>(packageName: string, subpath: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isModuleNotFound(error, packageName)) throw error;
    throw new HarnessError(
      'missing-peer-dependency',
      `horizon-harness/${subpath} needs the optional peer dependency "${packageName}", which is not installed. ` +
        `Install it next to horizon-harness: npm install ${packageName}`,
      { cause: error },
    );
  }
}

function isModuleNotFound(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(packageName);
}
