/**
 * Reading one served file for `resources/read`, checked against its entry before anything is sent
 * (SEP-2640 "resources/read"; docs/ARCHITECTURE.md, "Invariants": reads never contradict entries).
 */
import { closeSync, constants, fstatSync, openSync, promises as fsp, readSync } from 'node:fs';

import { SkillsServeError } from '../errors.js';
import { decodeLossless } from '../index/mime.js';
import { digestMatches, identityOf } from '../index/record.js';
import { findDirectory, findFile, type ServedFile } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { Snapshot } from '../index/types.js';

/** What a read found on disk. */
export type ReadOutcome =
  | { readonly kind: 'ok'; readonly bytes: Uint8Array }
  /** The file no longer matches the published size and digest (or is gone, or is no longer a regular file). */
  | { readonly kind: 'stale' }
  /** The file could not be opened or read; `reason` is safe to log (no path). */
  | { readonly kind: 'error'; readonly reason: string };

/**
 * Files up to this size are read synchronously (bytes): four system calls cost less than four thread-pool round
 * trips.
 */
export const SYNC_READ_MAX_BYTES = 256 * 1024;

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * Reads `file.path` without blocking on special files and without following a symlink swapped in since indexing,
 * checks that it is still the same file (device, inode, size), then checks the digest of what was read. Files up to
 * {@link SYNC_READ_MAX_BYTES} are read synchronously (a few tens of microseconds); larger ones on the thread pool.
 *
 * @param file the published record.
 * @returns `ok` with exactly the bytes the digest covers, `stale` when the file changed, or `error`.
 */
async function readVerified(file: ServedFile): Promise<ReadOutcome> {
  return file.node.size <= SYNC_READ_MAX_BYTES ? readVerifiedSync(file) : readVerifiedAsync(file);
}

/** The outcome of a verified read whose open failed: `stale` when the path is gone or now a link, else `error`. */
function openFailure(error: unknown): ReadOutcome {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
    ? { kind: 'stale' }
    : { kind: 'error', reason: code ?? String(error) };
}

/** Whether the opened file is the one that was indexed: a regular file with the published size, inode and device. */
function sameFile(file: ServedFile, stat: { isFile(): boolean; size: number; ino: number; dev: number }): boolean {
  const { ino, dev } = identityOf(file.node);
  return stat.isFile() && stat.size === file.node.size && stat.ino === ino && stat.dev === dev;
}

/** The outcome for `filled` bytes read into `buffer` (one byte larger than the published size). */
function verified(file: ServedFile, buffer: Buffer, filled: number): ReadOutcome {
  const bytes = buffer.subarray(0, filled);
  if (filled !== file.node.size || !digestMatches(file.node, bytes)) return { kind: 'stale' };
  return { kind: 'ok', bytes };
}

function readVerifiedSync(file: ServedFile): ReadOutcome {
  let fd: number;
  try {
    // `file.path` is a real path: a symlink in its place now was swapped in after indexing, and is not followed.
    fd = openSync(file.path, READ_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    // Not the file that was indexed (a directory above it was swapped for a link, or the file was replaced):
    // nothing is read from it; the skill is re-indexed instead.
    if (!sameFile(file, fstatSync(fd))) return { kind: 'stale' };
    // One byte more than expected: a file that grew shows up as a short-read mismatch, not a silent truncation.
    const buffer = Buffer.allocUnsafe(file.node.size + 1);
    let filled = 0;
    for (;;) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (read === 0) break;
      filled += read;
      if (filled === buffer.length) return { kind: 'stale' };
    }
    return verified(file, buffer, filled);
  } catch (error) {
    return { kind: 'error', reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    try {
      closeSync(fd);
    } catch {
      // a read-only descriptor: nothing is lost
    }
  }
}

async function readVerifiedAsync(file: ServedFile): Promise<ReadOutcome> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file.path, READ_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    if (!sameFile(file, await handle.stat())) return { kind: 'stale' };
    const buffer = Buffer.allocUnsafe(file.node.size + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) return { kind: 'stale' };
    }
    return verified(file, buffer, filled);
  } catch (error) {
    return { kind: 'error', reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** What a verified read of a URI found. */
export type ReadResult =
  | {
      readonly kind: 'file';
      readonly bytes: Uint8Array;
      readonly text: string | undefined;
      readonly mimeType: string;
      /** The file's record and the snapshot the bytes were verified against (what was served, for the access log). */
      readonly file: ServedFile;
      readonly snapshot: Snapshot;
    }
  | { readonly kind: 'directory' }
  | { readonly kind: 'missing' };

/** Reads served files, verified against the current snapshot. */
export interface FileReader {
  /**
   * @param uri any spelling of a served file's URI.
   * @returns the bytes (and their text when they are lossless UTF-8), or what the URI is instead.
   * @throws SkillsServeError `READ_FAILED` when the file cannot be read, `FILE_CHANGING` when it keeps changing while
   *   it is re-indexed.
   */
  read(uri: string): Promise<ReadResult>;
}

/** How many times a read re-indexes and retries a file that keeps changing before giving up. */
const MAX_STALE_RETRIES = 3;

/**
 * A reader over `store`: a file whose bytes no longer match its entry is re-indexed first (the new snapshot is
 * current, and hosts notified, before the read answers), so what is served always matches what is published.
 *
 * @param reindex re-indexes the skill holding a stale file; resolves once the new snapshot is current.
 * @param onReadFailed told of a read that failed: the errno code (`EACCES`, `EMFILE`; no host path in it) and the
 *   file's host path (for the log only).
 */
export function createFileReader(
  store: SnapshotStore,
  reindex: (file: ServedFile) => Promise<void>,
  onReadFailed: (code: string, path: string) => void,
): FileReader {
  return {
    async read(uri) {
      let snapshot = await store.ready();
      for (let attempt = 0; ; attempt++) {
        const file = findFile(snapshot, uri);
        if (file === undefined)
          return findDirectory(snapshot, uri) === undefined ? { kind: 'missing' } : { kind: 'directory' };
        const outcome = await readVerified(file);
        if (outcome.kind === 'ok')
          return {
            kind: 'file',
            bytes: outcome.bytes,
            text: decodeLossless(outcome.bytes),
            mimeType: file.mimeType,
            file,
            snapshot,
          };
        if (outcome.kind === 'error') {
          onReadFailed(outcome.reason, file.path);
          throw new SkillsServeError('READ_FAILED', `${file.uri} could not be read`);
        }
        if (attempt >= MAX_STALE_RETRIES)
          throw new SkillsServeError('FILE_CHANGING', `${file.uri} keeps changing on disk; try again`);
        await reindex(file);
        snapshot = store.current;
      }
    },
  };
}
