/**
 * `npm run bench`: the benchmarks of horizon-harness.
 * @module
 */
import { main } from './context-growth.js';

await main();
