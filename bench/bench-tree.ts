/**
 * The trees `npm run bench` measures, in the layout of the synthetic generator: {@link writeSyntheticTree}'s
 * layout (10 files and 4 directories per skill, mostly small text), with a large *binary* asset of mixed size in one
 * skill out of {@link LARGE_EVERY}, so that:
 * - 1,000 skills come to 10,000 files / ~97 MB / ~4,050 directories and 10,000 skills to 100,000 files / ~0.94 GB /
 *   ~40,050 directories (50 group folders on top of 4 per skill);
 * - every large asset is over 1 MiB, so it is hashed off the walk (asynchronously), and `resources/read`
 *   serves it as a base64 blob (the content is never valid UTF-8);
 * - every skill stays under the 16 MiB per-skill limit (largest asset 8 MiB), so every skill is published.
 * Deterministic content, so runs compare.
 */
import { skillRel, writeSyntheticTree } from './tree.js';

const MIB = 1024 * 1024;
/** Sizes of the large assets, cycled in skill order (bytes); big ones first so the 1,000-skill tree gets its share. */
export const LARGE_SIZES = [8, 1.25, 5, 1.5, 4, 2, 3, 1.25].map((mib) => Math.round(mib * MIB));
/** One skill in this many has a large asset (skills 0, 44, 88, …). */
export const LARGE_EVERY = 44;

export interface BenchTreeStats {
  readonly skills: number;
  readonly files: number;
  readonly bytes: number;
  /** Directories written, the root not counted. */
  readonly dirs: number;
  /** Root-relative paths and sizes of the large (multi-MB) assets. */
  readonly large: { rel: string; size: number }[];
}

/** A deterministic, non-UTF-8 buffer (xorshift32) of `bytes` bytes. */
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
 * @returns the skills, files, bytes and directories written, and the large assets.
 */
export function writeBenchTree(root: string, skills: number): BenchTreeStats {
  const pattern = binaryPattern(Math.max(...LARGE_SIZES));
  const large: { rel: string; size: number }[] = [];
  const written = writeSyntheticTree(root, {
    skills,
    largeAsset: (index) => {
      if (index % LARGE_EVERY !== 0) return undefined;
      const ordinal = index / LARGE_EVERY;
      const size = LARGE_SIZES[ordinal % LARGE_SIZES.length] as number;
      pattern.writeUInt32BE(ordinal, 4); // distinct content per asset
      large.push({ rel: `${skillRel(index)}/assets/asset.bin`, size });
      return pattern.subarray(0, size);
    },
  });
  return { skills, ...written, large };
}
