/**
 * An MCP tool result as a harness tool output: text parts as the observation, images as image parts, resources as
 * text with their URI. The output then takes the registry's normal path: bounded by memory, marked untrusted.
 * @module
 * @internal
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ImagePart, ToolOutput } from '../tools/types.js';

/** Image types every shipped backend accepts as an image part. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Base64 characters of the largest image passed on (3.75 MB decoded: under 5 MB as base64, Anthropic's limit). */
const MAX_IMAGE_BASE64_CHARS = 5_000_000;

type ContentBlock = CallToolResult['content'][number];

/** The tool output of a successful result; `isError` results go through {@link errorText} instead. @internal */
export function toToolOutput(result: CallToolResult): ToolOutput {
  const images: ImagePart[] = [];
  const lines = contentOf(result).map((block) => describeBlock(block, images));
  const text = lines.join('\n');
  return images.length > 0 ? { text, images } : text;
}

/** The text of an `isError` result: what the server said went wrong (images in it are only named). @internal */
export function errorText(result: CallToolResult): string {
  const text = contentOf(result)
    .map((block) => describeBlock(block, []))
    .join('\n')
    .trim();
  return text || 'The server reported an error without details.';
}

/** The blocks to show: `content`, else the `structuredContent` as JSON, else a legacy `toolResult`. */
function contentOf(result: CallToolResult): ContentBlock[] {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length > 0) return content;
  if (result.structuredContent !== undefined) {
    return [{ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) }];
  }
  // Servers on the 2024-10-07 protocol answer `{ toolResult }`; the SDK passes it through.
  const legacy = (result as { toolResult?: unknown }).toolResult;
  if (legacy !== undefined)
    return [{ type: 'text', text: typeof legacy === 'string' ? legacy : JSON.stringify(legacy) }];
  return [{ type: 'text', text: '(The tool returned no content.)' }];
}

/** One block as text; an image block also adds its part to `images` when a backend can take it. */
function describeBlock(block: ContentBlock, images: ImagePart[]): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image': {
      const size = `${approximateBytes(block.data)} bytes`;
      if (!IMAGE_TYPES.has(block.mimeType)) return `[image: ${block.mimeType}, ${size}, not shown: unsupported type]`;
      if (block.data.length > MAX_IMAGE_BASE64_CHARS)
        return `[image: ${block.mimeType}, ${size}, not shown: too large]`;
      images.push({ type: 'image', data: block.data, mediaType: block.mimeType });
      return `[image ${images.length}: ${block.mimeType}, ${size}, attached]`;
    }
    case 'audio':
      return `[audio: ${block.mimeType}, ${approximateBytes(block.data)} bytes, not shown]`;
    case 'resource': {
      const { resource } = block;
      const type = resource.mimeType ? `, ${resource.mimeType}` : '';
      if ('text' in resource && typeof resource.text === 'string') {
        return `[resource ${resource.uri}${type}]\n${resource.text}`;
      }
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return `[binary resource ${resource.uri}${type}, ${approximateBytes(blob)} bytes, not shown]`;
    }
    case 'resource_link': {
      const type = block.mimeType ? `, ${block.mimeType}` : '';
      const about = block.description ? `: ${block.description}` : '';
      return `[resource link "${block.name}" ${block.uri}${type}${about}]`;
    }
    default:
      return `[content of type "${String((block as { type?: unknown }).type)}", not shown]`;
  }
}

/** Decoded size of base64 text, without decoding it. */
function approximateBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}
