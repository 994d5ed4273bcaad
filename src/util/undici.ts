/**
 * undici, loaded on the first HTTP request rather than with the package: it costs about 180 ms and 20 MB to load,
 * which a host that builds a harness and never calls a model (tests, a CLI's `--help`) should not pay.
 * @module
 */
type Undici = typeof import('undici');

let loading: Promise<Undici> | undefined;

/** The undici module, imported once per process. @internal */
export function undici(): Promise<Undici> {
  loading ??= import('undici');
  return loading;
}
