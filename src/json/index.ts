/** Lenient JSON reply parsing and the ask-and-re-ask protocol of the JSON roles. @module */
export { askJson, type AskJsonResult } from './ask-json.js';
export { extractJson } from './extract-json.js';
export { parseJsonReply, type JsonReplyParse, type JsonReplyRules } from './parse-json-reply.js';
