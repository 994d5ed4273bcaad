/** Human-readable byte size: `812 B`, `12.3 KB`, `1.2 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Thousands-separated integer (`52 311`), the form used in every preview. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US').replace(/,/g, ' ');
}

/**
 * Cuts `text` to at most `maxChars` characters, ending with an explicit marker that says how much was left out,
 * so a model never mistakes a preview for the whole file.
 */
export function fitChars(text: string, maxChars: number, hint = ''): string {
  if (text.length <= maxChars) return text;
  const marker = (omitted: number): string => `\n[… truncated: ${formatCount(omitted)} more characters${hint}]`;
  const reserve = marker(text.length).length;
  if (reserve >= maxChars) return text.slice(0, maxChars);
  let keep = maxChars - reserve;
  // Never cut a surrogate pair in half.
  const code = text.charCodeAt(keep - 1);
  if (code >= 0xd800 && code <= 0xdbff) keep -= 1;
  return text.slice(0, keep) + marker(text.length - keep);
}
