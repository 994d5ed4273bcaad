/**
 * Where the project lives, for links that must work outside the repository: error messages and the CLI's help point
 * at the docs here, and package.json's `repository`, `homepage` and `bugs` say the same (a test checks they agree).
 * @module
 */

/** The project's repository; every documentation link is built from it. */
export const PROJECT_URL = 'https://github.com/horizon-harness/horizon-harness';

/** The documentation pages under `docs/` that messages may link to. */
export type DocsPage =
  | 'backends.md'
  | 'benchmark.md'
  | 'cli.md'
  | 'durability.md'
  | 'managed.md'
  | 'observability.md'
  | 'pipeline.md';

/**
 * The stable address of a documentation page (and of one of its sections, by its heading's anchor), readable from an
 * installed package, where a relative `docs/…` path leads nowhere.
 */
export function docsUrl(page: DocsPage, anchor?: string): string {
  return `${PROJECT_URL}/blob/main/docs/${page}${anchor ? `#${anchor}` : ''}`;
}
