/**
 * `npm run bench`: the benchmarks of horizon-harness — context growth, the Vercel AI SDK peer comparison and 100 and
 * 1 000 concurrent runs (against the built `dist/`), durable runs under SIGKILL, independent subtasks in parallel, the
 * event-loop delay of counting hostile text, the first run's block without and with `warmUpTokenizer()`, and runs
 * per minute on BullMQ workers (needs `redis-server` on the PATH; skipped with a note otherwise).
 * @module
 */
import { execFileSync } from 'node:child_process';
import { main } from './context-growth.js';
import { durabilityBench } from './durability.js';
import { parallelBench } from './parallel.js';
import { peerBench } from './peer.js';
import { scaleOut } from './scale-out.js';
import { tokenizerLoopBench } from './tokenizer-loop.js';
import { tokenizerWarmUpBench } from './tokenizer-warm-up.js';

await main();
await peerBench();
await durabilityBench();
await parallelBench();
await tokenizerLoopBench();
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
