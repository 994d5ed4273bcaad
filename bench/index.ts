/**
 * `npm run bench`: the benchmarks of horizon-harness — context growth, the Vercel AI SDK peer comparison and 100 and
 * 1 000 concurrent runs (against the built `dist/`), durable runs under SIGKILL, independent subtasks in parallel, the
 * event-loop delay of counting hostile text, the tokenizer table's load and the first run's block (on the event
 * loop's thread, in the worker, warmed), billed input dollars with simulated provider prompt caches (and aging's
 * batch-size trade-off), the run viewer on a 5 000-event log (in chromium where installed), and runs per minute on
 * BullMQ workers (needs `redis-server` on the PATH; skipped with a note otherwise).
 * @module
 */
import { execFileSync } from 'node:child_process';
import { cachingBench } from './caching.js';
import { main } from './context-growth.js';
import { durabilityBench } from './durability.js';
import { parallelBench } from './parallel.js';
import { peerBench } from './peer.js';
import { scaleOut } from './scale-out.js';
import { tokenizerLoopBench } from './tokenizer-loop.js';
import { viewerBench } from './viewer.js';
import { tokenizerWarmUpBench } from './tokenizer-warm-up.js';

await main();
await peerBench();
await durabilityBench();
await parallelBench();
await tokenizerLoopBench();
await cachingBench();
await viewerBench();
await tokenizerWarmUpBench();
if (hasRedisServer()) await scaleOut();
else console.log('\nScale-out on BullMQ: skipped, redis-server is not installed (Debian package redis-server).');

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
