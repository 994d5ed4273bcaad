/** Durable runs: run stores, snapshots and what resuming re-does. @module */
export { FileRunStore, type FileRunStoreOptions } from './file-store.js';
export type {
  LoopCheckpoint,
  OptionsFingerprint,
  ResumeOptions,
  ResumeRedo,
  RunSnapshot,
  RunStore,
  ToolCallJournal,
} from './types.js';
