import type { Message } from '../backend/types.js';
import type { MemoryScope } from './types.js';

/** A run's scope: the budget is per run and scope. */
type ScopeRef = Pick<MemoryScope, 'runId' | 'scope'>;

interface ScopeSpending {
  used: number;
  /** Tokens charged per tool call, so they can be given back when its result leaves the dialogue. */
  byCall: Map<string, number>;
}

/**
 * The file-preview budget (`fileParserTokens`) of each run and scope. It bounds how much file content a scope's
 * dialogue holds, so a preview that left the dialogue (summarised, pruned or aged away) gives its tokens back.
 * @internal
 */
export class FilePreviewBudget {
  private readonly scopes = new Map<string, ScopeSpending>();

  constructor(private readonly total: number) {}

  /** Tokens the scope may still spend on previews. */
  remaining(scope: ScopeRef): number {
    return Math.max(0, this.total - (this.scopes.get(keyOf(scope))?.used ?? 0));
  }

  /** Sets what one tool call's preview costs, replacing an earlier charge (a reservation) for the same call. */
  charge(scope: ScopeRef, callId: string, tokens: number): void {
    const key = keyOf(scope);
    let spending = this.scopes.get(key);
    if (!spending) {
      spending = { used: 0, byCall: new Map() };
      this.scopes.set(key, spending);
    }
    spending.used += tokens - (spending.byCall.get(callId) ?? 0);
    spending.byCall.set(callId, tokens);
  }

  /** Gives back the charges of the tool results in `before` that are not (as the same object) in `after`. */
  releaseRemoved(scope: ScopeRef, before: readonly Message[], after: readonly Message[]): void {
    const spending = this.scopes.get(keyOf(scope));
    // The common case, a scope that read no file, costs nothing.
    if (!spending || spending.byCall.size === 0) return;
    const kept = new Set(after);
    for (const message of before) {
      if (message.role !== 'tool' || kept.has(message)) continue;
      const tokens = spending.byCall.get(message.toolCallId);
      if (tokens === undefined) continue;
      spending.used -= tokens;
      spending.byCall.delete(message.toolCallId);
    }
  }
}

function keyOf(scope: ScopeRef): string {
  return `${scope.runId}\u0000${scope.scope}`;
}
