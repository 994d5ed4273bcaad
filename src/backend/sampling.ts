/**
 * Which of a request's sampling parameters (`temperature`, `top_p`) go on the wire: what the model is known to reject
 * is left out, and what its server rejects once is left out from then on.
 * @module
 * @internal
 */
import { z } from 'zod';
import { namesField, rejectsField } from './adaptation.js';
import type { GenerateRequest } from './types.js';

/** The adapters' `sampling` option (see `commonFields`). @internal */
export const SamplingModeSchema = z.enum(['auto', 'omit']).default('auto');

/** A sampling field of the request body. @internal */
export type SamplingField = 'temperature' | 'top_p';

/** What a model accepts of the sampling fields; `{}` accepts both. @internal */
export interface SamplingRule {
  /** Fields the model rejects whatever their value. */
  rejected?: readonly SamplingField[];
  /** The model rejects `temperature` and `top_p` together; `temperature` alone is sent then. */
  notBoth?: boolean;
}

const FIELDS: readonly SamplingField[] = ['temperature', 'top_p'];

/** Anthropic: "`temperature` and `top_p` cannot both be specified for this model. Please use only one." */
const NOT_BOTH = /cannot both be|use only one|mutually exclusive/i;

/** The sampling fields one backend sends; learns from its server's rejections for the life of the backend. @internal */
export class SamplingPolicy {
  private readonly rejected: Set<SamplingField>;
  private notBoth: boolean;

  constructor(mode: z.output<typeof SamplingModeSchema>, known: SamplingRule) {
    this.rejected = new Set(mode === 'omit' ? FIELDS : known.rejected);
    this.notBoth = known.notBoth ?? false;
  }

  /** The request's sampling as body fields, less what the model rejects. */
  fields({ temperature, topP }: GenerateRequest): Partial<Record<SamplingField, number>> {
    const fields: Partial<Record<SamplingField, number>> = {};
    if (temperature !== undefined && !this.rejected.has('temperature')) fields.temperature = temperature;
    // Of the two, temperature is kept: it is the one providers tell users to adjust.
    if (topP !== undefined && !this.rejected.has('top_p') && !(this.notBoth && fields.temperature !== undefined))
      fields.top_p = topP;
    return fields;
  }

  /**
   * Learns from an HTTP 400 body which sampling field of the `sent` body the model rejects; true when the next body
   * leaves it out (the caller then sends the request again).
   */
  learn(errorBody: string, sent: Record<string, unknown>): boolean {
    const bothSentAndNamed = FIELDS.every((field) => field in sent && namesField(errorBody, field));
    if (bothSentAndNamed && NOT_BOTH.test(errorBody)) {
      this.notBoth = true;
      return true;
    }
    const named = FIELDS.filter((field) => field in sent && rejectsField(errorBody, field));
    for (const field of named) this.rejected.add(field);
    return named.length > 0;
  }
}
