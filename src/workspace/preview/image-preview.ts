import type { FormatPreview } from './format-preview.js';

const MEDIA_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  avif: 'image/avif',
  heif: 'image/heif',
};

/**
 * Type and pixel dimensions of an image; rejects when the bytes are not an image `image-size` knows. The parser
 * loads on the first image, not with the package.
 */
export async function describeImage(
  data: Uint8Array,
): Promise<{ type: string; mediaType: string; width: number; height: number }> {
  const { imageSize } = await import('image-size');
  const size = imageSize(data);
  const type = size.type ?? 'unknown';
  return { type, mediaType: MEDIA_TYPES[type] ?? `image/${type}`, width: size.width, height: size.height };
}

/** The header facts of an image preview. */
export async function previewImage(data: Uint8Array): Promise<FormatPreview> {
  const { type, width, height } = await describeImage(data);
  return {
    details: `${type.toUpperCase()}, ${width}×${height} px`,
    body: '',
  };
}
