/**
 * SHA-256 digest and size of one file, read without ever blocking on special files.
 *
 * Implements the SEP-2640 entry field `digest`: `sha256:` + 64 lowercase hex digits of the raw bytes, and `size`,
 * their byte length. Large files are hashed in chunks so memory does not grow with file size.
 */
import { createHash } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
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

/**
 * Opens `path` without blocking (`O_NONBLOCK`, so a FIFO never hangs the scan), checks it is a regular file,
 * and hashes it to end of file.
 *
 * @param path absolute host path.
 * @param keepBytes also return the bytes (used for `SKILL.md`, whose frontmatter is parsed next).
 * @throws NotHashableError (`special`) for anything but a regular file, (`io`) when opening or reading fails.
 */
export async function hashFile(path: string, keepBytes = false): Promise<FileDigest> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new NotHashableError(describeIoError(error), 'io');
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotHashableError('not a regular file (FIFO, socket or device)', 'special');
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    // Whole files are read into one buffer one byte larger than the file (one read, plus the read that sees end of
    // file; only a file that grew meanwhile needs another buffer); larger files in
    // chunks through one reused buffer. Reading to end of file, not to `stat.size`, keeps size and digest
    // consistent when the file changes under us.
    let buffer = Buffer.allocUnsafe(keepBytes || stat.size <= WHOLE_READ_MAX_BYTES ? stat.size + 1 : WHOLE_READ_MAX_BYTES);
    let size = 0;
    let filled = 0;
    let privateKey: boolean | undefined;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      filled += bytesRead;
      if (filled < buffer.length) continue;
      privateKey ??= containsPrivateKey(buffer.subarray(0, SECRET_SCAN_BYTES));
      hash.update(buffer);
      if (keepBytes) kept.push(buffer);
      buffer = keepBytes ? Buffer.allocUnsafe(WHOLE_READ_MAX_BYTES) : buffer;
      filled = 0;
    }
    if (filled > 0) {
      privateKey ??= containsPrivateKey(buffer.subarray(0, Math.min(filled, SECRET_SCAN_BYTES)));
      hash.update(buffer.subarray(0, filled));
      if (keepBytes) kept.push(buffer.subarray(0, filled));
    }
    const bytes = keepBytes ? (kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept)) : undefined;
    return {
      digest: `sha256:${hash.digest('hex')}`,
      size,
      mtimeMs: stat.mtimeMs,
      ctimeMs: stat.ctimeMs,
      ino: stat.ino,
      dev: stat.dev,
      privateKey: privateKey ?? false,
      ...(bytes === undefined ? {} : { bytes }),
    };
  } catch (error) {
    if (error instanceof NotHashableError) throw error;
    throw new NotHashableError(describeIoError(error), 'io');
  } finally {
    await handle.close().catch(() => undefined);
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
