/**
 * The workspace: one directory per run, path safety, atomic writes, the artifact registry and file previews.
 * @module
 */
export { ArtifactRegistry } from './artifact-registry.js';
export { LocalWorkspace, LocalWorkspaceOptionsSchema, type LocalWorkspaceOptions } from './local-workspace.js';
export { previewFile, type PreviewOptions } from './preview/preview-file.js';
export type { AppendResult, ArtifactRecord, Workspace, WriteGuard, WriteOptions, WriteOrigin } from './types.js';
