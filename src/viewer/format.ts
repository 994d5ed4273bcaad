/**
 * How the page writes numbers, durations and long text.
 * @module
 */

/** `12 345` (thin groups, no locale: the page reads the same everywhere). */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
}

/** `850 ms`, `4.2 s`, `3 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** A cost in its currency, with enough digits for cents and fractions of a cent. */
export function formatCost(value: number, currency: string): string {
  return `${value < 0.01 && value > 0 ? value.toPrecision(2) : value.toFixed(2)} ${currency}`;
}

/** At most `max` characters of `text`, saying how many were left out. */
export function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${formatCount(text.length - max)} more characters)`;
}

/** The sum of `values`. */
export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** `text` cut to `max` characters, with an ellipsis when cut (for labels; the full text goes in a tooltip). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
