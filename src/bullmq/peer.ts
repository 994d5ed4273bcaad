/**
 * The optional peers of `horizon-harness/bullmq`, loaded on first use so that nothing else imports them.
 * @module
 */
import { loadPeer } from '../util/load-peer.js';

/** The `bullmq` module. @internal */
export type BullMQModule = typeof import('bullmq');

/** Loads `bullmq`, or throws `missing-peer-dependency` saying how to install it. @internal */
export function loadBullMQ(): Promise<BullMQModule> {
  return loadPeer('bullmq', 'bullmq', () => import('bullmq'));
}

/**
 * Loads `ioredis` (the driver BullMQ connects with unless given another client), or throws
 * `missing-peer-dependency` saying how to install it. @internal
 */
export async function loadIORedis(): Promise<{ Redis: typeof import('ioredis').Redis }> {
  const { Redis } = await loadPeer('ioredis', 'bullmq', () => import('ioredis'));
  return { Redis };
}
