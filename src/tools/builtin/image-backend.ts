import type { Dispatcher } from 'undici';
import { undici } from '../../util/undici.js';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { describeImage } from '../../workspace/preview/image-preview.js';
import { fetchJson, joinUrl, parseOptions, record } from './search-providers/http.js';

/** One image-generation request. */
export interface ImageGenerationRequest {
  prompt: string;
  /** Provider-specific size, e.g. `1024x1024`; the backend's default when absent. */
  size?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** A generated image: its bytes and media type (`image/png`, …). */
export interface GeneratedImage {
  data: Uint8Array;
  mediaType: string;
  /** The prompt the provider actually used, when it rewrote it. */
  revisedPrompt?: string;
}

/** What `generate_image` talks to; implement it to plug in any image model. */
export interface ImageBackend {
  readonly provider?: string;
  readonly modelId?: string;
  generate(request: ImageGenerationRequest): Promise<GeneratedImage>;
}

const OpenAIImagesOptionsSchema = z.strictObject({
  /** @defaultValue `https://api.openai.com/v1` */
  baseURL: z.url().default('https://api.openai.com/v1'),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1),
  /** @defaultValue 300 000 ms: image models are slow */
  timeoutMs: z.number().int().positive().max(2_147_483_647).default(300_000),
  /** Largest response body read (base64 images are large); a longer one fails with `invalid-response`. @defaultValue 100 MiB */
  maxResponseBytes: z
    .number()
    .int()
    .min(1_024)
    .max(1_073_741_824)
    .default(100 * 1024 * 1024),
  /** Used when a call gives no size. */
  defaultSize: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).default({}),
  /** Extra JSON fields sent with every request (`quality`, `style`, `output_format`, …). */
  extraBody: z.record(z.string(), z.unknown()).default({}),
});

/** Options of {@link openAIImages}. */
export type OpenAIImagesOptions = z.input<typeof OpenAIImagesOptionsSchema> & {
  /** undici dispatcher for the requests (proxies, tests with MockAgent); an own Agent when absent. */
  dispatcher?: Dispatcher;
};

/**
 * An {@link ImageBackend} for the OpenAI images API (`POST {baseURL}/images/generations`) and the servers that copy it.
 * Images come back base64-encoded (`b64_json`); the media type is read from the bytes.
 *
 * @example
 * ```ts
 * const images = openAIImages({ apiKey: process.env.OPENAI_API_KEY, model: 'gpt-image-1' });
 * const tools = builtinTools({ imageBackend: images });
 * ```
 */
export function openAIImages(options: OpenAIImagesOptions): ImageBackend {
  const { dispatcher: given, ...rest } = options;
  const resolved = parseOptions(OpenAIImagesOptionsSchema, rest, 'openAIImages');
  let own: Promise<Dispatcher> | undefined;
  const dispatcher = (): Promise<Dispatcher> => {
    own ??= given
      ? Promise.resolve(given)
      : undici().then(
          ({ Agent }) =>
            new Agent({ headersTimeout: resolved.timeoutMs, bodyTimeout: resolved.timeoutMs, connectTimeout: 30_000 }),
        );
    return own;
  };
  // GPT image models always answer in base64 and reject `response_format`; the DALL·E models need it to skip URLs.
  const askBase64 = !/^gpt-image/i.test(resolved.model);
  const label = `openAIImages(${resolved.model})`;
  return {
    provider: 'openai-images',
    modelId: resolved.model,
    async generate({ prompt, size, signal }) {
      const body = {
        ...resolved.extraBody,
        model: resolved.model,
        prompt,
        n: 1,
        ...((size ?? resolved.defaultSize) === undefined ? {} : { size: size ?? resolved.defaultSize }),
        ...(askBase64 ? { response_format: 'b64_json' } : {}),
      };
      const json = await fetchJson(joinUrl(resolved.baseURL, 'images/generations'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(resolved.apiKey === undefined ? {} : { authorization: `Bearer ${resolved.apiKey}` }),
          ...resolved.headers,
        },
        body: JSON.stringify(body),
        dispatcher: await dispatcher(),
        timeoutMs: resolved.timeoutMs,
        maxBytes: resolved.maxResponseBytes,
        signal,
        label,
      });
      const first = record(Array.isArray(record(json).data) ? (record(json).data as unknown[])[0] : undefined);
      if (typeof first.b64_json !== 'string' || first.b64_json === '') {
        throw new HarnessError(
          'invalid-response',
          `${label}: the response holds no base64 image (data[0].b64_json). Use a model or server that returns b64_json.`,
        );
      }
      const data = new Uint8Array(Buffer.from(first.b64_json, 'base64'));
      let mediaType: string;
      try {
        mediaType = (await describeImage(data)).mediaType;
      } catch (error) {
        throw new HarnessError(
          'invalid-response',
          `${label}: data[0].b64_json does not decode to a known image format.`,
          {
            cause: error,
          },
        );
      }
      return {
        data,
        mediaType,
        ...(typeof first.revised_prompt === 'string' ? { revisedPrompt: first.revised_prompt } : {}),
      };
    },
  };
}
