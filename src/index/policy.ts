/**
 * What the index serves: pure decisions about names and links (DESIGN §5 "Policies").
 */
import path from 'node:path';

/** The file that makes a directory a skill (case-sensitive). */
export const MANIFEST_NAME = 'SKILL.md';

/** SEP-2640 per-skill limits: at most this many resources… */
export const MAX_SKILL_FILES = 512;
/** …and at most this many bytes in total (16 MiB). */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;

/**
 * Whether a directory entry is never served, listed, digested or read: names starting with `.` (dotfiles,
 * `.git`, editor temp files) and `node_modules`.
 *
 * @param name one path segment.
 */
export function isIgnoredName(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * Whether a name can be served at all: a file name that is not valid UTF-8 on disk reaches Node as a string with
 * U+FFFD and could never be read back through its URI.
 */
export function isRepresentableName(name: string): boolean {
  return !name.includes('\uFFFD');
}

/**
 * Whether `realPath` lies inside `rootRealPath` (or is it). Both must be absolute real paths.
 * A sibling whose name merely starts with the root's name (`/skills-old` next to `/skills`) is outside.
 */
export function isInsideRoot(realPath: string, rootRealPath: string): boolean {
  if (realPath === rootRealPath) return true;
  const base = rootRealPath.endsWith(path.sep) ? rootRealPath : rootRealPath + path.sep;
  return realPath.startsWith(base);
}
