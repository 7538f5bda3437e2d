/**
 * SHA-256 digest and size of one file, read without ever blocking on special files.
 *
 * Implements the SEP-2640 entry field `digest`: `sha256:` + 64 lowercase hex digits of the raw bytes, and `size`,
 * their byte length. Large files are hashed in chunks so memory does not grow with file size.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, promises as fsp, readSync, type Stats } from 'node:fs';
import { containsPrivateKey } from './hygiene.js';

/** Files up to this size are read in one buffer; larger ones are hashed in chunks of this size (bytes). */
export const WHOLE_READ_MAX_BYTES = 1024 * 1024;

/** The result of hashing one regular file. */
export interface FileDigest {
  /** `sha256:<hex>`. */
  digest: string;
  /** Bytes actually read (the file may have changed since it was listed). */
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
  /** The file's bytes, when asked for with `keepBytes` (used for `SKILL.md` only). */
  bytes?: Uint8Array;
  /** Its first {@link SECRET_SCAN_BYTES} hold a PEM private key block. */
  privateKey: boolean;
}

/** How much of each file's start is scanned for private key blocks (bytes). */
export const SECRET_SCAN_BYTES = 64 * 1024;

/** Why a path could not be hashed: not a regular file (FIFO, socket, device, directory) or an I/O error. */
export class NotHashableError extends Error {
  constructor(
    message: string,
    readonly reason: 'special' | 'io',
  ) {
    super(message);
    this.name = 'NotHashableError';
  }
}

/**
 * `sha256:` + lowercase hex of `bytes`.
 *
 * @param bytes any byte array.
 */
export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Files up to this size are hashed synchronously, in time slices, by {@link hashFileSync} (bytes). */
export const SYNC_HASH_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Accumulates one file's bytes into a digest. Whole files are read into one buffer one byte larger than the file
 * (one read, plus the read that sees end of file; only a file that grew meanwhile needs another buffer); larger files
 * in chunks through one reused buffer. Reading to end of file, not to `stat.size`, keeps size and digest consistent
 * when the file changes under us.
 */
class DigestAccumulator {
  readonly #hash = createHash('sha256');
  readonly #kept: Buffer[] = [];
  readonly #keepBytes: boolean;
  #buffer: Buffer;
  #filled = 0;
  #privateKey: boolean | undefined;
  size = 0;

  /**
   * @param statSize the size `fstat` reported.
   * @param keepBytes keep the bytes for {@link FileDigest.bytes}.
   * @param scratch a buffer to read into when the bytes are not kept (synchronous callers share one; never pass it
   *   from code that awaits between reads).
   */
  constructor(statSize: number, keepBytes: boolean, scratch?: Buffer) {
    this.#keepBytes = keepBytes;
    const wanted = keepBytes || statSize <= WHOLE_READ_MAX_BYTES ? statSize + 1 : WHOLE_READ_MAX_BYTES;
    this.#buffer = !keepBytes && scratch !== undefined && scratch.length >= wanted ? scratch.subarray(0, wanted) : Buffer.allocUnsafe(wanted);
  }

  /** Where the next read goes: `[buffer, offset, length, file position]`. */
  target(): [Buffer, number, number, number] {
    return [this.#buffer, this.#filled, this.#buffer.length - this.#filled, this.size];
  }

  /** Records a read of `bytesRead` bytes into {@link target}; returns false at end of file. */
  commit(bytesRead: number): boolean {
    if (bytesRead === 0) return false;
    this.size += bytesRead;
    this.#filled += bytesRead;
    if (this.#filled === this.#buffer.length) {
      this.#take(this.#buffer);
      this.#buffer = this.#keepBytes ? Buffer.allocUnsafe(WHOLE_READ_MAX_BYTES) : this.#buffer;
      this.#filled = 0;
    }
    return true;
  }

  finish(stat: Stats): FileDigest {
    if (this.#filled > 0) this.#take(this.#buffer.subarray(0, this.#filled));
    const bytes = this.#keepBytes ? (this.#kept.length === 1 ? (this.#kept[0] as Buffer) : Buffer.concat(this.#kept)) : undefined;
    return {
      digest: `sha256:${this.#hash.digest('hex')}`,
      size: this.size,
      mtimeMs: stat.mtimeMs,
      ctimeMs: stat.ctimeMs,
      ino: stat.ino,
      dev: stat.dev,
      privateKey: this.#privateKey ?? false,
      ...(bytes === undefined ? {} : { bytes }),
    };
  }

  #take(chunk: Buffer): void {
    this.#privateKey ??= containsPrivateKey(chunk.subarray(0, SECRET_SCAN_BYTES));
    this.#hash.update(chunk);
    if (this.#keepBytes) this.#kept.push(chunk);
  }
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
/** Reused by {@link hashFileSync} (synchronous, so never shared by two reads at once): no allocation per file. */
const SCRATCH = Buffer.allocUnsafe(WHOLE_READ_MAX_BYTES + 1);
const NOT_REGULAR = 'not a regular file (FIFO, socket or device)';

/**
 * Opens `path` without blocking (`O_NONBLOCK`, so a FIFO never hangs the scan), checks it is a regular file,
 * and hashes it to end of file, asynchronously.
 *
 * @param path absolute host path.
 * @param keepBytes also return the bytes (used for `SKILL.md`, whose frontmatter is parsed next).
 * @throws NotHashableError (`special`) for anything but a regular file, (`io`) when opening or reading fails.
 */
export async function hashFile(path: string, keepBytes = false): Promise<FileDigest> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (error) {
    throw new NotHashableError(describeIoError(error), 'io');
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotHashableError(NOT_REGULAR, 'special');
    const accumulator = new DigestAccumulator(stat.size, keepBytes);
    while (accumulator.commit((await handle.read(...accumulator.target())).bytesRead));
    return accumulator.finish(stat);
  } catch (error) {
    if (error instanceof NotHashableError) throw error;
    throw new NotHashableError(describeIoError(error), 'io');
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Like {@link hashFile}, synchronously: the fast path for the many small files of a skills tree (one system call
 * each for open, fstat, read and close, no thread-pool round trips). Callers slice their loops so the event loop
 * keeps turning.
 *
 * @returns the digest, or `'large'` (nothing read) when the file is over `maxBytes` and should be hashed with
 *   {@link hashFile} instead.
 * @throws NotHashableError like {@link hashFile}.
 */
export function hashFileSync(path: string, keepBytes = false, maxBytes = SYNC_HASH_MAX_BYTES): FileDigest | 'large' {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw new NotHashableError(describeIoError(error), 'io');
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new NotHashableError(NOT_REGULAR, 'special');
    if (stat.size > maxBytes && !keepBytes) return 'large';
    const accumulator = new DigestAccumulator(stat.size, keepBytes, SCRATCH);
    while (accumulator.commit(readSync(fd, ...accumulator.target())));
    return accumulator.finish(stat);
  } catch (error) {
    if (error instanceof NotHashableError) throw error;
    throw new NotHashableError(describeIoError(error), 'io');
  } finally {
    try {
      closeSync(fd);
    } catch {
      // nothing was written; a failed close of a read-only descriptor loses nothing
    }
  }
}

/** A short description of an fs error (`EACCES: permission denied`), without the host path Node appends. */
export function describeIoError(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    const [head] = error.message.split(',');
    return head !== undefined && head.startsWith(error.code) ? head : error.code;
  }
  return error instanceof Error ? error.message : String(error);
}
