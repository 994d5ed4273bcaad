/**
 * Downscaling PNG and JPEG images to the verifier's image budget, in pure JavaScript (pngjs, jpeg-js), loaded on first
 * use so that importing the library costs nothing.
 * @module
 */
import type { ImageBudget } from './images.js';

/** The largest an image sent to the model may be. */
type ImageBox = Omit<ImageBudget, 'maxImages'>;

/** An encoded image and its size in pixels. */
export interface EncodedImage {
  data: Uint8Array;
  mediaType: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
}

/** Decoded RGBA pixels, 4 bytes per pixel. */
interface Rgba {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Images above this many pixels are not decoded: the RGBA buffer alone would take 4 bytes per pixel (160 MB here). */
export const MAX_DECODE_PIXELS = 40_000_000;

/** JPEG quality of re-encoded images: small enough for the byte budget, sharp enough to read text. */
const JPEG_QUALITY = 85;

/**
 * The largest version of a PNG or JPEG image that fits `box`: scaled down (area averaging) when a side or the pixel
 * count is too large, and re-encoded in its own format; when that is still more than `maxBytes`, as JPEG (transparency
 * flattened onto white). `undefined` when even that is too large. Throws when the bytes cannot be decoded.
 */
export async function fitImage(
  data: Uint8Array,
  mediaType: 'image/png' | 'image/jpeg',
  box: ImageBox,
): Promise<EncodedImage | undefined> {
  const decoded = mediaType === 'image/png' ? await decodePng(data) : await decodeJpeg(data);
  const { width, height } = decoded;
  const scale = Math.min(1, box.maxLongSide / Math.max(width, height), Math.sqrt(box.maxPixels / (width * height)));
  const target =
    scale < 1
      ? resize(decoded, Math.max(1, Math.floor(width * scale)), Math.max(1, Math.floor(height * scale)))
      : decoded;
  if (mediaType === 'image/png') {
    const png = await encodePng(target);
    if (png.byteLength <= box.maxBytes) return { data: png, mediaType, width: target.width, height: target.height };
  }
  const jpeg = await encodeJpeg(flatten(target));
  return jpeg.byteLength <= box.maxBytes
    ? { data: jpeg, mediaType: 'image/jpeg', width: target.width, height: target.height }
    : undefined;
}

async function decodePng(data: Uint8Array): Promise<Rgba> {
  const { PNG } = await import('pngjs');
  // pngjs converts every bit depth, palette and grey level to 8-bit RGBA.
  const png = PNG.sync.read(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  return { width: png.width, height: png.height, data: png.data };
}

async function decodeJpeg(data: Uint8Array): Promise<Rgba> {
  const { decode } = await import('jpeg-js');
  const image = decode(data, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_DECODE_PIXELS / 1_000_000 });
  return { width: image.width, height: image.height, data: image.data };
}

async function encodePng(image: Rgba): Promise<Uint8Array> {
  const { PNG } = await import('pngjs');
  const png = new PNG({ width: image.width, height: image.height });
  png.data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return PNG.sync.write(png);
}

async function encodeJpeg(image: Rgba): Promise<Uint8Array> {
  const { encode } = await import('jpeg-js');
  return encode({ width: image.width, height: image.height, data: image.data }, JPEG_QUALITY).data;
}

/**
 * Area-averaging resize (each target pixel is the mean of the source pixels it covers), with colours weighted by alpha
 * so that transparent pixels do not darken the edges around them.
 */
function resize(source: Rgba, width: number, height: number): Rgba {
  const out = new Uint8Array(width * height * 4);
  const src = source.data;
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor((y * source.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * source.height) / height));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor((x * source.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * source.width) / width));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = y0; sy < y1; sy++) {
        let i = (sy * source.width + x0) * 4;
        for (let sx = x0; sx < x1; sx++, i += 4) {
          const alpha = src[i + 3] as number;
          r += (src[i] as number) * alpha;
          g += (src[i + 1] as number) * alpha;
          b += (src[i + 2] as number) * alpha;
          a += alpha;
        }
      }
      const o = (y * width + x) * 4;
      const count = (y1 - y0) * (x1 - x0);
      if (a > 0) {
        out[o] = Math.round(r / a);
        out[o + 1] = Math.round(g / a);
        out[o + 2] = Math.round(b / a);
      }
      out[o + 3] = Math.round(a / count);
    }
  }
  return { width, height, data: out };
}

/** Composites the image onto white, for JPEG, which has no alpha channel. */
function flatten(image: Rgba): Rgba {
  const out = new Uint8Array(image.data.length);
  for (let i = 0; i < image.data.length; i += 4) {
    const alpha = (image.data[i + 3] as number) / 255;
    for (let c = 0; c < 3; c++) out[i + c] = Math.round((image.data[i + c] as number) * alpha + 255 * (1 - alpha));
    out[i + 3] = 255;
  }
  return { width: image.width, height: image.height, data: out };
}
