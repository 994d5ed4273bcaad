/** The verifier role. @module */
export { Verifier, type VerifierOptions } from './verifier.js';
export type { ImageBudget } from './images.js';
export { pdftoppmRenderer, type PdfPageRenderer } from './pdf-page.js';
export type { SubtaskAnswer, VerifierLike, VerifyInput } from '../contracts/roles.js';
