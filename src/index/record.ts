/**
 * The per-file record key: a file's digest and the identity it had when it was hashed, packed into one 73-character
 * latin1 string (32 digest bytes; size, mtimeMs, ctimeMs, ino and dev as little-endian float64; a flags byte). One
 * string per file instead of a hex digest plus five boxed numbers; comparing identities needs no allocation. A cached
 * digest is reused only while all five identity fields are unchanged (docs/ARCHITECTURE.md, "Digest cache").
 */
import type { FileNode } from './types.js';

/** Length of a record key in characters (= bytes): 32 digest bytes, 5 float64 identity fields, 1 flags byte. */
export const KEY_LENGTH = 73;
const IDENTITY_END = 72;
/** Flag: the file's first 64 KiB hold a PEM private key block (so a cache hit still reports it). */
const FLAG_PRIVATE_KEY = 1;
const DIGEST_BYTES = 32;

/** What identifies one version of a file: the fields of `fs.Stats` a rewrite changes. */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly dev: number;
}

const scratch = Buffer.alloc(KEY_LENGTH);

function writeIdentity(identity: FileIdentity, size: number): void {
  scratch.writeDoubleLE(size, 32);
  scratch.writeDoubleLE(identity.mtimeMs, 40);
  scratch.writeDoubleLE(identity.ctimeMs, 48);
  scratch.writeDoubleLE(identity.ino, 56);
  scratch.writeDoubleLE(identity.dev, 64);
}

/**
 * Packs a digest and an identity into a record key.
 *
 * @param digest the 32 raw SHA-256 bytes.
 * @param size bytes hashed (may differ from `identity.size` when the file changed while it was read; then the next
 *   comparison fails and the file is hashed again).
 * @param identity the stat taken when the file was opened.
 * @param privateKey whether the file holds a private key block (see `hygiene.ts`).
 * @returns the 73-character key.
 */
export function makeKey(digest: Uint8Array, size: number, identity: FileIdentity, privateKey: boolean): string {
  scratch.set(digest.subarray(0, DIGEST_BYTES), 0);
  writeIdentity(identity, size);
  scratch[IDENTITY_END] = privateKey ? FLAG_PRIVATE_KEY : 0;
  return scratch.toString('latin1', 0, KEY_LENGTH);
}

/**
 * Whether `node` was hashed from the file version `identity` describes (same size, mtime, ctime, inode and device).
 *
 * @param node a published file record.
 * @param identity a fresh stat of the same path.
 */
export function sameIdentity(node: FileNode, identity: FileIdentity): boolean {
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
 * @returns `sha256:` + 64 lowercase hex digits (SEP-2640 "The entry": `digest`).
 */
export function digestOf(node: FileNode): string {
  scratch.write(node.key, 0, DIGEST_BYTES, 'latin1');
  return `sha256:${scratch.toString('hex', 0, DIGEST_BYTES)}`;
}

/** Whether the file held a private key block when it was hashed. */
export function holdsPrivateKey(node: FileNode): boolean {
  return (node.key.charCodeAt(IDENTITY_END) & FLAG_PRIVATE_KEY) !== 0;
}

/** Whether two records hold the same digest (their files may still differ in identity). */
export function sameDigest(a: FileNode, b: FileNode): boolean {
  return a.key.slice(0, DIGEST_BYTES) === b.key.slice(0, DIGEST_BYTES);
}

/** The identity stored in a record (for the poller, which compares it with a fresh stat). */
export function identityOf(node: FileNode): FileIdentity {
  scratch.write(node.key, 0, KEY_LENGTH, 'latin1');
  return {
    size: scratch.readDoubleLE(32),
    mtimeMs: scratch.readDoubleLE(40),
    ctimeMs: scratch.readDoubleLE(48),
    ino: scratch.readDoubleLE(56),
    dev: scratch.readDoubleLE(64),
  };
}
