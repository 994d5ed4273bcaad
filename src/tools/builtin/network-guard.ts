/**
 * The network policy of the tools that fetch a URL the model chose (`visit`): which hosts and addresses they may
 * reach. Checked twice: on each URL before it is requested (names, allow/deny lists, IP literals), and on every
 * connection the guarded undici Agent opens, against the addresses DNS actually returned, so a name that resolves to
 * 127.0.0.1 and every redirect hop are covered. Only {@link NetworkOptions} is public.
 * @module
 */
import type { LookupFunction } from 'node:net';
import type Ipaddr from 'ipaddr.js';
import type { Agent, buildConnector } from 'undici';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { undici } from '../../util/undici.js';

/** What the tools that fetch model-chosen URLs may reach. */
export interface NetworkOptions {
  /**
   * Also reach loopback, private (RFC 1918), link-local, carrier-grade NAT (100.64.0.0/10) and unique-local IPv6
   * addresses, as local development and intranet pages need. Cloud metadata services stay refused.
   * @defaultValue false
   */
  allowPrivate?: boolean;
  /**
   * Allowlist mode: only these hosts can be reached at all, also as redirect targets; the mitigation against a model
   * sending data out in a URL. `example.com` matches that host exactly, `*.example.com` its subdomains; IP addresses
   * match the address written in the URL. The address checks still apply.
   */
  allowHosts?: string[];
  /** Hosts never reached, in the same forms as `allowHosts`. */
  denyHosts?: string[];
}

/** node:net, loaded by the first host check rather than with the package. */
function net(): typeof import('node:net') {
  return process.getBuiltinModule('node:net');
}

/** The host part of a URL, canonicalised the way WHATWG URLs are (lowercase, punycode, IPv4 in dotted form). */
function canonicalHost(entry: string): string | undefined {
  const bare = entry.replace(/^\[(.*)\]$/, '$1');
  if (net().isIPv6(bare)) return new URL(`http://[${bare}]/`).hostname;
  if (/[/:@?#\\\s[\]]/.test(entry)) return undefined;
  try {
    const url = new URL(`http://${entry}/`);
    return url.hostname === '' ? undefined : url.hostname.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

const HOST_PATTERN_HINT =
  'must be a host name ("example.com"), a subdomain pattern ("*.example.com") or an IP address, without scheme, port or path';

const HostPattern = z
  .string()
  .trim()
  .transform((entry, ctx) => {
    const wildcard = entry.startsWith('*.');
    const host = canonicalHost(wildcard ? entry.slice(2) : entry);
    if (host === undefined || (wildcard && net().isIP(host.replace(/^\[(.*)\]$/, '$1')) !== 0)) {
      ctx.addIssue({ code: 'custom', message: `${HOST_PATTERN_HINT}; got ${JSON.stringify(entry)}` });
      return z.NEVER;
    }
    return wildcard ? `*.${host}` : host;
  });

/** zod schema of {@link NetworkOptions}; unknown keys are refused, since a misspelt allowlist would fail open. @internal */
export const NetworkOptionsSchema = z.strictObject({
  allowPrivate: z.boolean().default(false),
  allowHosts: z
    .array(HostPattern)
    .min(1, 'is empty, which would block every URL; leave the tool out instead (e.g. builtinTools({ visit: false }))')
    .optional(),
  denyHosts: z.array(HostPattern).default([]),
});

type ResolvedNetwork = z.output<typeof NetworkOptionsSchema>;

/** Names of cloud metadata services (GCP, AWS); they hand out credentials, so no option opens them. */
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);
/** Metadata addresses: AWS/GCP/Azure/OCI, AWS ECS task credentials, Alibaba Cloud, AWS over IPv6. */
const METADATA_ADDRESS_LIST = ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'];

/** ipaddr.js ranges that `allowPrivate` opens; every other non-public range is always refused. */
const PRIVATE_RANGES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private (RFC 1918) address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10) address',
  uniqueLocal: 'a unique-local IPv6 address',
  deprecatedSiteLocal: 'a site-local IPv6 address',
};

/** ipaddr.js and what is parsed with it, built by the first address check. */
interface AddressKit {
  ipaddr: typeof Ipaddr;
  metadataAddresses: Set<string>;
  nat64: [Ipaddr.IPv6, number];
  globalUnicast: [Ipaddr.IPv6, number];
}

let addressKit: AddressKit | undefined;

function kit(): AddressKit {
  if (!addressKit) {
    // Required, not imported: Node reads a CommonJS package imported from ESM with its export lexer, and optimising
    // the lexer on ipaddr.js's source alone adds about 7 MB of RSS to `import 'horizon-harness'`.
    const lib = process.getBuiltinModule('node:module').createRequire(import.meta.url)('ipaddr.js') as typeof Ipaddr;
    addressKit = {
      ipaddr: lib,
      metadataAddresses: new Set(METADATA_ADDRESS_LIST.map((address) => lib.parse(address).toString())),
      nat64: lib.IPv6.parseCIDR('64:ff9b::/96'),
      globalUnicast: lib.IPv6.parseCIDR('2000::/3'),
    };
  }
  return addressKit;
}

/** The IPv4 address an IPv6 address stands for (mapped, translated, compatible, NAT64, 6to4), else the address itself. */
function effectiveAddress(ip: Ipaddr.IPv4 | Ipaddr.IPv6): Ipaddr.IPv4 | Ipaddr.IPv6 {
  if (ip.kind() === 'ipv4') return ip;
  const { ipaddr, nat64 } = kit();
  const v6 = ip as Ipaddr.IPv6;
  const bytes = v6.toByteArray();
  const range = v6.range();
  const last4 = (): Ipaddr.IPv4 => ipaddr.fromByteArray(bytes.slice(12)) as Ipaddr.IPv4;
  if (range === 'ipv4Mapped' || range === 'rfc6145' || v6.match(nat64)) return last4();
  // IPv4-compatible (::a.b.c.d, deprecated), but not :: and ::1 themselves.
  if (range === 'unicast' && bytes.slice(0, 12).every((byte) => byte === 0)) return last4();
  if (range === '6to4') return ipaddr.fromByteArray(bytes.slice(2, 6)) as Ipaddr.IPv4;
  return v6;
}

type Verdict = { kind: 'public' } | { kind: 'private' | 'never'; what: string };

/** Classifies an IP address: public, private (opened by `allowPrivate`), or never reachable. @internal */
export function classifyAddress(address: string): Verdict {
  const { ipaddr, metadataAddresses, globalUnicast } = kit();
  let parsed: Ipaddr.IPv4 | Ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[(.*)\]$/, '$1'));
  } catch {
    return { kind: 'never', what: 'an address that could not be checked' };
  }
  const ip = effectiveAddress(parsed);
  if (metadataAddresses.has(ip.toString())) return { kind: 'never', what: 'a cloud metadata service' };
  const range = ip.range();
  const privateWhat = PRIVATE_RANGES[range];
  if (privateWhat) return { kind: 'private', what: privateWhat };
  if (range === 'unicast' && (ip.kind() === 'ipv4' || (ip as Ipaddr.IPv6).match(globalUnicast)))
    return { kind: 'public' };
  const what: Record<string, string> = {
    unspecified: 'the unspecified address',
    multicast: 'a multicast address',
    broadcast: 'the broadcast address',
    reserved: 'a reserved address',
  };
  return {
    kind: 'never',
    what: what[range] ?? (range === 'unicast' ? 'an unassigned IPv6 address' : `a special-purpose address (${range})`),
  };
}

function matches(host: string, pattern: string): boolean {
  return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;
}

/**
 * Walks an error's `cause` chain for a network refusal, so fetch's wrapping does not turn it into a connection error.
 * @internal
 */
export function findRefusal(error: unknown): HarnessError | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 6; depth += 1) {
    if (HarnessError.isInstance(current) && current.code === 'policy-denied') return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Decides which hosts and addresses a tool may reach; every refusal is a `policy-denied` HarnessError. @internal */
export class NetworkPolicy {
  readonly #options: ResolvedNetwork;
  readonly #label: string;

  /** @param options already parsed with {@link NetworkOptionsSchema}. */
  constructor(options: ResolvedNetwork, label: string) {
    this.#options = options;
    this.#label = label;
  }

  #refuse(host: string, reason: string): HarnessError {
    return new HarnessError('policy-denied', `${this.#label}: refused ${host}: ${reason}`);
  }

  /** Checks a host name or IP literal as written in a URL (URL `hostname` form), before any DNS query. */
  checkHost(hostname: string): void {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    const { allowHosts, denyHosts } = this.#options;
    if (denyHosts.some((pattern) => matches(host, pattern))) {
      throw this.#refuse(host, 'the application blocks this host (network.denyHosts).');
    }
    if (allowHosts && !allowHosts.some((pattern) => matches(host, pattern))) {
      const shown = allowHosts.slice(0, 10).join(', ') + (allowHosts.length > 10 ? ', …' : '');
      throw this.#refuse(host, `only the hosts the application allows can be reached (${shown}). Use one of them.`);
    }
    if (METADATA_HOSTS.has(host)) throw this.#refuse(host, 'it is a cloud metadata service, which is never reached.');
    if (host === 'localhost' || host.endsWith('.localhost'))
      this.#enforce(host, { kind: 'private', what: 'a loopback name' }, 'it is');
    const literal = host.replace(/^\[(.*)\]$/, '$1');
    if (net().isIP(literal) !== 0) this.#enforce(host, classifyAddress(literal), 'it is');
  }

  /** Checks an address a host name resolved to; the message names the host, never the internal address. */
  checkResolved(hostname: string, address: string): void {
    this.#enforce(hostname, classifyAddress(address), 'the name resolves to');
  }

  /** Checks a URL's host (see {@link checkHost}). */
  checkUrl(url: URL): void {
    this.checkHost(url.hostname);
  }

  #enforce(host: string, verdict: Verdict, subject: 'it is' | 'the name resolves to'): void {
    if (verdict.kind === 'public' || (verdict.kind === 'private' && this.#options.allowPrivate)) return;
    const why =
      verdict.kind === 'private'
        ? 'private networks are not reached unless the application allows them (network.allowPrivate). Use a public URL.'
        : 'which is never reached.';
    throw this.#refuse(host, `${subject} ${verdict.what}${verdict.kind === 'private' ? ', and ' : ', '}${why}`);
  }
}

/** Test seams of {@link guardedAgent}. @internal */
export interface GuardedAgentOptions {
  /** DNS resolution, in `net.connect`'s `lookup` shape. @defaultValue `dns.lookup` */
  lookup?: LookupFunction;
  /** Opens the connections the policy approved. @defaultValue undici's `buildConnector` using the guarded lookup */
  connector?: buildConnector.connector;
}

/** Wraps a lookup so that every address it returns is checked before `net.connect` may use any of them. */
function guardedLookup(policy: NetworkPolicy, resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (error, address, family) => {
      if (error) {
        callback(error, address, family);
        return;
      }
      const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
      try {
        // One refused address refuses the name: a rebinding answer may mix a public and a private address.
        for (const each of addresses) policy.checkResolved(hostname, each);
      } catch (refusal) {
        callback(refusal as HarnessError, address, family);
        return;
      }
      callback(null, address, family);
    });
  };
}

/**
 * An undici Agent whose every connection is checked against the policy: the host before DNS, an IP literal directly,
 * and a name on the addresses DNS returned, which are the only ones `net.connect` then uses.
 * @internal
 */
export async function guardedAgent(policy: NetworkPolicy, options: GuardedAgentOptions = {}): Promise<Agent> {
  const { Agent, buildConnector } = await undici();
  const lookup = guardedLookup(
    policy,
    options.lookup ?? (process.getBuiltinModule('node:dns').lookup as LookupFunction),
  );
  const connector = options.connector ?? buildConnector({ lookup });
  return new Agent({
    connect: (connectOptions, callback) => {
      try {
        policy.checkHost(
          net().isIPv6(connectOptions.hostname) ? `[${connectOptions.hostname}]` : connectOptions.hostname,
        );
      } catch (refusal) {
        callback(refusal as HarnessError, null);
        return;
      }
      connector(connectOptions, callback);
    },
  });
}
