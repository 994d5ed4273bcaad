/** Lenient JSON reply parsing and observed single-shot model calls. @module */
export { askJson, type AskJsonResult } from './ask-json.js';
export { callModel, estimateRequestTokens, type ModelCallContext, type RequestTokenCounter } from './call-model.js';
export { extractJson } from './extract-json.js';
export { parseJsonReply, type JsonReplyParse } from './parse-json-reply.js';
