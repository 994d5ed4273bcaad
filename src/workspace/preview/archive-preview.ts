import { formatBytes } from './bounded-text.js';
import type { FormatPreview } from './format-preview.js';

/** At most this many entries are listed; the count covers all of them. */
const MAX_ENTRIES = 200;

function summarize(entries: string[], total: number): FormatPreview {
  const more = total > entries.length ? `\n… and ${total - entries.length} more` : '';
  return { details: `${total} ${total === 1 ? 'entry' : 'entries'}`, body: entries.join('\n') + more };
}

/** The entry list of a ZIP archive (only the central directory is read; nothing is extracted). */
export async function previewZip(data: Uint8Array): Promise<FormatPreview> {
  const { default: JSZip } = await import('jszip');
  const zip = await JSZip.loadAsync(data);
  const names = Object.keys(zip.files);
  return summarize(names.slice(0, MAX_ENTRIES), names.length);
}

/** The entry list of a tar archive, gzip-compressed or not, with sizes. */
export async function previewTar(absPath: string): Promise<FormatPreview> {
  const { list } = await import('tar');
  const entries: string[] = [];
  let total = 0;
  await list({
    file: absPath,
    strict: true,
    onReadEntry: (entry) => {
      total += 1;
      if (entries.length < MAX_ENTRIES) {
        entries.push(entry.type === 'Directory' ? entry.path : `${entry.path} (${formatBytes(entry.size ?? 0)})`);
      }
      entry.resume();
    },
  });
  return summarize(entries, total);
}
