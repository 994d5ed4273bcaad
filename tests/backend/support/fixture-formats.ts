import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { readFixture } from '../../support/fixtures.js';
import type { ScriptedResponse } from './loopback-server.js';

/** One VCR interaction of a pydantic-ai cassette. */
export interface CassetteInteraction {
  request: { parsed_body?: Record<string, unknown>; uri: string };
  response: {
    status: { code: number };
    body?: { string: string };
    parsed_body?: unknown;
    headers?: Record<string, string[]>;
  };
}

/** The payload lines of a `*.chunks.txt` fixture. */
export function readChunks(...parts: string[]): string[] {
  return readFixture(...parts)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** The parsed payloads of a `*.chunks.txt` fixture. */
export function readChunkObjects(...parts: string[]): Array<Record<string, unknown>> {
  return readChunks(...parts).map((line) => JSON.parse(line) as Record<string, unknown>);
}

export function readCassette(...parts: string[]): CassetteInteraction[] {
  return (parse(readFixture(...parts)) as { interactions: CassetteInteraction[] }).interactions;
}

/** A cassette response as the loopback server should send it: raw SSE bytes or re-serialised JSON. */
export function cassetteResponse(interaction: CassetteInteraction): ScriptedResponse {
  const { response } = interaction;
  if (response.body?.string !== undefined) {
    return {
      status: response.status.code,
      headers: { 'content-type': 'text/event-stream' },
      body: response.body.string,
    };
  }
  return {
    status: response.status.code,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(response.parsed_body),
  };
}

/** The raw SSE bodies of a Jest snapshot, by snapshot name. */
export function readSnapshots(...parts: string[]): Map<string, string> {
  const text = readFixture(...parts);
  const bodies = new Map<string, string>();
  for (const match of text.matchAll(/^exports\[`(.+?)`\] = `\n"([\s\S]*?)"\n`;$/gm)) {
    // Jest doubles backslashes and escapes backticks inside the template literal.
    bodies.set(match[1] ?? '', (match[2] ?? '').replace(/\\([\\`])/g, '$1'));
  }
  return bodies;
}

/** A fixture written for this test suite (tests/backend/fixtures). */
export function readLocalFixture(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url)), 'utf8');
}

/** Concatenates a string field of every OpenAI-style chunk delta. */
export function concatDeltas(chunks: Array<Record<string, unknown>>, field: string): string {
  return chunks
    .flatMap((chunk) => (chunk.choices as Array<{ delta?: Record<string, unknown> }> | undefined) ?? [])
    .map((choice) => choice.delta?.[field])
    .filter((value): value is string => typeof value === 'string')
    .join('');
}
