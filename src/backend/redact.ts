/**
 * An adapter's credentials (the values its redactor, `src/util/redact.ts`, keeps out of everything it produces) and
 * its URL as it may be shown.
 * @module
 * @internal
 */

/** Header names whose values are credentials: `authorization`, `x-api-key`, `api-key`, `cookie`, `x-auth-token`, … */
const SECRET_HEADER = /auth|key|token|secret|passw|cookie|session|signature|credential/i;

/**
 * The secrets an adapter sends: the api key, the values of credential-carrying headers (also the token alone of
 * `Bearer …` / `Basic …`, and a Basic pair decoded), and a password in the base URL.
 * @internal
 */
export function credentialSecrets(input: {
  apiKey?: string | undefined;
  headers: Record<string, string>;
  url: string;
}): string[] {
  const secrets: string[] = [];
  if (input.apiKey) secrets.push(input.apiKey);
  for (const [name, value] of Object.entries(input.headers)) {
    if (!SECRET_HEADER.test(name)) continue;
    secrets.push(value);
    const scheme = /^\s*(bearer|basic|token)\s+(\S+)\s*$/i.exec(value);
    if (!scheme?.[2]) continue;
    secrets.push(scheme[2]);
    if (scheme[1]?.toLowerCase() === 'basic') {
      const decoded = Buffer.from(scheme[2], 'base64').toString('utf8');
      secrets.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
    }
  }
  const url = new URL(input.url);
  if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
  return secrets;
}

/** The URL as it may be shown: no user, password or query string. @internal */
export function displayUrl(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  shown.search = '';
  return shown.toString().replace(/\/$/, '');
}
