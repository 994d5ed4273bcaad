import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { builtinTools } from '../../../src/tools/builtin/index.js';
import { guardedAgent, NetworkOptionsSchema, NetworkPolicy } from '../../../src/tools/builtin/network-guard.js';
import { visitTool, type VisitToolOptions } from '../../../src/tools/builtin/visit.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import type { Tool, ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { recordingConnector, recordingMockAgent, stubLookup } from './support/network.js';
import { startServer, type LoopbackServer } from './support/server.js';

/**
 * visit and the network policy (issue #13). Only loopback servers receive real traffic; every other address goes to
 * a recording MockAgent or connector, which would show a request the guard should have stopped.
 */

let server: LoopbackServer | undefined;
let test: TestContext | undefined;
afterEach(async () => {
  await server?.close();
  await test?.dispose();
  server = undefined;
  test = undefined;
});

async function visit(url: string, options: VisitToolOptions = {}): Promise<ToolOutput> {
  test ??= await createTestContext();
  const tool = visitTool(options);
  return tool.execute(zodInput(tool).parse({ url }), test.ctx);
}

async function refused(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  expect((error as HarnessError).code).toBe('policy-denied');
  expect((error as HarnessError).retryable).toBe(false);
  return error as HarnessError;
}

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);
const pageServer = () =>
  startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('secret internal page');
  });

describe('visit refuses private networks by default', () => {
  it.each(['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '2130706433', '0x7f000001', '127.1', '0177.0.0.1'])(
    'http://%s:<port>/ never reaches the loopback server',
    async (host) => {
      server = await pageServer();
      const error = await refused(visit(`http://${host}:${new URL(server.url).port}/`));
      expect(error.message).toContain(
        'private networks are not reached unless the application allows them (network.allowPrivate)',
      );
      expect(server.requests).toHaveLength(0);
    },
  );

  it.each([
    ['[::1]', 'a loopback address'],
    ['0.0.0.0', 'the unspecified address'],
    ['169.254.169.254', 'a cloud metadata service'],
    ['metadata.google.internal', 'a cloud metadata service'],
    ['[fd00:ec2::254]', 'a cloud metadata service'],
    ['100.100.100.200', 'a cloud metadata service'],
    ['10.1.2.3', 'a private (RFC 1918) address'],
    ['100.64.0.1', 'a carrier-grade NAT'],
  ])('http://%s/ is refused (%s) before any request', async (host, why) => {
    const mock = recordingMockAgent();
    const error = await refused(visit(`http://${host}/latest/meta-data/`, { dispatcher: mock.agent }));
    expect(error.message).toContain(why);
    expect(mock.requested).toEqual([]);
  });

  it('sends a public URL on to the dispatcher (the recording above would show a leak)', async () => {
    const mock = recordingMockAgent();
    expect(textOf(await visit('https://example.org/page', { dispatcher: mock.agent }))).toContain('a public page');
    expect(mock.requested).toEqual(['https://example.org/page']);
  });

  it('keeps metadata services refused even with allowPrivate', async () => {
    const mock = recordingMockAgent();
    await refused(visit('http://169.254.169.254/', { dispatcher: mock.agent, network: { allowPrivate: true } }));
    expect(mock.requested).toEqual([]);
  });

  it('with allowPrivate reaches the loopback server through its own guarded Agent', async () => {
    server = await pageServer();
    expect(textOf(await visit(`${server.url}/`, { network: { allowPrivate: true } }))).toContain(
      'secret internal page',
    );
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a name that resolves to 127.0.0.1 (stubbed DNS) at connection time', async () => {
    server = await pageServer();
    const dns = stubLookup({ 'wiki.example': ['127.0.0.1'] });
    const dispatcher = await guardedAgent(new NetworkPolicy(NetworkOptionsSchema.parse({}), 'visit'), {
      lookup: dns.lookup,
    });
    const error = await refused(visit(`http://wiki.example:${new URL(server.url).port}/`, { dispatcher }));
    expect(error.message).toBe(
      'visit: refused wiki.example: the name resolves to a loopback address, and private networks are not reached unless the application allows them (network.allowPrivate). Use a public URL.',
    );
    expect(dns.asked).toEqual(['wiki.example']);
    expect(server.requests).toHaveLength(0);
  });
});

describe('visit redirects', () => {
  const METADATA = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
  const ALLOW_LOOPBACK = { allowPrivate: true, allowHosts: ['127.0.0.1'] };
  it.each([
    [METADATA, ALLOW_LOOPBACK, 'only the hosts the application allows can be reached (127.0.0.1)'],
    [
      'http://collector.example/collect?ssh_key=AAAA',
      ALLOW_LOOPBACK,
      'only the hosts the application allows can be reached (127.0.0.1)',
    ],
    [METADATA, { allowPrivate: true }, 'it is a cloud metadata service'],
  ])(
    'a redirect from an allowed loopback server to %s (network %j) is refused before connecting',
    async (target, network, why) => {
      server = await startServer((_req, res) => {
        res.writeHead(302, { location: target });
        res.end();
      });
      const spy = recordingConnector((hostname) => hostname === '127.0.0.1');
      const dns = stubLookup({});
      const dispatcher = await guardedAgent(new NetworkPolicy(NetworkOptionsSchema.parse(network), 'visit'), {
        connector: spy.connector,
        lookup: dns.lookup,
      });
      const error = await refused(visit(`${server.url}/start`, { network, dispatcher }));
      expect(error.message).toContain(why);
      expect(server.requests.map((request) => request.url)).toEqual(['/start']);
      expect(spy.calls).toEqual(['127.0.0.1']);
      expect(dns.asked).toEqual([]);
    },
  );
});

describe('visit host lists', () => {
  const network = { allowHosts: ['docs.example.org', '*.wikipedia.org'] };

  it.each(['https://docs.example.org/guide', 'https://en.wikipedia.org/wiki/Agent', 'https://DOCS.example.org./x'])(
    'allowHosts lets %s through',
    async (url) => {
      const mock = recordingMockAgent();
      expect(textOf(await visit(url, { network, dispatcher: mock.agent }))).toContain('a public page');
      expect(mock.requested).toHaveLength(1);
    },
  );

  it.each([
    'https://collector.example/collect?ssh_key=AAAA',
    'https://wikipedia.org/',
    'https://evilwikipedia.org/',
    'https://docs.example.org.collector.example/',
  ])('allowHosts refuses %s', async (url) => {
    const mock = recordingMockAgent();
    const error = await refused(visit(url, { network, dispatcher: mock.agent }));
    expect(error.message).toContain(
      'only the hosts the application allows can be reached (docs.example.org, *.wikipedia.org)',
    );
    expect(mock.requested).toEqual([]);
  });

  it('allowHosts in the default Agent: a listed loopback host (with allowPrivate) is reached, another name is not', async () => {
    server = await pageServer();
    const options = { network: { allowPrivate: true, allowHosts: ['127.0.0.1'] } };
    expect(textOf(await visit(`${server.url}/`, options))).toContain('secret internal page');
    await refused(visit(`http://localhost:${new URL(server.url).port}/`, options));
    expect(server.requests).toHaveLength(1);
  });

  it('denyHosts refuses a host and its listed subdomains', async () => {
    const mock = recordingMockAgent();
    const options = { network: { denyHosts: ['*.tracker.example', 'paste.example'] }, dispatcher: mock.agent };
    expect((await refused(visit('https://a.tracker.example/', options))).message).toContain('network.denyHosts');
    await refused(visit('https://paste.example/raw', options));
    expect(textOf(await visit('https://example.org/', options))).toContain('a public page');
    expect(mock.requested).toEqual(['https://example.org/']);
  });

  it('the Jina reader gets no refused URL either (its own endpoint is the application’s choice)', async () => {
    server = await startServer((_req, res) => {
      res.end('markdown');
    });
    await refused(visit('http://169.254.169.254/', { reader: 'jina', jinaBaseURL: server.url }));
    await refused(visit('https://collector.example/?k=1', { reader: 'jina', jinaBaseURL: server.url, network }));
    expect(server.requests).toHaveLength(0);
    expect(
      textOf(await visit('https://docs.example.org/', { reader: 'jina', jinaBaseURL: server.url, network })),
    ).toContain('markdown');
  });
});

describe('a refusal reaches the model as an error observation', () => {
  it('through the registry: isError, the reason, no crash', async () => {
    server = await pageServer();
    test = await createTestContext();
    const registry = new ToolRegistry([visitTool() as Tool]);
    const result = await registry.invoke(
      { id: 'c1', name: 'visit', arguments: JSON.stringify({ url: `${server.url}/` }) },
      test.ctx,
    );
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Tool "visit" failed: visit: refused 127\.0\.0\.1: it is a loopback address/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('network options', () => {
  it.each([
    [{ allowHosts: ['https://docs.example.org/'] }, /visitTool: option "network\.allowHosts\.0" must be a host name/],
    [{ allowHosts: [] }, /visitTool: option "network\.allowHosts" is empty, which would block every URL/],
    [
      { allowPrivat: true },
      /visitTool: `network\.allowPrivat` is not an option \(did you mean `network\.allowPrivate`\?\)/,
    ],
  ])('visitTool rejects network %j with a clear message', (network, message) => {
    expect(() => visitTool({ network } as VisitToolOptions)).toThrowError(message);
  });

  it('builtinTools({ network }) applies to visit', async () => {
    const mock = recordingMockAgent();
    const network = { allowHosts: ['docs.example.org'] };
    const tools = builtinTools({ network, visit: { dispatcher: mock.agent }, python: false, shell: false });
    const tool = tools.find((each) => each.name === 'visit') as Tool;
    test = await createTestContext();
    const { ctx } = test;
    await refused(Promise.resolve().then(() => tool.execute({ url: 'https://collector.example/' }, ctx)));
    expect(mock.requested).toEqual([]);
  });

  it('builtinTools refuses network given twice rather than dropping one', () => {
    expect(() =>
      builtinTools({
        network: { allowHosts: ['a.example'] },
        visit: { network: { allowPrivate: true } },
        python: false,
        shell: false,
      }),
    ).toThrowError(/"network" is given both at the top level and under "visit"/);
  });
});
