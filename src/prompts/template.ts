/**
 * Tiny `{{name}}` template rendering for role prompts.
 * @module
 */

/** Replaces every `{{name}}` in `template` with `values[name]`; unknown names stay as written. */
export function renderTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{\s*([a-zA-Z0-9_]+)\s*\}\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  );
}
