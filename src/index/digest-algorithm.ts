/**
 * The digest algorithm, in one place (docs/ARCHITECTURE.md, "Digests"): SHA-256, published in each entry's
 * resources as `sha256:` + 64 lowercase hex digits of the raw bytes' digest (SEP-2640 "The entry": `digest`).
 *
 * Everything that hashes file content goes through this module: the walk (`digest.ts`), record keys (`record.ts`,
 * laid out from {@link DIGEST_BYTES}), the digest cache (`digest-cache.ts`: its entries, its checksum and its file
 * names, so a cache written under another algorithm is never read), verified reads (`server/read.ts`, through
 * `record.ts`) and `check --verify-cache`. Changing the algorithm is changing this file. Pure.
 */
import { createHash, type Hash, hash } from 'node:crypto';

/** The algorithm: Node's name for it, and the name an entry's `digest` starts with. */
const ALGORITHM = 'sha256';

/** Length of a raw digest (bytes). */
export const DIGEST_BYTES = 32;

/**
 * The raw digest of `bytes` in one call (a string is hashed as its UTF-8 bytes).
 *
 * @returns {@link DIGEST_BYTES} bytes.
 */
export function digestBytes(bytes: Uint8Array | string): Buffer {
  return hash(ALGORITHM, bytes, 'buffer');
}

/** A digest fed in pieces (`update(chunk)`, then `digest()` gives the raw {@link DIGEST_BYTES} bytes): large files. */
export function createDigest(): Hash {
  return createHash(ALGORITHM);
}

/**
 * The entry form of a raw digest.
 *
 * @param raw a buffer whose first {@link DIGEST_BYTES} bytes are the digest (it may be longer).
 * @returns `sha256:` + 64 lowercase hex digits (SEP-2640 "The entry": `digest`).
 */
export function digestText(raw: Buffer): string {
  return `${ALGORITHM}:${raw.toString('hex', 0, DIGEST_BYTES)}`;
}

const PREFIX = Buffer.from(`${ALGORITHM}:`, 'latin1');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Length of {@link digestText}'s result (ASCII characters = bytes). */
export const DIGEST_TEXT_LENGTH = PREFIX.length + 2 * DIGEST_BYTES;

/**
 * Writes {@link digestText} of a raw digest into `out` without making a string (an entry is written whole into one
 * buffer: `entry.ts`).
 *
 * @param raw a latin1 string whose first {@link DIGEST_BYTES} characters are the digest's bytes (a record key).
 * @param out room for {@link DIGEST_TEXT_LENGTH} bytes at `at`.
 * @returns where the text ends in `out`.
 */
export function writeDigestText(raw: string, out: Buffer, at: number): number {
  let end = at + PREFIX.copy(out, at);
  for (let index = 0; index < DIGEST_BYTES; index++) {
    const byte = raw.charCodeAt(index);
    out[end++] = HEX_DIGITS[byte >> 4] as number;
    out[end++] = HEX_DIGITS[byte & 15] as number;
  }
  return end;
}
