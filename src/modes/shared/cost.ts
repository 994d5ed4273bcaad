/**
 * What a run's calls cost and `limits.maxCost`: the prices of each role's calls, their checks at `createHarness`, and
 * the gate that refuses a call that could take the run past its limit.
 * @module
 * @internal
 */
import { BackendPricingSchema, formatCost, samePricing, worstCaseCost } from '../../backend/pricing.js';
import type { BackendPricing, LlmBackend, Purpose } from '../../backend/types.js';
import { HarnessError } from '../../errors.js';
import { runBackendView, type CallGate, type PlannedCall } from '../../llm/call-gate.js';
import { ROLE_NAMES, type ResolvedHarnessOptions } from './options.js';
import { backendOfRole } from './role-backends.js';
import type { RunControl } from './run-control.js';
import { docsUrl } from '../../project-links.js';

type CostOptions = Pick<ResolvedHarnessOptions, 'backend' | 'roles' | 'pricing' | 'limits'>;

/** The prices of a role's calls and where they come from (for messages). */
interface RolePrice {
  pricing: BackendPricing | undefined;
  source: string;
  /** Whether the prices are the backend's own (unchecked until now) rather than the validated `pricing` option. */
  fromBackend: boolean;
}

/**
 * The prices of a role's calls: `pricing.roles[role]`; else, when the role uses the main backend, the top-level
 * `pricing` prices; else the `pricing` of the role's backend.
 */
function priceOfRole(o: CostOptions, role: Purpose): RolePrice {
  const p = o.pricing;
  const own = p?.roles[role];
  if (p && own) {
    return { pricing: { currency: p.currency, ...own }, source: `pricing.roles.${role}`, fromBackend: false };
  }
  const backend = backendOfRole(o, role);
  if (p && backend === o.backend && p.inputPerMTok !== undefined && p.outputPerMTok !== undefined) {
    const { currency, inputPerMTok, outputPerMTok, cachedInputPerMTok, cacheWritePerMTok } = p;
    const cached = cachedInputPerMTok === undefined ? {} : { cachedInputPerMTok };
    const writes = cacheWritePerMTok === undefined ? {} : { cacheWritePerMTok };
    const pricing = { currency, inputPerMTok, outputPerMTok, ...cached, ...writes };
    return { pricing, source: 'pricing', fromBackend: false };
  }
  const which = backend === o.backend ? 'backend' : `roles.${role}`;
  const source = `the pricing of ${which} (${backend.provider} ${backend.modelId})`;
  return { pricing: backend.pricing, source, fromBackend: true };
}

/**
 * Checks what the prices of a run must satisfy, throwing `invalid-options`: a backend's own `pricing` is well-formed;
 * all prices are in one currency (a run's cost is one sum); `limits.maxCost` has a price for every role, since a
 * call without one could cost anything.
 */
export function checkCostOptions(o: CostOptions): void {
  const prices = ROLE_NAMES.map((role) => ({ role, ...priceOfRole(o, role) }));
  for (const { pricing, source, fromBackend } of prices) {
    const parsed = pricing && fromBackend ? BackendPricingSchema.safeParse(pricing) : undefined;
    if (parsed && !parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.join('.') || 'pricing';
      throw invalid(`${source} is not valid: \`${field}\` ${issue?.message ?? 'is invalid'}`);
    }
  }
  const currencies = new Map<string, string>();
  for (const { pricing, source } of prices) if (pricing) currencies.set(pricing.currency, source);
  if (currencies.size > 1) {
    const listed = [...currencies].map(([currency, source]) => `${currency} (${source})`).join(', ');
    throw invalid(`prices are in more than one currency: ${listed}. A run's cost is one sum: give every price in one`);
  }
  const maxCost = o.limits.maxCost;
  if (maxCost === undefined) return;
  const unpriced = prices.filter((price) => !price.pricing).map((price) => price.role);
  if (unpriced.length === ROLE_NAMES.length) {
    throw invalid(
      `\`limits.maxCost\` needs prices: give \`pricing: { currency, inputPerMTok, outputPerMTok }\` or a backend with its own \`pricing\``,
    );
  }
  if (unpriced.length > 0) {
    throw invalid(
      `\`limits.maxCost\` needs a price for every role, and these have none: ${unpriced.join(', ')}. ` +
        'Give their backends `pricing`, or add `pricing.roles.<role>`',
    );
  }
}

function invalid(problem: string): HarnessError {
  return new HarnessError(
    'invalid-options',
    `Invalid createHarness options: ${problem}. See ${docsUrl('backends.md')}.`,
  );
}

/** What the gate of one run reads: the limit, how it is kept, the run's cost so far and its stop control. */
export interface CostGateRun {
  maxCost: number;
  /** `limits.costLimit`: never pass the limit (`'hard'`, the default), or stop after the call that passes it. */
  costLimit?: 'hard' | 'soft';
  currency: string;
  /** The run's cost so far, from its report tally (so a resumed run counts what it spent before). */
  costSoFar: () => number;
  control: RunControl;
}

/** What the refusal of a call tells the user to change. */
const COST_LEVERS =
  'raise limits.maxCost to let runs go further, lower limits.maxOutputTokens (the output reserve each call is ' +
  "admitted at), or set limits.costLimit: 'soft' to stop only after the call that crosses the limit";

/**
 * `limits.maxCost`. Hard (the default): admits a call only when the run's cost so far, the worst case of the calls
 * still running and the worst case of this one (its counted input at the dearer of the input and cache-write prices,
 * its output reserve at the output price) stay within the limit. Soft: admits calls while the run has spent less
 * than the limit, so the call that crosses it is made and the run stops at the next one. The first refusal stops the
 * run cleanly; every later call is refused too.
 */
export class CostGate implements CallGate {
  private readonly running = new Set<{ worstCase: number }>();
  private refusal: string | undefined;

  constructor(private readonly run: CostGateRun) {}

  admit(call: PlannedCall): () => void {
    if (this.refusal) throw new HarnessError('cost-limit', this.refusal);
    const { maxCost, currency } = this.run;
    const spent = this.run.costSoFar();
    const money = (amount: number) => formatCost(amount, currency);
    if (this.run.costLimit === 'soft') {
      if (spent >= maxCost) {
        this.refuse(
          `The run stopped at limits.maxCost (${money(maxCost)}, costLimit 'soft'): it has spent ${money(spent)}, ` +
            `so the next call — ${call.purpose} in ${call.scope} — was not made. Raise limits.maxCost to let runs go further.`,
        );
      }
      // Nothing to reserve: a soft limit never counts what running calls could cost.
      return () => undefined;
    }
    const pricing = call.backend.pricing;
    // Without a reserve, the answer can use whatever its window leaves.
    const output = call.maxOutputTokens ?? Math.max(0, call.backend.contextWindow - call.requestTokens);
    const priced = pricing ? worstCaseCost(call.requestTokens, output, pricing) : Number.NaN;
    // Fails closed: a call without a price (or without a bound) could cost anything.
    const worstCase = Number.isFinite(priced) ? priced : Number.POSITIVE_INFINITY;
    const reserved = [...this.running].reduce((sum, r) => sum + r.worstCase, 0);
    if (spent + reserved + worstCase > maxCost) {
      this.refuse(
        `The run stopped at limits.maxCost (${money(maxCost)}): it has spent ${money(spent)}` +
          (reserved > 0 ? ` (and up to ${money(reserved)} more in calls still running)` : '') +
          `, and the next call — ${call.purpose} in ${call.scope}, ${call.requestTokens} input tokens and ${output} ` +
          `output tokens reserved — could cost ${pricing ? `up to ${money(worstCase)}` : 'any amount (it has no price)'}. ` +
          `That call was not made; ${COST_LEVERS}.`,
      );
    }
    return this.reserve(worstCase);
  }

  /** Refuses this call and every later one, and stops the run with `cost-limit`. */
  private refuse(message: string): never {
    this.refusal = message;
    const error = new HarnessError('cost-limit', message);
    this.run.control.stopAtLimit(error);
    throw error;
  }

  /** Counts an admitted call at `worstCase` until the returned function says it ended. */
  private reserve(worstCase: number): () => void {
    const entry = { worstCase };
    this.running.add(entry);
    return () => this.running.delete(entry);
  }
}

/**
 * The backends a run hands its roles when prices or `limits.maxCost` are set: each role's backend seen with that
 * role's prices and the run's gate. A role whose backend needs neither gets the backend itself; roles with the same
 * backend and prices share one view, so the memory calibrates its token counts for that backend once.
 */
export class RunCosts {
  private readonly views: Array<{ backend: LlmBackend; view: LlmBackend }> = [];
  private readonly gate: CostGate | undefined;

  constructor(
    private readonly o: CostOptions,
    run: { costSoFar: () => number; control: RunControl },
  ) {
    const maxCost = o.limits.maxCost;
    const currency = ROLE_NAMES.map((role) => priceOfRole(o, role).pricing?.currency).find((c) => c !== undefined);
    // createHarness refused maxCost without a price for every role, so a currency is there.
    if (maxCost !== undefined)
      this.gate = new CostGate({ maxCost, costLimit: o.limits.costLimit, currency: currency ?? '', ...run });
  }

  /** Whether the options make any role's backend differ from the backend itself. */
  static needed(o: CostOptions): boolean {
    return o.pricing !== undefined || o.limits.maxCost !== undefined;
  }

  /** The backend role `role` calls. */
  backendFor(role: Purpose): LlmBackend {
    const backend = backendOfRole(this.o, role);
    const { pricing } = priceOfRole(this.o, role);
    if (!this.gate && samePricing(pricing, backend.pricing)) return backend;
    let made = this.views.find((v) => v.backend === backend && samePricing(v.view.pricing, pricing));
    if (!made) {
      made = { backend, view: runBackendView(backend, { pricing, gate: this.gate }) };
      this.views.push(made);
    }
    return made.view;
  }
}
