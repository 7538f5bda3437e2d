/**
 * The trees `npm run bench` measures: {@link writeSyntheticTree}'s shape (skills in 50 group folders, ~10 files each,
 * mostly small text), with its large assets replaced by *binary* files of mixed sizes, so that:
 * - `resources/read` serves them as base64 blobs (the synthetic tree's `ZZZ…` assets are valid UTF-8, i.e. text);
 * - both hashing paths of `src/index/digest.ts` run: files ≤ 4 MiB (`SYNC_HASH_MAX_BYTES`) are hashed synchronously,
 *   larger ones asynchronously in 1 MiB chunks;
 * - every skill stays under the 16 MiB per-skill limit (largest asset 12 MiB), so every skill is published;
 * - the 10,000-skill tree is ~1 GiB (100,000 files).
 * Deterministic content, so runs compare.
 */
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeSyntheticTree } from './tree.js';

const MIB = 1024 * 1024;
/** Sizes of the large assets, cycled in skill order (bytes). */
export const LARGE_SIZES = [3 * MIB, 6 * MIB, 12 * MIB] as const;

/** One skill in `largeEvery` gets a large asset, chosen per tree size so the largest tree is ~1 GiB. */
export function largeEveryFor(skills: number): number {
  if (skills <= 100) return 10; // 10 assets, ~66 MiB
  if (skills <= 1000) return 40; // 25 assets, ~175 MiB
  return 80; // 125 assets at 10,000 skills, ~870 MiB
}

export interface BenchTreeStats {
  readonly skills: number;
  readonly files: number;
  readonly bytes: number;
  /** Root-relative paths and sizes of the large (multi-MB) assets. */
  readonly large: { rel: string; size: number }[];
}

/** A deterministic, non-UTF-8 buffer (xorshift32), big enough for the largest asset. */
function binaryPattern(bytes: number): Buffer {
  const words = new Uint32Array(Math.ceil(bytes / 4));
  let x = 0x9e3779b9;
  for (let index = 0; index < words.length; index++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[index] = x >>> 0;
  }
  const buffer = Buffer.from(words.buffer, 0, bytes);
  buffer[0] = 0xff; // never valid UTF-8
  return buffer;
}

/**
 * Writes the bench tree for `skills` skills under `root` (existing, empty).
 *
 * @returns the skills, files and bytes written, and the large assets.
 */
export function writeBenchTree(root: string, skills: number): BenchTreeStats {
  const largeEvery = largeEveryFor(skills);
  // Same tree as the synthetic one, with empty placeholders where the large assets go...
  const written = writeSyntheticTree(root, { skills, largeEvery, largeBytes: 0 });
  const pattern = binaryPattern(Math.max(...LARGE_SIZES));
  const large: { rel: string; size: number }[] = [];
  let bytes = written.bytes;
  // ...then the placeholders are filled with binary content (same paths as writeSyntheticTree's `asset.bin`).
  for (let index = 0, ordinal = 0; index < skills; index += largeEvery, ordinal++) {
    const rel = `group-${String(index % 50).padStart(2, '0')}/skill-${String(index).padStart(5, '0')}/asset.bin`;
    const file = path.join(root, ...rel.split('/'));
    if (statSync(file).size !== 0) throw new Error(`expected an empty placeholder at ${file}: did bench/tree.ts change its layout?`);
    const size = LARGE_SIZES[ordinal % LARGE_SIZES.length] as number;
    pattern.writeUInt32BE(ordinal, 4); // distinct content per asset
    writeFileSync(file, pattern.subarray(0, size));
    large.push({ rel, size });
    bytes += size;
  }
  return { skills, files: written.files, bytes, large };
}
