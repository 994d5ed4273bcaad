/**
 * Prices of model calls: the option schemas every place that takes prices shares, and the arithmetic of a call's cost.
 * @module
 */
import { z } from 'zod';
import type { BackendPricing, Pricing, Usage } from './types.js';

const TOKENS_PER_PRICE_UNIT = 1_000_000;

const price = z.number().finite().min(0, 'must be a price ≥ 0 (per million tokens)');

/** Prices per million tokens, as `pricing` options take them. @internal */
export const PricingSchema = z.strictObject({
  /** Input tokens not served from the cache. */
  inputPerMTok: price,
  outputPerMTok: price,
  /** Cached input tokens; without it they cost `inputPerMTok`. */
  cachedInputPerMTok: price.optional(),
});

/** A currency as the host names it: any non-empty name, compared exactly (`USD` and `usd` differ). @internal */
export const CurrencySchema = z.string().trim().min(1, 'must name a currency, e.g. "USD"');

/** Prices with their currency, as the adapters' `pricing` option takes them. @internal */
export const BackendPricingSchema = PricingSchema.extend({ currency: CurrencySchema });

/**
 * The cost of one call from its usage: cached input tokens at `cachedInputPerMTok` (else the input price), the other
 * input tokens at `inputPerMTok`, output tokens at `outputPerMTok`. `inputTokens` includes the cached ones, as
 * {@link Usage} says; a cached count above it is taken as all of it.
 */
export function callCost(usage: Usage, pricing: Pricing): number {
  const input = Math.max(0, usage.inputTokens);
  const cached = Math.min(input, Math.max(0, usage.cachedInputTokens ?? 0));
  const cachedPrice = pricing.cachedInputPerMTok ?? pricing.inputPerMTok;
  return (
    ((input - cached) * pricing.inputPerMTok +
      cached * cachedPrice +
      Math.max(0, usage.outputTokens) * pricing.outputPerMTok) /
    TOKENS_PER_PRICE_UNIT
  );
}

/** The most a call can cost: every input token at the full input price, and every reserved output token. */
export function worstCaseCost(inputTokens: number, outputTokens: number, pricing: Pricing): number {
  return callCost({ inputTokens, outputTokens }, pricing);
}

/** An amount for messages: up to six decimals, trailing zeros dropped, and the currency (`0.0125 USD`). */
export function formatCost(amount: number, currency: string): string {
  return `${Number(amount.toFixed(6))} ${currency}`;
}

/** Whether two prices are the same (so calls priced by either can share one backend wrapper). @internal */
export function samePricing(a: BackendPricing | undefined, b: BackendPricing | undefined): boolean {
  return (
    a === b ||
    (a !== undefined &&
      b !== undefined &&
      a.currency === b.currency &&
      a.inputPerMTok === b.inputPerMTok &&
      a.outputPerMTok === b.outputPerMTok &&
      a.cachedInputPerMTok === b.cachedInputPerMTok)
  );
}
