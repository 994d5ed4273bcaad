/** The observed model call shared by every role. @module */
export {
  callModel,
  type CallSettings,
  estimateRequestTokens,
  reservedOutputTokens,
  type ModelCallContext,
  type RequestFitter,
  type RequestTokenCounter,
  type Sampling,
  type UsageCall,
} from './call-model.js';
