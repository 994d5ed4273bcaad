/**
 * The CLI's last step before text reaches a terminal or a pipe: the secrets it knows are replaced.
 * @module
 */
import type { SecretRedactor } from '../util/secrets.js';
import type { CliOutput } from './io.js';

/**
 * `output` with every write redacted by `redactor`. A JSON line stays valid JSON: a secret is replaced by
 * `[REDACTED]`, which needs no escaping. A secret split across two writes (two streamed text deltas) is not caught.
 */
export function redactingOutput(output: CliOutput, redactor: SecretRedactor): CliOutput {
  return {
    write: (text: string) => output.write(redactor.text(text)),
    ...(output.isTTY === undefined ? {} : { isTTY: output.isTTY }),
  };
}
