/**
 * What the pipeline's stages use of their run: its options, state, events, stop control, roles and snapshots.
 * @module
 */
import type { EmitEvent } from '../../events.js';
import type { ExecutorResult } from '../../contracts/executor.js';
import type { DataMark } from '../../prompts/datamark.js';
import type { Workspace } from '../../workspace/types.js';
import type { IterationBudget } from '../shared/iteration-budget.js';
import type { ResolvedHarnessOptions } from '../shared/options.js';
import type { PipelineState } from './pipeline-state.js';
import type { RoleWiring } from '../shared/role-wiring.js';
import type { RunControl } from '../shared/run-control.js';

/** One pipeline run as its stages see it. @internal */
export interface StageContext {
  readonly o: ResolvedHarnessOptions;
  /** The run's state: what a snapshot saves. Stages change it, then save it with {@link StageContext.checkpoint}. */
  readonly s: PipelineState;
  readonly runId: string;
  readonly task: string;
  readonly workspace: Workspace;
  readonly emit: EmitEvent;
  readonly control: RunControl;
  readonly roles: RoleWiring;
  readonly mark: DataMark;
  readonly budget: IterationBudget;
  /** Workspace-relative paths of the attachments. */
  readonly attachments: string[];
  /** Saves a snapshot of the run (with every executor loop in progress); a store failure stops the run. */
  checkpoint(stage: string): Promise<void>;
  /** Books a loop's iterations; its abort, timeout or store failure is the run's. */
  book(result: ExecutorResult, stage: string): void;
}
