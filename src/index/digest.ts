/**
 * Digest and size of one file, read without ever blocking on special files (SEP-2640 "The entry": `digest` of the raw
 * bytes, by the algorithm of `digest-algorithm.ts`; `size` their byte length).
 *
 * Small files are read synchronously into one reused buffer: for the many small files of a skills tree, one system
 * call each for open, fstat, read and close beats thread-pool round trips (docs/ARCHITECTURE.md, "The walk").
 * Larger files are hashed in chunks, off the walk's critical path (`hash-pool.ts`).
 */
import { closeSync, constants, fstatSync, openSync, promises as fsp, readSync } from 'node:fs';

import { createDigest, digestBytes } from './digest-algorithm.js';
import { contentMarks, EXECUTE_BIT, hasExecuteBit } from './executables.js';
import { containsPrivateKey, SECRET_SCAN_BYTES } from './hygiene.js';
import { type FileIdentity, identityOfStat, isRacyAt } from './record.js';

/** Files up to this size are hashed synchronously by {@link hashFileSync} (bytes). */
export const SYNC_HASH_MAX_BYTES = 1024 * 1024;
/** Larger files are read in chunks of this size (bytes). */
export const CHUNK_BYTES = 1024 * 1024;

/** The result of hashing one regular file. */
export interface Hashed {
  /** The raw digest (`DIGEST_BYTES` of `digest-algorithm.ts`). */
  readonly digest: Buffer;
  /** Bytes actually read (the file may have changed since it was listed). */
  readonly size: number;
  /** The file's identity when it was opened. */
  readonly identity: FileIdentity;
  /** The file's bytes, when asked for (`SKILL.md` only: its frontmatter is parsed next). */
  readonly bytes?: Buffer;
  /** Its first {@link SECRET_SCAN_BYTES} hold a PEM private key block. */
  readonly privateKey: boolean;
  /** It was changed within `RACY_WINDOW_MS` of being read: its digest is not to be trusted again. */
  readonly racy: boolean;
  /** Its executable marks (`executables.ts`): the execute bit of its mode, and what its first bytes are. */
  readonly marks: number;
}

/** Why a path could not be hashed: not a regular file (FIFO, socket, device, directory) or an I/O error. */
export class NotHashableError extends Error {
  /**
   * @param reason `special` for anything but a regular file, `io` when opening or reading failed.
   * @param code the errno code of an I/O failure (`EACCES`, `EMFILE`, …), when there was one.
   */
  constructor(
    message: string,
    readonly reason: 'special' | 'io',
    readonly code?: string,
  ) {
    super(message);
    this.name = 'NotHashableError';
  }
}

/** Errors that say "not now" rather than "not this file": out of file descriptors, process-wide or system-wide. */
export function isTransientIoError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const NOT_REGULAR = 'not a regular file (FIFO, socket or device)';
/** Reused by {@link hashFileSync}; synchronous, so never shared by two reads at once. */
const SCRATCH = Buffer.allocUnsafe(SYNC_HASH_MAX_BYTES + 1);

/**
 * Opens `path` without blocking (`O_NONBLOCK`, so a FIFO never hangs the scan), checks it is a regular file and, when
 * it is at most `maxBytes` long (or `keepBytes`), hashes it to end of file.
 *
 * @param path absolute host path.
 * @param keepBytes also return the bytes (a copy, whatever the size).
 * @param maxBytes above this size nothing is read and `'large'` is returned (unless `keepBytes`).
 * @returns the digest, or `'large'`.
 * @throws NotHashableError (`special`) for anything but a regular file, (`io`) when opening or reading fails.
 */
export function hashFileSync(path: string, keepBytes = false, maxBytes = SYNC_HASH_MAX_BYTES): Hashed | 'large' {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw new NotHashableError(describeIoError(error), 'io', (error as NodeJS.ErrnoException).code);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new NotHashableError(NOT_REGULAR, 'special');
    const identity = identityOfStat(stat);
    if (identity.size > maxBytes && !keepBytes) return 'large';
    if (keepBytes || identity.size >= SCRATCH.length)
      return readWhole(fd, identity.size, identity, keepBytes, stat.mode);
    // One read of up to size + 1 bytes; the second read confirms end of file (a file that grew is read on).
    let filled = 0;
    for (;;) {
      const read = readSync(fd, SCRATCH, filled, SCRATCH.length - filled, filled);
      if (read === 0) break;
      filled += read;
      if (filled === SCRATCH.length) return readWhole(fd, identity.size, identity, false, stat.mode);
    }
    const bytes = SCRATCH.subarray(0, filled);
    const head = bytes.subarray(0, SECRET_SCAN_BYTES);
    return {
      digest: digestBytes(bytes),
      size: filled,
      identity,
      privateKey: containsPrivateKey(head),
      racy: isRacyAt(identity, Date.now()),
      marks: marksOf(stat.mode, head),
    };
  } catch (error) {
    if (error instanceof NotHashableError) throw error;
    throw new NotHashableError(describeIoError(error), 'io', (error as NodeJS.ErrnoException).code);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // nothing was written; a failed close of a read-only descriptor loses nothing
    }
  }
}

/** Reads `fd` from the start to end of file into fresh buffers (for kept bytes, or a file that outgrew the scratch). */
function readWhole(fd: number, statSize: number, identity: FileIdentity, keepBytes: boolean, mode: number): Hashed {
  const hash = createDigest();
  const chunks: Buffer[] = [];
  let size = 0;
  let privateKey: boolean | undefined;
  let marks: number | undefined;
  // Not kept: chunks through the shared scratch buffer (no allocation per file). Kept: a buffer one byte larger than
  // the rest of the file, so one read plus the read that sees end of file do (only a file that grew needs another).
  const reused = keepBytes ? undefined : SCRATCH.subarray(0, CHUNK_BYTES);
  for (;;) {
    const buffer = reused ?? Buffer.allocUnsafe(Math.max(statSize - size + 1, 1024));
    const read = readSync(fd, buffer, 0, buffer.length, size);
    if (read === 0) break;
    const chunk = buffer.subarray(0, read);
    privateKey ??= containsPrivateKey(chunk.subarray(0, SECRET_SCAN_BYTES));
    marks ??= marksOf(mode, chunk.subarray(0, SECRET_SCAN_BYTES));
    hash.update(chunk);
    if (keepBytes) chunks.push(chunk);
    size += read;
  }
  const bytes = keepBytes ? (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)) : undefined;
  return {
    digest: hash.digest(),
    size,
    identity,
    privateKey: privateKey ?? false,
    racy: isRacyAt(identity, Date.now()),
    marks: marks ?? marksOf(mode, EMPTY),
    ...(bytes === undefined ? {} : { bytes }),
  };
}

/**
 * Like {@link hashFileSync} for files of any size, asynchronously, in chunks of {@link CHUNK_BYTES}: memory does not
 * grow with the file.
 *
 * @param path absolute host path.
 * @throws NotHashableError like {@link hashFileSync}.
 */
export async function hashFile(path: string): Promise<Hashed> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (error) {
    throw new NotHashableError(describeIoError(error), 'io', (error as NodeJS.ErrnoException).code);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotHashableError(NOT_REGULAR, 'special');
    const hash = createDigest();
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let size = 0;
    let privateKey: boolean | undefined;
    let marks: number | undefined;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, size);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      privateKey ??= containsPrivateKey(chunk.subarray(0, SECRET_SCAN_BYTES));
      marks ??= marksOf(stat.mode, chunk.subarray(0, SECRET_SCAN_BYTES));
      hash.update(chunk);
      size += bytesRead;
    }
    const identity = identityOfStat(stat);
    return {
      digest: hash.digest(),
      size,
      identity,
      privateKey: privateKey ?? false,
      racy: isRacyAt(identity, Date.now()),
      marks: marks ?? marksOf(stat.mode, EMPTY),
    };
  } catch (error) {
    if (error instanceof NotHashableError) throw error;
    throw new NotHashableError(describeIoError(error), 'io', (error as NodeJS.ErrnoException).code);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

const EMPTY = new Uint8Array(0);

/** A file's executable marks from its mode and its first bytes (`executables.ts`). */
function marksOf(mode: number, head: Uint8Array): number {
  return (hasExecuteBit(mode) ? EXECUTE_BIT : 0) | contentMarks(head);
}

/** A short description of an fs error (`EACCES: permission denied`), without the host path Node appends. */
export function describeIoError(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    const [head] = error.message.split(',');
    return head !== undefined && head.startsWith(error.code) ? head : error.code;
  }
  return error instanceof Error ? error.message : String(error);
}
