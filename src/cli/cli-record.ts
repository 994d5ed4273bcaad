/**
 * `.harness/cli.json`: what a CLI run was started with, so that `horizon-harness resume` goes on with it the same way.
 * @module
 */
import { z } from 'zod';
import { FileRunStore } from '../durability/file-store.js';
import { SnapshotSeal } from '../durability/snapshot-seal.js';
import { HarnessError } from '../errors.js';
import { LocalWorkspace } from '../workspace/local-workspace.js';
import { withoutCredentials, type BackendRecipe } from './backend-choice.js';

/** Where a CLI run's record is, relative to its workspace. */
export const CLI_RECORD_PATH = '.harness/cli.json';
const FORMAT = 'horizon-harness/cli-run@1';

const RecipeSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('openai-compatible'),
    baseURL: z.url(),
    model: z.string().min(1),
    apiKeyEnv: z.string().min(1).optional(),
    stream: z.boolean(),
  }),
  z.strictObject({
    kind: z.literal('anthropic'),
    model: z.string().min(1),
    apiKeyEnv: z.string().min(1),
    stream: z.boolean(),
  }),
  z.strictObject({ kind: z.literal('replay') }),
]);

const RecordSchema = z.strictObject({
  format: z.literal(FORMAT),
  runId: z.string().min(1),
  backend: RecipeSchema,
  decomposition: z.boolean(),
  verification: z.boolean(),
  /** The names of the tools the run had: `resume` must build the same set. */
  tools: z.array(z.string()),
});

/** What a CLI run was started with: never a secret (the backend's key is named by its variable, never stored). */
export type CliRunRecord = Omit<z.infer<typeof RecordSchema>, 'format' | 'backend'> & { backend: BackendRecipe };

/**
 * Writes the record into the workspace before the run starts (through the workspace, so a link planted at the path
 * is not followed), sealed with the run's snapshot key: the record says where the key goes, so `resume` must not
 * trust one that the agent's code could have rewritten. A key inside the base URL (`https://user:key@…`) is left out.
 */
export async function saveCliRecord(workspaceDir: string, record: CliRunRecord): Promise<void> {
  const backend =
    record.backend.kind === 'openai-compatible'
      ? { ...record.backend, baseURL: withoutCredentials(record.backend.baseURL) }
      : record.backend;
  const seal = await sealOf(record.runId, workspaceDir, true);
  const workspace = await LocalWorkspace.create({ dir: workspaceDir });
  try {
    const text = `${seal.sealLine({ format: FORMAT, ...record, backend })}\n`;
    await workspace.writeFile(CLI_RECORD_PATH, text, { tool: 'horizon-harness' });
  } finally {
    await workspace.dispose();
  }
}

/**
 * Reads the record of the CLI run in `workspaceDir`, as untrusted input: its seal first, then its shape. Throws
 * `invalid-input` when there is none, when its seal does not match (changed, or not written by this user's CLI) and
 * when it is not of the shape this version writes.
 */
export async function loadCliRecord(workspaceDir: string): Promise<CliRunRecord> {
  const where = `${workspaceDir}/${CLI_RECORD_PATH}`;
  let text: string;
  try {
    const workspace = await LocalWorkspace.create({ dir: workspaceDir });
    text = (await workspace.readFile(CLI_RECORD_PATH)).toString('utf8');
    await workspace.dispose();
  } catch (error) {
    throw new HarnessError(
      'invalid-input',
      `No CLI run to resume in "${workspaceDir}": ${where} cannot be read. resume goes on with a run that ` +
        '`horizon-harness run` or `replay` started in that workspace; a run started from code resumes with harness.resume().',
      { cause: error },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new HarnessError('invalid-input', `${where} is not valid JSON; it was not written by horizon-harness run.`, {
      cause: error,
    });
  }
  const runId = (raw as { runId?: unknown } | null)?.runId;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || typeof runId !== 'string' || runId === '')
    throw new HarnessError('invalid-input', `${where} is not a CLI run record (it names no run).`);
  const seal = await sealOf(runId, workspaceDir, false);
  if (!seal.lineIsSealed(raw as Record<string, unknown>)) {
    throw new HarnessError(
      'invalid-input',
      `${where} was changed since the CLI wrote it, or not written by it (its seal does not match, checked with ` +
        `${seal.source}); nothing of it is used. Code that ran in the workspace may have rewritten it (to send your ` +
        'key to another server, say). Resume as the user who started the run, or start it again with run.',
    );
  }
  const { mac: _mac, ...sealed } = raw as Record<string, unknown>;
  const parsed = RecordSchema.safeParse(sealed);
  if (!parsed.success) {
    throw new HarnessError(
      'invalid-input',
      `${where} is not a CLI run record this version of horizon-harness wrote (${parsed.error.issues[0]?.message ?? 'unknown shape'}).`,
    );
  }
  const { format: _format, ...record } = parsed.data;
  return record;
}

/** The seal of the run's snapshots in its workspace (the CLI keeps them there): the same key seals the record. */
function sealOf(runId: string, workspaceDir: string, writing: boolean): Promise<SnapshotSeal> {
  const store = FileRunStore.inWorkspace(workspaceDir);
  return SnapshotSeal.forRun({ runId, option: undefined, store, ...(writing ? { workspaceRoot: workspaceDir } : {}) });
}
