/**
 * Test helpers for code built on horizon-harness: a scripted backend and reply builders.
 * @packageDocumentation
 */
// --- scripted backend (src/testing) ---
