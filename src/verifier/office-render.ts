/**
 * Rendering delivered office documents (PPTX, DOCX, XLSX and their OpenDocument cousins) to PDF with headless
 * LibreOffice, so that the verifier can see their pages as a person would.
 * @module
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HarnessError } from '../errors.js';
import {
  probeBwrap,
  sandboxStatus,
  spawnInWorkspace,
  type SandboxStatus,
  type WorkspaceProcess,
} from '../tools/builtin/sandbox.js';

/**
 * The office formats rendered, by file extension: the LibreOffice import filter that must read the file (a file that
 * is not what its extension says fails rather than being shown as text), and what one page of it is called.
 */
export const OFFICE_FORMATS = {
  pptx: { filter: 'Impress MS PowerPoint 2007 XML', page: 'slide' },
  pptm: { filter: 'Impress MS PowerPoint 2007 XML VBA', page: 'slide' },
  odp: { filter: 'impress8', page: 'slide' },
  docx: { filter: 'MS Word 2007 XML', page: 'page' },
  docm: { filter: 'MS Word 2007 XML VBA', page: 'page' },
  odt: { filter: 'writer8', page: 'page' },
  xlsx: { filter: 'Calc MS Excel 2007 XML', page: 'page' },
  xlsm: { filter: 'Calc MS Excel 2007 VBA XML', page: 'page' },
  ods: { filter: 'calc8', page: 'page' },
} as const satisfies Record<string, { filter: string; page: 'slide' | 'page' }>;

/** An extension of {@link OFFICE_FORMATS}: `pptx`, `docx`, `xlsx`, `odp`, …. */
export type OfficeFormat = keyof typeof OFFICE_FORMATS;

/** The office format of a file name, by its extension; `undefined` for any other file. */
export function officeFormatOf(file: string): OfficeFormat | undefined {
  const extension = path.extname(file).slice(1).toLowerCase();
  return Object.hasOwn(OFFICE_FORMATS, extension) ? (extension as OfficeFormat) : undefined;
}

/** A document to render: its bytes (a copy; the renderer never sees the workspace) and its format. */
export interface OfficeDocument {
  data: Uint8Array;
  format: OfficeFormat;
}

/** The PDF of a rendered document, or why no renderer is available here. */
export type OfficeRendering = { pdf: Uint8Array } | { unavailable: string };

/**
 * Converts an office document to PDF. Resolves `{ unavailable }` when no renderer is available here (the verify
 * request then says so); rejects when this document cannot be rendered, and with the signal's reason on abort.
 */
export type OfficeRenderer = (document: OfficeDocument, signal?: AbortSignal) => Promise<OfficeRendering>;

/** Options of {@link sofficeRenderer}. */
export interface SofficeRendererOptions {
  /** The LibreOffice program: a name looked up on the `PATH`, or a path. @defaultValue 'soffice' */
  command?: string;
  /** A render that takes longer is stopped (its whole process tree killed). @defaultValue 120000 */
  timeoutMs?: number;
  /**
   * `bwrap`: LibreOffice runs in a bubblewrap sandbox without network, and renders nothing where bwrap cannot run;
   * `none`: it runs on the host, with the host's network (an explicit opt-out).
   * @defaultValue 'bwrap'
   */
  sandbox?: 'bwrap' | 'none';
  /** @defaultValue 'bwrap' */
  bwrapPath?: string;
}

/** The default time limit of one render: LibreOffice starts cold with a fresh profile each time. */
const DEFAULT_TIMEOUT_MS = 120_000;
/** Largest PDF read back. */
const MAX_PDF_BYTES = 64 * 1024 * 1024;
/** Characters of LibreOffice's stderr kept for an error message. */
const MAX_STDERR_CHARS = 4_000;
/** What LibreOffice reads besides its program folder: its configuration links, and the font cache (else rebuilt). */
const LIBREOFFICE_READ_PATHS = ['/etc/libreoffice', '/var/cache/fontconfig', '/usr/local/share/fonts'];
const INSTALL_HINT =
  'LibreOffice (soffice) is not installed; install it to let the verifier see the pages ' +
  '(Debian/Ubuntu: apt-get install libreoffice-impress libreoffice-writer libreoffice-calc)';

/**
 * An {@link OfficeRenderer} that runs headless LibreOffice: `soffice --headless --convert-to pdf` on a copy of the
 * document in a temporary directory, with a private profile there (so that renders at the same time never share one,
 * and nothing is written to `$HOME`), the import filter of the document's format, an allow-listed environment, and by
 * default inside bubblewrap without network. A render over `timeoutMs`, or aborted, is stopped with every process it
 * started. The temporary directory is removed afterwards.
 *
 * @example
 * ```ts
 * const verifier = new Verifier({ backend, renderOffice: sofficeRenderer({ timeoutMs: 60_000 }) });
 * ```
 */
export function sofficeRenderer(options: SofficeRendererOptions = {}): OfficeRenderer {
  const command = options.command ?? 'soffice';
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new HarnessError(
      'invalid-options',
      `sofficeRenderer: timeoutMs must be a positive integer, not ${timeoutMs}.`,
    );
  }
  const mode = options.sandbox ?? 'bwrap';
  if (mode !== 'bwrap' && mode !== 'none') {
    throw new HarnessError(
      'invalid-options',
      `sofficeRenderer: sandbox must be 'bwrap' or 'none', not ${String(mode)}.`,
    );
  }
  const bwrapPath = options.bwrapPath ?? 'bwrap';
  return async (document, signal) => {
    signal?.throwIfAborted();
    const program = findProgram(command);
    if (!program) {
      return { unavailable: command === 'soffice' ? INSTALL_HINT : `LibreOffice ("${command}") was not found` };
    }
    if (mode === 'bwrap') {
      const probe = probeBwrap(bwrapPath);
      if (!probe.available) {
        return {
          unavailable:
            `LibreOffice is run only in a sandbox without network, and ${probe.reason} ` +
            "(sofficeRenderer({ sandbox: 'none' }) renders on the host instead)",
        };
      }
    }
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'horizon-harness-office-')));
    try {
      return {
        pdf: await convert(document, { program, dir, timeoutMs, sandbox: sandboxStatus(mode, bwrapPath) }, signal),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

interface Conversion {
  program: string;
  /** The private temporary directory: the document's copy, the profile, the output. */
  dir: string;
  timeoutMs: number;
  sandbox: SandboxStatus;
}

/** Converts the document's copy in `dir` to PDF and reads the PDF back. */
async function convert(document: OfficeDocument, conversion: Conversion, signal?: AbortSignal): Promise<Uint8Array> {
  const { dir } = conversion;
  const input = path.join(dir, `document.${document.format}`);
  const output = path.join(dir, 'out');
  await Promise.all([writeFile(input, document.data), mkdir(output), mkdir(path.join(dir, 'tmp'))]);
  const args = [
    '--headless',
    '--invisible',
    '--norestore',
    '--nologo',
    '--nodefault',
    '--nolockcheck',
    `-env:UserInstallation=${pathToFileURL(path.join(dir, 'profile')).href}`,
    `--infilter=${OFFICE_FORMATS[document.format].filter}`,
    '--convert-to',
    'pdf',
    '--outdir',
    output,
    input,
  ];
  const started = spawnInWorkspace(conversion.program, args, {
    workspaceRoot: dir,
    sandbox: conversion.sandbox,
    allowNetwork: false,
    readOnlyPaths: [installRoot(conversion.program), ...LIBREOFFICE_READ_PATHS],
    env: { TMPDIR: path.join(dir, 'tmp') },
  });
  const ended = await waitFor(started, conversion.timeoutMs, signal);
  if (ended.stop === 'aborted') throw signal?.reason;
  if (ended.stop === 'timeout') {
    throw new Error(`LibreOffice took longer than its time limit (${conversion.timeoutMs} ms) and was stopped`);
  }
  const pdf = path.join(output, 'document.pdf');
  const size = await stat(pdf).then(
    (info) => info.size,
    () => undefined,
  );
  if (size === undefined) {
    // LibreOffice exits 0 also when it cannot load the file; it says so on stderr.
    const said = ended.stderr.split('\n').find((line) => line.startsWith('Error:')) ?? ended.stderr.trim();
    const why = said ? `: ${said.slice(0, 300)}` : ended.code ? ` (exit code ${ended.code})` : '';
    throw new Error(`LibreOffice could not render it as ${document.format.toUpperCase()}${why}`);
  }
  if (size > MAX_PDF_BYTES) throw new Error(`its PDF is larger than ${MAX_PDF_BYTES / 1024 / 1024} MB`);
  return readFile(pdf);
}

type Ended = { stop: 'exit'; code: number | null; stderr: string } | { stop: 'timeout' } | { stop: 'aborted' };

/** Waits for the process to end, killing it (with everything it started) on timeout or abort. */
async function waitFor(started: WorkspaceProcess, timeoutMs: number, signal?: AbortSignal): Promise<Ended> {
  const { child } = started;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += chunk;
  });
  child.stdout?.resume();
  let stop: 'timeout' | 'aborted' | undefined;
  const end = (why: 'timeout' | 'aborted') => {
    stop ??= why;
    started.kill();
  };
  const timer = setTimeout(() => end('timeout'), timeoutMs);
  const onAbort = () => end('aborted');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    return stop ? { stop } : { stop: 'exit', code, stderr };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    await started.dispose();
  }
}

/** The program's absolute path: `command` itself when it names a path, else the first match on the `PATH`. */
function findProgram(command: string): string | undefined {
  const candidates = command.includes('/')
    ? [path.resolve(command)]
    : (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The folder bound read-only into the sandbox so that the program can run there: LibreOffice's installation (the
 * parent of its `program/` folder, e.g. `/opt/libreoffice7.6`), else the program's own folder.
 */
function installRoot(program: string): string {
  let real = program;
  try {
    real = realpathSync(program);
  } catch {
    // Gone since it was found: the spawn says so.
  }
  const folder = path.dirname(real);
  return path.basename(folder) === 'program' ? path.dirname(folder) : folder;
}
