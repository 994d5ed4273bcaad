/**
 * The audit verdict: its shape, and how the auditor's own verdict is told apart from one the executor wrote. The
 * built-in auditor's verdict is its submitted answer; an external auditor's is the block of its output that carries
 * the episode's nonce, which only the auditor's prompt ever held.
 * @module
 */
import { z } from 'zod';
import { parseJsonReply, type JsonReplyParse } from '../../json/parse-json-reply.js';

const text = z.string().trim().min(1);

/** The verdict JSON an auditor returns. */
export const VerdictSchema = z.object({
  status: z.enum(['complete', 'incomplete', 'blocked']),
  integrity: z.enum(['clean', 'suspect', 'violation']),
  findings: z
    .array(
      z.object({
        recordId: text.optional(),
        check: text,
        observed: z.string().default(''),
        verdict: z.enum(['pass', 'fail']),
      }),
    )
    .default([]),
});
export type ParsedVerdict = z.output<typeof VerdictSchema>;

/** A fresh per-episode nonce: 64 random bits, drawn after the executor's episode has ended. */
export function verdictNonce(): string {
  return process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex');
}

/** The line that opens an external auditor's verdict block. */
const openLine = (nonce: string) => `VERDICT-${nonce}`;
/** The line that closes it. */
const closeLine = (nonce: string) => `END-VERDICT-${nonce}`;

/**
 * How an external auditor hands in its verdict. The marker lines are written inline here, never alone on a line, so
 * an agent that echoes its prompt does not hand in a block by doing so.
 */
export function externalSubmitInstructions(nonce: string): string {
  return (
    `End your output with your verdict in a block: a line \`${openLine(nonce)}\`, then the verdict JSON object, then ` +
    `a line \`${closeLine(nonce)}\`, each marker line on its own. Only a block with this code counts, and only one: ` +
    'nothing else in your output is read for the verdict, so do not put anything quoted (a claim, a file) in it.'
  );
}

/**
 * The bodies of the blocks of `output` marked with `nonce`: text between a line that is exactly the opening marker
 * and the next line that is exactly the closing one (surrounding spaces and a CR aside). One pass over the lines.
 */
export function verdictBlocks(output: string, nonce: string): string[] {
  const open = openLine(nonce);
  const close = closeLine(nonce);
  const blocks: string[] = [];
  let body: string[] | undefined;
  for (const line of output.split('\n')) {
    const bare = line.trim();
    if (bare === open) body = [];
    else if (bare === close && body) {
      blocks.push(body.join('\n'));
      body = undefined;
    } else body?.push(line);
  }
  return blocks;
}

/**
 * The verdict of one audit episode, when it is the auditor's own: the built-in auditor's answer (`nonce` absent), or
 * the marked blocks of an external auditor's output. Either way exactly one distinct verdict may be there, and it must
 * not be a copy of one in `given` (the audit task with the claim, the claim itself, verdicts found in what the
 * auditor's tools read).
 */
export function parseAuditReply(
  reply: string,
  nonce: string | undefined,
  given: readonly string[],
): JsonReplyParse<ParsedVerdict> {
  if (nonce === undefined) return parseJsonReply(reply, VerdictSchema, { given });
  const blocks = verdictBlocks(reply, nonce);
  if (blocks.length === 0) {
    return {
      ok: false,
      error:
        `The output has no verdict block: a line ${openLine(nonce)}, the verdict JSON object, and a line ` +
        `${closeLine(nonce)}. Only such a block, with this episode's code, is read for the verdict.`,
    };
  }
  return parseJsonReply(blocks.join('\n'), VerdictSchema, { given });
}
