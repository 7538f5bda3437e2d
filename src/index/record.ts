/**
 * The per-file record key: a file's digest and the identity it had when it was hashed, packed into one latin1 string
 * of {@link KEY_LENGTH} characters (the raw digest, `DIGEST_BYTES` of `digest-algorithm.ts`; then size, mtime and
 * ctime in milliseconds, inode and device, each a little-endian float64 exactly as Node's `Stats` gives it; a flags
 * byte). One string per file instead of a hex digest plus five boxed numbers; comparing identities needs no
 * allocation. A cached digest is reused only while all five identity fields are unchanged and the file was not racy
 * when hashed (docs/ARCHITECTURE.md, "Digest cache").
 *
 * Why plain `Stats` and not `bigint` nanoseconds: a `bigint` stat builds a dozen bigints per file (at 10,000 skills,
 * 140 MB of a warm start's 584 MB of garbage), and millisecond times lose nothing the rule needs. A float64 of
 * today's milliseconds resolves a quarter of a microsecond, and a digest is trusted only when the file's times were
 * at least {@link RACY_WINDOW_MS} old when it was hashed, so any later write moves its change time by more than that.
 */
import type { Stats } from 'node:fs';

import { DIGEST_BYTES, digestBytes, digestText, writeDigestText } from './digest-algorithm.js';
import { ALL_MARKS } from './executables.js';
import type { FileNode } from './types.js';

/**
 * Where each identity field starts in a key (after the digest), and the flags byte after them. Exported for the
 * digest cache's writer (`digest-cache.ts`), which copies the fields' bytes from a key instead of decoding them.
 */
export const SIZE_AT = DIGEST_BYTES;
export const MTIME_AT = SIZE_AT + 8;
export const CTIME_AT = MTIME_AT + 8;
export const INO_AT = CTIME_AT + 8;
export const DEV_AT = INO_AT + 8;
const IDENTITY_END = DEV_AT + 8;
/** Length of a record key in characters (= bytes): the digest, 5 eight-byte identity fields, 1 flags byte (73). */
export const KEY_LENGTH = IDENTITY_END + 1;
/** Flag: the file's first 64 KiB hold a PEM private key block (so a cache hit still reports it). */
const FLAG_PRIVATE_KEY = 1;
/** Flag: the file was racy when hashed (see {@link RACY_WINDOW_MS}): its digest is not trusted again. */
const FLAG_RACY = 2;
/** The file's executable marks (`executables.ts`: execute bit, shebang, native magic) sit above the two flags. */
const MARKS_SHIFT = 2;

/**
 * How recent a file's mtime or ctime may be when it is hashed before its digest counts as racy (ms): a write in the
 * same timestamp tick as the one before could leave both unchanged, so a file changed this recently is hashed again
 * the next time instead of being trusted (git's "racy clean" rule). 2 s covers the coarsest file systems served
 * (FAT's 2-second mtimes; ext4 and others tick every few milliseconds).
 */
export const RACY_WINDOW_MS = 2000;

/**
 * What identifies one version of a file: the fields of a `stat` a rewrite changes, as Node's `Stats` gives them
 * (times in milliseconds since the epoch, with their fraction).
 */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly dev: number;
}

/** The identity of a stat. */
export function identityOfStat(stat: Stats): FileIdentity {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, dev: stat.dev };
}

/**
 * Whether a file with `identity`, hashed at `nowMs`, was changed within {@link RACY_WINDOW_MS} of it.
 *
 * @param nowMs wall-clock time after the file was read (`Date.now()`).
 */
export function isRacyAt(identity: FileIdentity, nowMs: number): boolean {
  const since = nowMs - RACY_WINDOW_MS;
  return identity.mtimeMs >= since || identity.ctimeMs >= since;
}

const scratch = Buffer.alloc(KEY_LENGTH);
/** The same bytes, written through a `DataView` (its setters store without allocating). */
const view = new DataView(scratch.buffer, scratch.byteOffset, KEY_LENGTH);

function writeIdentity(identity: FileIdentity, size: number): void {
  view.setFloat64(SIZE_AT, size, true);
  view.setFloat64(MTIME_AT, identity.mtimeMs, true);
  view.setFloat64(CTIME_AT, identity.ctimeMs, true);
  view.setFloat64(INO_AT, identity.ino, true);
  view.setFloat64(DEV_AT, identity.dev, true);
}

/**
 * Packs a digest and an identity into a record key.
 *
 * @param digest the raw digest (`digest-algorithm.ts`).
 * @param size bytes hashed (may differ from `identity.size` when the file changed while it was read; then the next
 *   comparison fails and the file is hashed again).
 * @param identity the stat taken when the file was opened (its `size` is not read: see `size`).
 * @param privateKey whether the file holds a private key block (see `hygiene.ts`).
 * @param racy whether it was changed within {@link RACY_WINDOW_MS} of being hashed ({@link isRacyAt}).
 * @param marks its executable marks (`executables.ts`), 0 for none.
 * @returns the {@link KEY_LENGTH}-character key.
 */
export function makeKey(
  digest: Uint8Array,
  size: number,
  identity: FileIdentity | Stats,
  privateKey: boolean,
  racy = false,
  marks = 0,
): string {
  scratch.set(digest.subarray(0, DIGEST_BYTES), 0);
  writeIdentity(identity, size);
  scratch[IDENTITY_END] =
    (privateKey ? FLAG_PRIVATE_KEY : 0) | (racy ? FLAG_RACY : 0) | ((marks & ALL_MARKS) << MARKS_SHIFT);
  return scratch.toString('latin1', 0, KEY_LENGTH);
}

/**
 * Whether `node` was hashed from the file version `identity` describes (same size, mtime, ctime, inode and device).
 *
 * @param node a published file record.
 * @param identity a fresh stat of the same path.
 */
export function sameIdentity(node: FileNode, identity: FileIdentity | Stats): boolean {
  writeIdentity(identity, identity.size);
  const key = node.key;
  for (let index = DIGEST_BYTES; index < IDENTITY_END; index++) {
    if (key.charCodeAt(index) !== scratch[index]) return false;
  }
  return true;
}

/**
 * The entry form of a record's digest.
 *
 * @returns `sha256:` + 64 lowercase hex digits (SEP-2640 "The entry": `digest`; `digest-algorithm.ts`).
 */
export function digestOf(node: Pick<FileNode, 'key'>): string {
  scratch.write(node.key, 0, DIGEST_BYTES, 'latin1');
  return digestText(scratch);
}

/**
 * Writes {@link digestOf} into `out` at `at` without making a string (`entry.ts` writes an entry whole).
 *
 * @returns where it ends (`DIGEST_TEXT_LENGTH` bytes on).
 */
export function writeDigestOf(node: Pick<FileNode, 'key'>, out: Buffer, at: number): number {
  return writeDigestText(node.key, out, at);
}

/**
 * Whether `bytes` hash to the digest of `node` (a verified read: `server/read.ts`).
 *
 * @param bytes everything read of the file.
 */
export function digestMatches(node: Pick<FileNode, 'key'>, bytes: Uint8Array): boolean {
  return digestBytes(bytes).toString('latin1') === node.key.slice(0, DIGEST_BYTES);
}

/** Whether the file held a private key block when it was hashed. */
export function holdsPrivateKey(node: FileNode): boolean {
  return (node.key.charCodeAt(IDENTITY_END) & FLAG_PRIVATE_KEY) !== 0;
}

/** The file's executable marks when it was hashed (`executables.ts`: `EXECUTE_BIT`, `SHEBANG`, `ELF`, …). */
export function executableMarks(node: FileNode): number {
  return (node.key.charCodeAt(IDENTITY_END) >> MARKS_SHIFT) & ALL_MARKS;
}

/** Whether the file was racy when hashed: its digest must not be trusted for an unchanged identity. */
export function wasRacy(node: FileNode): boolean {
  return (node.key.charCodeAt(IDENTITY_END) & FLAG_RACY) !== 0;
}

/** Whether two records hold the same digest (their files may still differ in identity). */
export function sameDigest(a: FileNode, b: FileNode): boolean {
  return a.key.slice(0, DIGEST_BYTES) === b.key.slice(0, DIGEST_BYTES);
}

/** The identity stored in a record (for the poller, which compares it with a fresh stat). */
export function identityOf(node: FileNode): FileIdentity {
  scratch.write(node.key, 0, KEY_LENGTH, 'latin1');
  return {
    size: scratch.readDoubleLE(SIZE_AT),
    mtimeMs: scratch.readDoubleLE(MTIME_AT),
    ctimeMs: scratch.readDoubleLE(CTIME_AT),
    ino: scratch.readDoubleLE(INO_AT),
    dev: scratch.readDoubleLE(DEV_AT),
  };
}
