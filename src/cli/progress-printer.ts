/**
 * The human-readable progress of a run: one line per step the harness reports, the agent's text as it streams, a
 * spinner while waiting (on a terminal only), then the deliverable and a report summary.
 * @module
 */
import type { HarnessEvent } from '../events.js';
import type { RunResult } from '../contracts/work.js';
import type { CliOutput } from './io.js';
import type { RunReporter } from './reporter.js';
import { Spinner } from './spinner.js';
import { printable } from './printable.js';

/** Roles whose streamed text is the agent's own narration; plan and verify stream JSON, shown by their events. */
const NARRATING_PURPOSES = new Set(['execute', 'synthesize', 'repair']);
const ARGUMENT_PREVIEW_CHARS = 80;
const ANSWER_PREVIEW_CHARS = 100;

/** Prints a run for a person reading a terminal or a log. */
export class ProgressPrinter implements RunReporter {
  private readonly spinner: Spinner;
  /** The model call whose text is being streamed onto the current line, if any. */
  private streamingCall: string | undefined;

  constructor(private readonly out: CliOutput) {
    this.spinner = new Spinner(out);
  }

  start(info: { label: string; workspace: string }): void {
    this.line(`horizon-harness · ${info.label}`);
  }

  note(text: string): void {
    this.line(text);
  }

  event(event: HarnessEvent): void {
    switch (event.type) {
      case 'run-start':
        this.line(`▶ run ${event.runId}`);
        this.line(`  workspace: ${event.workspace}`);
        for (const warning of event.warnings) this.line(`  ⚠ ${warning}`);
        return;
      case 'plan-created': {
        const count = `${event.plan.length} subtask${event.plan.length === 1 ? '' : 's'}`;
        this.line(`📋 plan (${count}${event.fallback ? `, ${event.fallback}` : ''})`);
        for (const subtask of event.plan) this.line(`   ${subtask.id}: ${subtask.title}`);
        return;
      }
      case 'subtask-start':
        this.line(`→ ${event.subtask.id}: ${event.subtask.title}`);
        return;
      case 'subtask-attempt':
        if (event.attempt > 1)
          this.line(`  ↻ attempt ${event.attempt}${event.previousError ? ` (${event.previousError})` : ''}`);
        return;
      case 'llm-request':
        this.wait(`waiting for ${event.modelId} (${event.purpose})`);
        return;
      case 'text-delta':
        this.streamText(event.callId, event.purpose, event.text);
        return;
      case 'llm-retry':
        this.line(`  ⟳ ${event.error.message} — retrying in ${(event.delayMs / 1000).toFixed(1)} s`);
        return;
      case 'llm-response':
        this.spinner.stop();
        return;
      case 'tool-call':
        if (event.toolName === 'submit_answer') return;
        this.line(`  🔧 ${event.toolName} ${preview(event.arguments, ARGUMENT_PREVIEW_CHARS)}`);
        this.wait(`running ${event.toolName}`);
        return;
      case 'tool-result':
        this.spinner.stop();
        if (event.isError) this.line(`  ✗ ${event.toolName} failed`);
        return;
      case 'memory-compress':
        this.line(`  🗜 context compressed: ${event.tokensBefore} → ${event.tokensAfter} tokens`);
        return;
      case 'memory-prune':
        this.line(`  🗜 context pruned: ${event.tokensBefore} → ${event.tokensAfter} tokens`);
        return;
      case 'subtask-finish': {
        const { record } = event;
        const done = record.status === 'completed';
        this.line(
          `  ${done ? '✓' : '✗'} ${preview(done ? record.answer : (record.error ?? record.status), ANSWER_PREVIEW_CHARS)}`,
        );
        return;
      }
      case 'synthesis-finish':
        this.line(`🧩 synthesis ${event.status}: files ${event.deliverable.files.join(', ') || '(none)'}`);
        return;
      case 'verify-finish':
        this.line(
          `🔍 verification ${event.attempt}: ${event.verdict.status}` +
            (event.verdict.reason ? ` (${preview(event.verdict.reason, ANSWER_PREVIEW_CHARS)})` : ''),
        );
        for (const defect of event.defects) this.line(`   - ${defect.description}`);
        return;
      case 'repair-start':
        this.line(
          `🛠  repair ${event.attempt} (${event.defects.length} defect${event.defects.length === 1 ? '' : 's'})`,
        );
        return;
      case 'repair-finish':
        this.line(`   repair ${event.attempt} ${event.status}`);
        return;
      case 'run-warning':
        this.line(`  ⚠ ${event.message}`);
        return;
      case 'run-error':
        this.line(`✗ ${event.stage}: ${event.error.message}`);
        return;
      default:
        // Deltas of reasoning and tool arguments, and the managed-mode events, add nothing a reader can act on here.
        return;
    }
  }

  finish(result: RunResult): void {
    this.line('');
    this.line(`■ ${result.status}${result.error ? `: ${result.error.message}` : ''}`);
    if (result.status === 'unverified')
      this.line('⚠ NOT VERIFIED: nothing checked this deliverable against the request.');
    if (result.deliverable.answer) {
      this.line('Answer:');
      for (const answerLine of result.deliverable.answer.split('\n')) this.line(`  ${answerLine}`);
    }
    if (result.deliverable.files.length > 0) {
      this.line('Files:');
      for (const file of result.deliverable.files) this.line(`  ${result.workspace}/${file}`);
    }
    this.line(`Workspace: ${result.workspace}`);
    this.line(`Report: ${reportSummary(result)}`);
  }

  close(): void {
    this.endStream();
    this.spinner.stop();
  }

  private wait(label: string): void {
    this.endStream();
    // A tool name is whatever the model asked for, so the label is as untrusted as the rest.
    this.spinner.start(printable(label));
  }

  private streamText(callId: string, purpose: string, text: string): void {
    if (!NARRATING_PURPOSES.has(purpose)) return;
    this.spinner.stop();
    if (this.streamingCall !== callId) {
      this.endStream();
      this.out.write('  💬 ');
      this.streamingCall = callId;
    }
    this.out.write(printable(text).replaceAll('\n', '\n     '));
  }

  /** Ends the line that streamed text was written on, so the next output starts on its own line. */
  private endStream(): void {
    if (this.streamingCall === undefined) return;
    this.out.write('\n');
    this.streamingCall = undefined;
  }

  private line(text: string): void {
    this.endStream();
    this.spinner.clear();
    this.out.write(`${printable(text)}\n`);
  }
}

function preview(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > chars ? `${flat.slice(0, chars)}…` : flat;
}

/** One line of the report's headline numbers; the whole report is in `--json`'s result line. */
function reportSummary({ report }: RunResult): string {
  const parts = [
    `${report.modelCalls} model calls (${report.inputTokens} in / ${report.outputTokens} out tokens)`,
    `${report.toolCalls} tool calls`,
    `${report.subtasks} subtasks`,
  ];
  if (report.firstPassVerified !== null) parts.push(`first-pass verified: ${report.firstPassVerified ? 'yes' : 'no'}`);
  if (report.repairs > 0) parts.push(`repairs: ${report.repairs} (${recovery(report.repairRecovered)})`);
  parts.push(`${(report.wallTimeMs / 1000).toFixed(1)} s`);
  return parts.join(', ');
}

function recovery(recovered: boolean | null): string {
  if (recovered === null) return 'no verdict after the last repair';
  return recovered ? 'recovered' : 'not recovered';
}
