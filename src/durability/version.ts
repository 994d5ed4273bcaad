/**
 * The versions a snapshot header records: its own format and the library that wrote it.
 * @module
 */

/** The `horizon-harness` version written into every snapshot; a test keeps it equal to package.json's. */
export const LIBRARY_VERSION = '0.1.0';

/** The version of the {@link RunSnapshot} shape this library reads and writes (2: sealed with `mac`). */
export const SNAPSHOT_FORMAT = 2 as const;
