/**
 * The page around the sections: one self-contained HTML document with its own style and script, allowed by hash in a
 * strict Content-Security-Policy (`default-src 'none'`), so it loads nothing and runs nothing else.
 * @module
 */
import { createHash } from 'node:crypto';
import { html, jsonForScript, SafeHtml } from './html.js';

/** Purpose colours (chart dots, legend, cost table) and lane colours. */
const STYLE = `
:root { color-scheme: light; --plan:#6f42c1; --execute:#1f77b4; --synthesize:#17becf; --verify:#2ca02c; --repair:#ff7f0e;
  --summarize:#8c564b; --vision:#bcbd22; --manage:#e377c2; --audit:#7f7f7f; --bad:#d62728; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px; padding: 16px 24px; color: #1b1f24; background: #fff; }
h1 { font-size: 20px; margin: 0 0 6px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
code, pre { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; max-height: 24em; overflow: auto; }
.task { font-size: 15px; white-space: pre-wrap; margin: 4px 0 8px; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 8px 0; }
.facts div { min-width: 90px; } .facts dt { color: #57606a; font-size: 12px; } .facts dd { margin: 0; font-weight: 600; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #ddf4e4; color: #116329; font-weight: 600; }
.s-failed, .s-error, .s-aborted, .s-timeout, .s-blocked, .s-unverified, .s-violation, .s-suspect, .s-untrusted, .s-incomplete, .s-unfinished { background: #ffebe9; color: #a40e26; }
.s-pending { background: #fff8c5; color: #7d4e00; }
.why, .bad { color: #a40e26; } .note, .outcome { color: #57606a; }
svg { width: 100%; height: auto; display: block; }
svg text { font-size: 11px; fill: #1b1f24; } svg .axis { fill: #57606a; font-size: 10px; }
.axisline { stroke: #8c959f; } .window { stroke: #1b1f24; } .emergency { stroke: var(--bad); stroke-dasharray: 6 3; }
.compress { stroke: #ff7f0e; stroke-dasharray: 4 3; }
.bar { fill: var(--execute); } .bar.st-bad { fill: var(--bad); }
.k-plan { fill: var(--plan); } .k-synthesis { fill: var(--synthesize); } .k-verify { fill: var(--verify); }
.k-repair { fill: var(--repair); } .k-manage { fill: var(--manage); } .k-audit { fill: var(--audit); }
.retry { stroke: #1b1f24; stroke-width: 2; } .resume { stroke: #6f42c1; stroke-dasharray: 3 3; }
.mark { stroke-width: 1.5; } .m-compress { stroke: #ff7f0e; } .m-prune { stroke: var(--bad); } .m-overflow { stroke: #000; stroke-width: 2.5; } .m-aging { stroke: #2ca02c; stroke-dasharray: 2 2; }
.call { stroke: #fff; stroke-width: 0.5; } .call.unanswered { fill: #fff; stroke: var(--bad); stroke-width: 1.5; }
.k-start-up { fill: #d0d7de; }
.p-plan { fill: var(--plan); } .p-execute { fill: var(--execute); } .p-synthesize { fill: var(--synthesize); }
.p-verify { fill: var(--verify); } .p-repair { fill: var(--repair); } .p-summarize { fill: var(--summarize); } .p-vision { fill: var(--vision); }
.p-manage { fill: var(--manage); } .p-audit { fill: var(--audit); }
.key::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; background: #8c959f; }
.key.p-plan::before { background: var(--plan); } .key.p-execute::before { background: var(--execute); }
.key.p-synthesize::before { background: var(--synthesize); } .key.p-verify::before { background: var(--verify); }
.key.p-repair::before { background: var(--repair); } .key.p-summarize::before { background: var(--summarize); } .key.p-vision::before { background: var(--vision); }
.key.p-manage::before { background: var(--manage); } .key.p-audit::before { background: var(--audit); }
.key.m-compress::before { background: #ff7f0e; border-radius: 0; width: 3px; } .key.m-prune::before { background: var(--bad); border-radius: 0; width: 3px; }
.key.m-overflow::before { background: #000; border-radius: 0; width: 3px; } .key.m-aging::before { background: #2ca02c; border-radius: 0; width: 3px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0; }
details { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 10px; margin: 6px 0; }
details[open] > summary { margin-bottom: 6px; } summary { cursor: pointer; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; } th, td { border: 1px solid #d0d7de; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } tr.bad td { background: #fff5f5; } caption { text-align: left; font-weight: 600; padding: 4px 0; }
.tools td:nth-child(2) { width: 55%; }
figure { display: inline-block; margin: 4px; } figure img { max-width: 320px; border: 1px solid #d0d7de; }
.toolbar { float: right; } .toolbar button { font: inherit; margin-left: 4px; }
`;

/** Opens or closes every <details> of the page (the only script, allowed by its hash). */
const SCRIPT = `
for (const button of document.querySelectorAll('button[data-details]')) {
  button.addEventListener('click', () => {
    const open = button.dataset.details === 'open';
    for (const details of document.querySelectorAll('details')) details.open = open;
  });
}
`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The policy of every page: nothing loads, only this style and script run, images only as data: URLs. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src ${sha256(STYLE)}`,
  `script-src ${sha256(SCRIPT)}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The whole document: `title`, the sections, and `data` as JSON for scripts (`#run-data`). */
export function pageDocument(title: string, sections: readonly SafeHtml[], data: unknown): string {
  const body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<div class="toolbar"><button type="button" data-details="open">Expand all</button><button type="button" data-details="close">Collapse all</button></div>
${sections}
<script type="application/json" id="run-data">${new SafeHtml(jsonForScript(data))}</script>
<script>${new SafeHtml(SCRIPT)}</script>
</body>
</html>
`;
  return body.value;
}
