/**
 * The typed result of `run({ output })`: the finished deliverable's answer asked for once more as a JSON value in the
 * app's schema, validated by that schema, re-asked once with the schema's complaints, never invented.
 * @module
 */
import type { Message } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import type { Deliverable } from '../contracts/work.js';
import { jsonCandidates, parseOrUndefined } from '../json/extract-json.js';
import { callModel, type ModelCallContext } from '../llm/call-model.js';
import { headTail } from '../memory/truncate.js';
import type { DataMark } from '../prompts/datamark.js';
import { validateWithSchema, type JsonSchema, type SchemaIssue } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';

/** The scope of the typed-result calls in events and the report (purpose `synthesize`). */
export const TYPED_OUTPUT_SCOPE = 'output';

/** What {@link askTypedOutput} works from. */
export interface TypedOutputRequest {
  /** The app's schema and the JSON Schema the model is shown. */
  schema: StandardSchemaV1;
  jsonSchema: JsonSchema;
  /** The original request, verbatim. */
  task: string;
  /** The run's final deliverable. */
  deliverable: Deliverable;
  /** The run's boundary of untrusted text: the answer is model output, shown as data. */
  mark: DataMark;
}

/** A value that passed the schema, or the schema's last complaint (after one re-ask). */
export type TypedOutputOutcome =
  | { ok: true; value: unknown; calls: number }
  | { ok: false; error: string; calls: number };

const SYSTEM =
  'You turn the finished answer of a task into one JSON value that matches the JSON Schema you are given. Use only ' +
  'what the answer says; where it says nothing for a required field, use the closest faithful value the schema ' +
  'allows. Reply with the JSON value only: no prose, no code fence.';

/**
 * Asks the model (with `responseFormat: json` and the schema) for the deliverable's answer as a JSON value and
 * validates it with the app's schema (`~standard.validate`, sync or async); an invalid or unparseable reply is
 * re-asked once, quoting what was wrong. Backend errors (an abort included) propagate.
 */
export async function askTypedOutput(call: ModelCallContext, request: TypedOutputRequest): Promise<TypedOutputOutcome> {
  const messages: Message[] = [
    { role: 'system', content: request.mark.withRule(SYSTEM) },
    { role: 'user', content: renderRequest(request) },
  ];
  const responseFormat = { type: 'json' as const, schema: request.jsonSchema, name: 'output' };
  const first = await callModel(call, { messages, responseFormat });
  const firstCheck = await checkReply(first.message.content, request.schema);
  if (firstCheck.ok) return { ...firstCheck, calls: 1 };
  const reply = first.message.content;
  const retry: Message[] = [
    ...messages,
    { role: 'assistant', content: reply.length > DEFAULTS.maxJsonReplyChars ? headTail(reply, 2_000) : reply },
    {
      role: 'user',
      content:
        `That value does not match the schema: ${firstCheck.error}\n` +
        'Reply again with only the corrected JSON value: no prose, no code fence.',
    },
  ];
  const second = await callModel(call, { messages: retry, responseFormat });
  const secondCheck = await checkReply(second.message.content, request.schema);
  return { ...secondCheck, calls: 2 };
}

function renderRequest(request: TypedOutputRequest): string {
  const { mark, deliverable } = request;
  const files = deliverable.files.length ? `\n\nFiles delivered: ${mark.names(deliverable.files)}` : '';
  return (
    `Task:\n${mark.block(request.task)}\n\nFinished answer:\n${mark.block(deliverable.answer || '(no text answer)')}` +
    `${files}\n\nJSON Schema of the value to reply with:\n${JSON.stringify(request.jsonSchema)}`
  );
}

type Checked = { ok: true; value: unknown } | { ok: false; error: string };

/** The first JSON value in the reply that the schema accepts; else why none did. */
async function checkReply(text: string, schema: StandardSchemaV1): Promise<Checked> {
  const values = text.length > DEFAULTS.maxJsonReplyChars ? [] : jsonCandidates(text).map(parseOrUndefined);
  const parsed = values.filter((value) => value !== undefined);
  if (parsed.length === 0) return { ok: false, error: 'the reply holds no JSON value.' };
  let issues: SchemaIssue[] = [];
  for (const value of parsed) {
    const checked = await validateWithSchema(schema, value);
    if (checked.ok) return checked;
    issues = checked.issues;
  }
  return { ok: false, error: issues.map((issue) => `${issue.path || '(the value)'}: ${issue.message}`).join('; ') };
}
