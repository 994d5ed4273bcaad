/**
 * Verification: each verdict with its defects, the repair each defect drove and whether the next verdict still
 * reported it; the images the verifier was shown.
 * @module
 */
import type { Defect } from '../contracts/work.js';
import type { VerifyFinishEvent } from '../events.js';
import { html, type SafeHtml } from './html.js';
import type { RunView, SeenImage } from './run-view.js';
import { fileList } from './work-section.js';

/** Image types the page shows inline; anything else is named, not shown. */
const INLINE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The verdicts of `view` and what followed each. */
export function verificationSection(view: RunView): SafeHtml {
  if (view.verdicts.length === 0 && view.repairs.length === 0) {
    const why = view.start?.verification === false ? 'Verification was off for this run.' : 'No verdict in this run.';
    return html`<section id="verification"><h2>Verification</h2><p>${why}</p></section>`;
  }
  return html`<section id="verification">
  <h2>Verification</h2>
  <ol class="verdicts">${view.verdicts.map((verdict, i) => verdictItem(view, verdict, view.verdicts[i + 1]))}</ol>
  ${view.images.length > 0 ? imagesBlock(view.images) : ''}
</section>`;
}

function verdictItem(view: RunView, event: VerifyFinishEvent, next: VerifyFinishEvent | undefined): SafeHtml {
  const verdict = event.verdict;
  const repair = view.repairs[event.attempt - 1];
  const images =
    verdict.imagesSeen + verdict.imagesSkipped > 0
      ? `; images shown ${verdict.imagesSeen}, not shown ${verdict.imagesSkipped}`
      : '';
  return html`<li class="verdict" data-attempt="${event.attempt}" data-status="${verdict.status}" data-defects="${verdict.defects.length}">
  <span class="badge s-${verdict.status}">${verdict.status}</span> verification ${event.attempt}: ${verdict.defects.length} defect(s)${images}${verdict.reason ? html` — <span class="why">${verdict.reason}</span>` : ''}
  ${
    verdict.defects.length > 0
      ? html`<ul class="defects">${verdict.defects.map((defect) => defectItem(defect, event.attempt, repair, next))}</ul>`
      : ''
  }
</li>`;
}

function defectItem(
  defect: Defect,
  attempt: number,
  repair: RunView['repairs'][number] | undefined,
  next: VerifyFinishEvent | undefined,
): SafeHtml {
  const addressed = repair?.start?.defects.some((d) => d.description === defect.description) === true;
  let outcome: SafeHtml = html`no repair followed`;
  if (addressed) {
    const again = next?.verdict.defects.some((d) => d.description === defect.description);
    const after = next
      ? again
        ? html`; verification ${next.attempt} reported it again`
        : html`; verification ${next.attempt} did not report it again (${next.verdict.status})`
      : html`; no verification followed`;
    outcome = html`addressed by repair ${attempt} (${repair?.finish?.status ?? 'unfinished'})${after}`;
  }
  return html`<li class="defect">${defect.description}${defect.artifact ? html` — ${fileList([defect.artifact])}` : ''} <span class="outcome">→ ${outcome}</span></li>`;
}

function imagesBlock(images: readonly SeenImage[]): SafeHtml {
  return html`<details class="images"><summary>${images.length} image(s) the verifier was shown</summary>
  ${images.map((image) =>
    INLINE_IMAGE_TYPES.has(image.mediaType) && /^[A-Za-z0-9+/=\s]+$/.test(image.data)
      ? html`<figure><img alt="image shown in ${image.attempt}" src="data:${image.mediaType};base64,${image.data.replace(/\s/g, '')}"><figcaption>${image.attempt}</figcaption></figure>`
      : html`<p>${image.attempt}: an image of type ${image.mediaType} (not shown)</p>`,
  )}
</details>`;
}
