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
  /** Input tokens written to the prompt cache; without it they cost `inputPerMTok`. */
  cacheWritePerMTok: price.optional(),
});

/** A currency as the host names it: any non-empty name, compared exactly (`USD` and `usd` differ). @internal */
export const CurrencySchema = z.string().trim().min(1, 'must name a currency, e.g. "USD"');

/** Prices with their currency, as the adapters' `pricing` option takes them. @internal */
export const BackendPricingSchema = PricingSchema.extend({ currency: CurrencySchema });

/**
 * The cost of one call from its usage, each kind of token at its own price: cache reads (`cachedInputTokens`) at
 * `cachedInputPerMTok`, cache writes (`cacheWriteInputTokens`) at `cacheWritePerMTok` (each at the input price when
 * not given), the other input tokens at `inputPerMTok` and output tokens at `outputPerMTok`. `inputTokens` includes
 * the cached reads and writes, as {@link Usage} says; counts above it are cut to what it holds, reads first.
 */
export function callCost(usage: Usage, pricing: Pricing): number {
  const { uncached, cacheRead, cacheWrite } = inputShares(usage);
  return (
    (uncached * pricing.inputPerMTok +
      cacheRead * (pricing.cachedInputPerMTok ?? pricing.inputPerMTok) +
      cacheWrite * (pricing.cacheWritePerMTok ?? pricing.inputPerMTok) +
      Math.max(0, usage.outputTokens) * pricing.outputPerMTok) /
    TOKENS_PER_PRICE_UNIT
  );
}

/** A call's input tokens split into uncached, cache-read and cache-written ones (they add up to `inputTokens`). */
function inputShares(usage: Usage): { uncached: number; cacheRead: number; cacheWrite: number } {
  const input = Math.max(0, usage.inputTokens);
  const cacheRead = Math.min(input, Math.max(0, usage.cachedInputTokens ?? 0));
  const cacheWrite = Math.min(input - cacheRead, Math.max(0, usage.cacheWriteInputTokens ?? 0));
  return { uncached: input - cacheRead - cacheWrite, cacheRead, cacheWrite };
}

/**
 * The most a call can cost: every input token at the dearer of the input and cache-write prices (a provider may
 * write the whole prompt to its cache), and every reserved output token.
 */
export function worstCaseCost(inputTokens: number, outputTokens: number, pricing: Pricing): number {
  const writesCostMore = (pricing.cacheWritePerMTok ?? 0) > pricing.inputPerMTok;
  return callCost(
    writesCostMore ? { inputTokens, outputTokens, cacheWriteInputTokens: inputTokens } : { inputTokens, outputTokens },
    pricing,
  );
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
      a.cachedInputPerMTok === b.cachedInputPerMTok &&
      a.cacheWritePerMTok === b.cacheWritePerMTok)
  );
}
