import net, { type LookupFunction } from 'node:net';
import { buildConnector, MockAgent } from 'undici';

/**
 * A connector that records every connection the guard let through and opens none, except to the hosts `realFor`
 * accepts (loopback test servers only): no test sends a packet to a private, metadata or public address.
 */
export function recordingConnector(realFor: (hostname: string) => boolean = () => false) {
  const calls: string[] = [];
  const real = buildConnector({});
  const connector: buildConnector.connector = (options, callback) => {
    calls.push(options.hostname);
    if (realFor(options.hostname)) real(options, callback);
    else callback(new Error(`test connector: no real connection to ${options.hostname}`), null);
  };
  return { calls, connector };
}

/** A DNS stand-in answering from a table; an unknown name fails as ENOTFOUND, never falling back to real DNS. */
export function stubLookup(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    const addresses = (answers[hostname] ?? []).map((address) => ({ address, family: net.isIP(address) }));
    const first = addresses[0];
    if (!first) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  };
  return { asked, lookup };
}

/** A MockAgent that answers every request with a small text page and records its URL; it never touches the network. */
export function recordingMockAgent() {
  const requested: string[] = [];
  const agent = new MockAgent();
  agent.disableNetConnect();
  agent
    .get(() => true)
    .intercept({ path: () => true, method: 'GET' })
    .reply((request) => {
      requested.push(`${request.origin}${request.path}`);
      return { statusCode: 200, data: 'a public page', responseOptions: { headers: { 'content-type': 'text/plain' } } };
    })
    .persist();
  return { agent, requested };
}
