/**
 * A harness request as AI SDK call options (`LanguageModelV3CallOptions`, which a V2 model reads the same way for
 * everything built here).
 * @module
 * @internal
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { ContentPart, GenerateRequest, Message, ToolCall } from '../backend/types.js';

type ImagePart = Extract<ContentPart, { type: 'image' }>;

/** Said before the images of a run of tool results, which go in a user message after them. */
export const TOOL_IMAGES_NOTE = 'Images returned by the tool calls above:';

/** What every call sends besides the request itself. @internal */
export interface CallDefaults {
  providerOptions?: SharedV3ProviderOptions | undefined;
  headers?: Record<string, string> | undefined;
}

/** The call options of one request. @internal */
export function toCallOptions(request: GenerateRequest, defaults: CallDefaults): LanguageModelV3CallOptions {
  const options: LanguageModelV3CallOptions = { prompt: toPrompt(request.messages) };
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.topP !== undefined) options.topP = request.topP;
  if (request.responseFormat) {
    const { schema, name } = request.responseFormat;
    options.responseFormat = { type: 'json', ...(schema ? { schema } : {}), ...(name ? { name } : {}) };
  }
  if (request.tools && request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
  }
  const choice = request.toolChoice;
  if (choice !== undefined) {
    options.toolChoice = typeof choice === 'object' ? { type: 'tool', toolName: choice.name } : { type: choice };
  }
  if (request.signal) options.abortSignal = request.signal;
  if (defaults.providerOptions) options.providerOptions = defaults.providerOptions;
  if (defaults.headers) options.headers = defaults.headers;
  return options;
}

/**
 * The prompt: consecutive tool messages become one `tool` message, and the images of their results follow in a user
 * message (a tool result carries text only, so every provider takes it).
 */
function toPrompt(messages: readonly Message[]): LanguageModelV3Message[] {
  const prompt: LanguageModelV3Message[] = [];
  let results: LanguageModelV3ToolResultPart[] = [];
  let images: ImagePart[] = [];
  const flushTools = () => {
    if (results.length === 0) return;
    prompt.push({ role: 'tool', content: results });
    if (images.length > 0) {
      prompt.push({ role: 'user', content: [{ type: 'text', text: TOOL_IMAGES_NOTE }, ...images.map(filePart)] });
    }
    results = [];
    images = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const parts = typeof message.content === 'string' ? [] : message.content;
      images.push(...parts.filter((part): part is ImagePart => part.type === 'image'));
      const value = typeof message.content === 'string' ? message.content : textOf(parts);
      results.push({
        type: 'tool-result',
        toolCallId: message.toolCallId,
        toolName: message.toolName,
        output: { type: message.isError ? 'error-text' : 'text', value },
      });
      continue;
    }
    flushTools();
    if (message.role === 'system') prompt.push({ role: 'system', content: message.content });
    else if (message.role === 'user') prompt.push({ role: 'user', content: userParts(message.content) });
    else prompt.push({ role: 'assistant', content: assistantParts(message.content, message.toolCalls ?? []) });
  }
  flushTools();
  return prompt;
}

function textOf(parts: readonly ContentPart[]): string {
  return parts
    .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

function userParts(content: string | ContentPart[]): Array<LanguageModelV3TextPart | LanguageModelV3FilePart> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : filePart(part)));
}

/** An image as a file part: base64 data as it is, an http(s) URL as a URL (the provider fetches it). */
function filePart(part: ImagePart): LanguageModelV3FilePart {
  const data = /^https?:\/\//i.test(part.data) ? new URL(part.data) : part.data;
  return { type: 'file', mediaType: part.mediaType, data };
}

function assistantParts(
  content: string,
  toolCalls: readonly ToolCall[],
): Array<LanguageModelV3TextPart | LanguageModelV3ToolCallPart> {
  const parts: Array<LanguageModelV3TextPart | LanguageModelV3ToolCallPart> = [];
  if (content !== '') parts.push({ type: 'text', text: content });
  for (const call of toolCalls) {
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: parseInput(call.arguments) });
  }
  return parts;
}

/** The call's input as the provider serialises it back: parsed JSON, or the raw text when the model's was not JSON. */
function parseInput(text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text);
  } catch {
    return text;
  }
}
