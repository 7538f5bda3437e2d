/**
 * The one disk oracle: what a directory of a simple test tree publishes, computed from the bytes on disk without
 * `src/` (sha256 and byte length of every file), for tests to compare the index, a listing or a read against.
 */
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { sha256 } from './tree.js';

/** `{ uri, digest, size }` of one published file. */
export interface PublishedFile {
  readonly uri: string;
  readonly digest: string;
  readonly size: number;
}

/** Sorts by URI in code-unit order, the order listings use. */
export const byUri = (a: { uri: string }, b: { uri: string }): number => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0);

/** Names the ignore policy publishes: not starting with `.`, not `node_modules`. */
export const isPublishedName = (name: string): boolean => !name.startsWith('.') && name !== 'node_modules';

/**
 * `{ uri, digest, size }` of every regular file below `dir` whose names the ignore policy publishes, sorted by URI;
 * each path segment below `base` is encoded with `encodeURIComponent`.
 *
 * @param dir the directory on disk (a skill directory, as a rule).
 * @param base its directory URI (`skill://alpha`).
 * @param followLinks follow symbolic links below `dir` (default: not; the fault trees only hold links that lead out of
 *   the root, the live trees link inside it).
 */
export function diskFiles(dir: string, base: string, followLinks = false): PublishedFile[] {
  const out: PublishedFile[] = [];
  const walk = (abs: string, rel: string[]): void => {
    for (const name of readdirSync(abs)) {
      if (!isPublishedName(name)) continue;
      const child = path.join(abs, name);
      const stat = followLinks ? statSync(child) : lstatSync(child);
      if (stat.isDirectory()) walk(child, [...rel, name]);
      else if (stat.isFile()) {
        const bytes = readFileSync(child);
        out.push({
          uri: `${base}/${[...rel, name].map(encodeURIComponent).join('/')}`,
          digest: sha256(bytes),
          size: bytes.length,
        });
      }
    }
  };
  walk(dir, []);
  return out.sort(byUri);
}
