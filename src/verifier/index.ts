/** The verifier role. @module */
export { Verifier, type VerifierOptions } from './verifier.js';
export type { ImageBudget } from './images.js';
export {
  pdftoppmRenderer,
  type PdfPagesRenderer,
  type PdfPagesRequest,
  type RenderedPdfPages,
} from './pdf-page.js';
export {
  OFFICE_FORMATS,
  sofficeRenderer,
  type OfficeDocument,
  type OfficeFormat,
  type OfficeRenderer,
  type OfficeRendering,
  type SofficeRendererOptions,
} from './office-render.js';
export type { SubtaskAnswer, VerifierLike, VerifyInput } from '../contracts/roles.js';
