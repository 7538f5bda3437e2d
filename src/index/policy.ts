/**
 * What the index serves: pure decisions about names and links (docs/ARCHITECTURE.md, "Policies").
 */

import ignore, { type Ignore } from 'ignore';

/** Per-directory ignore rules, gitignore syntax, applied to that directory's subtree. */
export const IGNORE_FILE = '.skillsignore';

/** `--symlinks`: `within` follows links whose real path stays inside a served root; `skip` never; `follow` always. */
export const SYMLINK_POLICIES = ['within', 'skip', 'follow'] as const;
export type SymlinkPolicy = (typeof SYMLINK_POLICIES)[number];

/** The rules of one `.skillsignore`, and the root-relative directory they apply below. */
export interface IgnoreLayer {
  readonly base: string;
  readonly matcher: Ignore;
}

/**
 * Compiles a `.skillsignore` file (gitignore syntax: globs, `dir/`, `!negation`, `#` comments).
 *
 * @param text the file's contents.
 */
export function parseIgnoreFile(text: string): Ignore {
  return ignore().add(text);
}

/**
 * Whether `.skillsignore` rules exclude a path. The deepest file that has an opinion decides, so a nested
 * `.skillsignore` can re-include (`!name`) what an outer one excludes, as with nested `.gitignore` files.
 *
 * @param layers rule sets from the root downwards (each `base` an ancestor directory of `rel`).
 * @param rel root-relative path of the entry.
 * @param isDirectory whether the entry is a directory (so `drafts/` patterns match it).
 */
export function isIgnoredByLayers(layers: readonly IgnoreLayer[], rel: string, isDirectory: boolean): boolean {
  for (let index = layers.length - 1; index >= 0; index--) {
    const layer = layers[index] as IgnoreLayer;
    const relative = layer.base === '' ? rel : rel.slice(layer.base.length + 1);
    if (relative === '') continue;
    const verdict = layer.matcher.test(isDirectory ? `${relative}/` : relative);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

/** The file that makes a directory a skill (case-sensitive). */
export const MANIFEST_NAME = 'SKILL.md';

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
