import type { ArtifactRecord, Workspace } from '../../src/workspace/types.js';

/** A workspace whose file operations are never reached by these tests; only `root` matters here. */
export function stubWorkspace(root = '/tmp/horizon-harness-test-workspace'): Workspace {
  const unreachable = (): never => {
    throw new Error('stubWorkspace: file operations are not part of this test');
  };
  return {
    root,
    resolve: async () => unreachable(),
    readFile: async () => unreachable(),
    writeFile: async (): Promise<ArtifactRecord> => unreachable(),
    appendFile: async () => unreachable(),
    copyIn: async () => unreachable(),
    recordArtifact: async () => unreachable(),
    artifacts: () => [],
    exists: async () => false,
    preview: async () => unreachable(),
  };
}
