/**
 * The one "path inside path" check for host paths (real paths of roots, files and link targets). A leaf every layer
 * may import. Pure.
 */
import path from 'node:path';

/**
 * Whether `candidate` is `dir` or lies inside it. Both are absolute, normalized paths of this platform. A sibling whose
 * name merely starts with `dir`'s (`/skills-old` next to `/skills`) is outside.
 *
 * @param candidate the path to test.
 * @param dir the directory; a trailing separator is allowed (`/` itself).
 */
export function isPathWithin(candidate: string, dir: string): boolean {
  if (candidate === dir) return true;
  return candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}
