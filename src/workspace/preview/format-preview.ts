/** What a format previewer contributes: facts for the header line and the preview body. */
export interface FormatPreview {
  /** Short facts shown after the size in the header, e.g. `3 pages`. */
  details?: string;
  body: string;
}
