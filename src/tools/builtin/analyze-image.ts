import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { describeImage } from '../../workspace/preview/image-preview.js';
import { formatBytes } from '../../workspace/preview/bounded-text.js';
import { defineTool } from '../define-tool.js';
import type { Tool } from '../types.js';
import { parseOptions } from './search-providers/http.js';

/** Options of {@link analyzeImageTool}. */
export interface AnalyzeImageToolOptions {
  /** Largest image sent to the vision model. @defaultValue 20 MB */
  maxBytes?: number;
}

const AnalyzeImageOptionsSchema = z.strictObject({
  maxBytes: z
    .number()
    .int()
    .min(1)
    .max(1_073_741_824)
    .default(20 * 1024 * 1024),
});

const AnalyzeImageInput = z.object({
  path: z.string().min(1).describe('Workspace-relative path of a PNG, JPEG, GIF or WEBP image.'),
  question: z
    .string()
    .min(1)
    .optional()
    .describe('What to find out about the image; a detailed description when omitted.'),
});

/** Media types the common vision APIs accept. */
const SUPPORTED = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const SYSTEM_PROMPT =
  'You analyze images for an autonomous agent. Answer the question about the attached image precisely and ' +
  'completely. Describe only what is visible; quote any text in the image exactly; say so when something cannot be determined.';

/** `analyze_image`: sends a workspace image and a question to the vision backend (`roles.vision`, else the main one). */
export function analyzeImageTool(options: AnalyzeImageToolOptions = {}): Tool<z.output<typeof AnalyzeImageInput>> {
  const { maxBytes } = parseOptions(AnalyzeImageOptionsSchema, options, 'analyzeImageTool');
  return defineTool({
    name: 'analyze_image',
    description:
      'Look at an image in the workspace with a vision model and answer a question about it: describe it, read ' +
      'text or numbers in it, check a chart or layout for problems.',
    input: AnalyzeImageInput,
    readOnly: true,
    observation: 'text',
    async execute({ path, question }, context) {
      const data = await context.workspace.readFile(path);
      if (data.byteLength > maxBytes) {
        throw new HarnessError(
          'invalid-input',
          `"${path}" is ${formatBytes(data.byteLength)}; analyze_image accepts up to ${formatBytes(maxBytes)}. Save a smaller version first.`,
        );
      }
      let mediaType: string;
      try {
        mediaType = (await describeImage(data)).mediaType;
      } catch {
        throw new HarnessError(
          'invalid-input',
          `"${path}" is not an image analyze_image can read (PNG, JPEG, GIF or WEBP).`,
        );
      }
      if (!SUPPORTED.has(mediaType)) {
        throw new HarnessError(
          'invalid-input',
          `"${path}" is ${mediaType}; analyze_image accepts PNG, JPEG, GIF and WEBP. Convert it first (e.g. with python_interpreter).`,
        );
      }
      const result = await context.generate('vision', {
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          {
            role: 'user',
            content: [
              { type: 'text', text: question ?? 'Describe this image in detail, including any text it contains.' },
              { type: 'image', data: data.toString('base64'), mediaType },
            ],
          },
        ],
      });
      const answer = result.message.content.trim();
      if (answer === '') {
        throw new HarnessError(
          'invalid-response',
          'The vision model returned no text. Try again with a more specific question.',
        );
      }
      return answer;
    },
  });
}
