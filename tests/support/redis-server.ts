/**
 * A throwaway `redis-server` for tests: a free loopback port, no persistence (`--save '' --appendonly no`), stopped
 * after. Where Debian's `redis-server` package is missing the tests that need it skip, except under `CI=true`, where
 * `.ci/run` installs it and a missing server is a failure.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

/** Whether redis-server can be started here, and why not. */
export interface RedisProbe {
  available: boolean;
  reason: string;
}

/** A running redis-server. */
export interface RedisServer {
  host: string;
  port: number;
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

const BINARY = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** Looks for redis-server (it answers `--version`). */
export function probeRedisServer(): RedisProbe {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return {
      available: false,
      reason:
        'redis-server is not installed; install the Debian/Ubuntu package redis-server ' +
        '(apt-get install redis-server) to run the BullMQ tests',
    };
  }
  return { available: true, reason: probe.stdout.trim() };
}

/**
 * A redis-server and one client for the tests of the enclosing `describe`: started before its first test, stopped
 * after its last. Read `server` and `redis` inside the tests (they are set by then).
 */
export function useRedisServer(): { readonly server: RedisServer; readonly redis: Redis } {
  const held: { server?: RedisServer; redis?: Redis } = {};
  beforeAll(async () => {
    held.server = await startRedisServer();
    held.redis = new Redis(held.server.port, held.server.host);
  });
  afterAll(async () => {
    held.redis?.disconnect();
    await held.server?.stop();
  });
  return {
    get server() {
      if (!held.server) throw new Error('redis-server is not started yet: read it inside a test');
      return held.server;
    },
    get redis() {
      if (!held.redis) throw new Error('redis-server is not started yet: read it inside a test');
      return held.redis;
    },
  };
}

/** Starts redis-server on a free 127.0.0.1 port and resolves once it accepts connections. */
export async function startRedisServer(): Promise<RedisServer> {
  let lastError: unknown;
  // The free port can be taken between the probe and redis-server's bind; another port fixes that.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    try {
      return await launch(port);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

function launch(port: number): Promise<RedisServer> {
  const child = spawn(
    BINARY,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.off('exit', onExit);
        resolve({ host: '127.0.0.1', port, url: `redis://127.0.0.1:${port}`, stop: () => stop(child) });
      }
    };
    const onExit = (code: number | null) =>
      reject(new Error(`redis-server on port ${port} exited (${code}) before it was ready:\n${output}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', onExit);
    child.once('error', reject);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
