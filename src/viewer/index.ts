/**
 * `horizon-harness/viewer`: one self-contained HTML page per run, from its events or its event log.
 * @packageDocumentation
 */
export { EVENT_LOG_PATH, readRunEvents, renderRunHtml, type RenderRunHtmlOptions } from './render-run-html.js';
