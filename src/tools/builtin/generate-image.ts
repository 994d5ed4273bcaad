import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { describeImage } from '../../workspace/preview/image-preview.js';
import { formatBytes } from '../../workspace/preview/bounded-text.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import type { ImageBackend } from './image-backend.js';
import { parseOptions } from './search-providers/http.js';

/** Options of {@link generateImageTool}. */
export interface GenerateImageToolOptions {
  backend: ImageBackend;
  /** Folder for images saved without an explicit path. @defaultValue `images` */
  directory?: string;
}

const GenerateImageOptionsSchema = z.strictObject({
  backend: z.custom<ImageBackend>(
    (value) => typeof value === 'object' && value !== null && typeof (value as ImageBackend).generate === 'function',
    'must be an ImageBackend (e.g. openAIImages({ model }))',
  ),
  directory: z.string().trim().min(1).default('images'),
});

const GenerateImageInput = z.object({
  prompt: z.string().min(1).describe('What the image should show: subject, style, composition, any text in it.'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Workspace-relative path to save the image to, e.g. "figures/cover.png". A name under images/ when omitted.',
    ),
  size: z
    .string()
    .regex(/^(\d{2,5}x\d{2,5}|auto)$/, 'must look like "1024x1024" or be "auto"')
    .optional()
    .describe('Image size such as "1024x1024"; the model default when omitted.'),
});

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

function slug(prompt: string): string {
  const words = prompt
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return words.slice(0, 40).replace(/-+$/, '') || 'image';
}

async function freeName(context: ToolContext, directory: string, base: string, extension: string): Promise<string> {
  for (let index = 1; ; index += 1) {
    const candidate = `${directory}/${base}${index === 1 ? '' : `-${index}`}.${extension}`;
    if (!(await context.workspace.exists(candidate))) return candidate;
  }
}

/** `generate_image`: creates an image with an {@link ImageBackend} and saves it in the workspace as an artifact. */
export function generateImageTool(options: GenerateImageToolOptions): Tool<z.output<typeof GenerateImageInput>> {
  const opts = parseOptions(GenerateImageOptionsSchema, options, 'generateImageTool');
  const directory = opts.directory.replace(/\/+$/, '');
  return defineTool({
    name: 'generate_image',
    description:
      'Generate an image from a text prompt and save it in the workspace (charts from data are better drawn with ' +
      'python_interpreter). Returns the saved path; inspect the result with analyze_image.',
    input: GenerateImageInput,
    readOnly: false,
    observation: 'text',
    async execute({ prompt, path, size }, context) {
      const image = await opts.backend.generate({ prompt, size, signal: context.signal });
      let dimensions: { width: number; height: number };
      try {
        dimensions = await describeImage(image.data);
      } catch (error) {
        throw new HarnessError(
          'invalid-response',
          'The image backend returned data in no known image format; nothing was saved.',
          {
            cause: error,
          },
        );
      }
      const extension = EXTENSIONS[image.mediaType] ?? image.mediaType.replace(/^image\//, '').replace(/\W+/g, '');
      let target = path ?? (await freeName(context, directory, slug(prompt), extension));
      if (!/\.[A-Za-z0-9]{2,5}$/.test(target)) target = `${target}.${extension}`;
      const record = await context.workspace.writeFile(target, image.data, {
        tool: 'generate_image',
        scope: context.scope,
      });
      const { width, height } = dimensions;
      const mismatch =
        target.toLowerCase().endsWith(`.${extension}`) || (extension === 'jpg' && /\.jpeg$/i.test(target))
          ? ''
          : ` Note: the data is ${image.mediaType} although the name ends differently.`;
      const revised = image.revisedPrompt ? ` The provider revised the prompt to: ${image.revisedPrompt}` : '';
      return {
        text: `Saved the generated image to ${record.path} (${image.mediaType}, ${width}×${height} px, ${formatBytes(record.size)}).${mismatch}${revised}`,
        files: [record.path],
      };
    },
  });
}
