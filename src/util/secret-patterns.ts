/**
 * Secrets recognised by their shape rather than their value: credentials inside URLs and tokens whose issuer gives
 * them a fixed prefix. They are redacted even when the harness was never told the value.
 * @module
 * @internal
 */

/** What a secret is replaced with. @internal */
export const REDACTED = '[REDACTED]';

/**
 * One shape: the pattern (global) and what a match becomes. Every pattern starts with a fixed literal or a short
 * bounded prefix, so a scan stays linear in the text's length.
 */
interface SecretShape {
  name: string;
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

const whole = (): string => REDACTED;

/** The shapes, most specific first. @internal */
export const SECRET_SHAPES: readonly SecretShape[] = [
  {
    // `postgres://app:pw@db`, `redis://:pw@cache`, a Sentry DSN `https://key@o1.ingest.sentry.io/1`: the whole userinfo.
    name: 'url-credentials',
    pattern: /\b([a-z][a-z0-9+.-]{1,30}:\/\/)([^\s/?#@"'<>`\\]+)@/gi,
    replace: (_match, scheme) => `${scheme}${REDACTED}@`,
  },
  {
    name: 'private-key',
    pattern: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]{0,20000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g,
    replace: whole,
  },
  // OpenAI, Anthropic (`sk-ant-`), DeepSeek and most OpenAI-compatible providers.
  { name: 'sk-token', pattern: /\bsk-[A-Za-z0-9_-]{20,}/g, replace: whole },
  { name: 'github-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}/g, replace: whole },
  { name: 'github-pat', pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: whole },
  { name: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: whole },
  { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: whole },
  { name: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replace: whole },
  { name: 'google-api-key', pattern: /\bAIza[A-Za-z0-9_-]{35}/g, replace: whole },
  { name: 'stripe-key', pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g, replace: whole },
  { name: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: whole },
  { name: 'huggingface-token', pattern: /\bhf_[A-Za-z0-9]{30,}/g, replace: whole },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: whole },
  {
    // `Authorization: Bearer …` copied into a log line; the scheme word stays so the text still reads.
    name: 'auth-scheme',
    pattern: /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16,}/g,
    replace: (_match, scheme) => `${scheme} ${REDACTED}`,
  },
];

/** `text` with every {@link SECRET_SHAPES} match replaced. @internal */
export function redactSecretShapes(text: string): string {
  let out = text;
  for (const shape of SECRET_SHAPES) {
    shape.pattern.lastIndex = 0;
    if (shape.pattern.test(out)) out = out.replace(shape.pattern, shape.replace as (match: string) => string);
  }
  return out;
}
