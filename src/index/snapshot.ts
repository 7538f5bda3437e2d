/**
 * Lookups and pages over one {@link Snapshot} (pure). Every lookup goes through the index: a URI is parsed to its
 * canonical spelling and looked up, never joined onto a host path.
 * Implements SEP-2640 "skills/list" and "resources/directory/read" pagination, and "skills/get" lookups.
 */
import { SkillsServeError } from '../errors.js';
import type { DirectoryChild, FileRecord, SkillRecord, Snapshot } from './types.js';
import { canonicalSkillUri, compareUris, MAX_URI_LENGTH } from './uri.js';

/** An empty snapshot (generation 0): what a store holds before its first build. */
export const EMPTY_SNAPSHOT: Snapshot = Object.freeze({
  skills: new Map(),
  ordered: Object.freeze([]),
  files: new Map(),
  dirs: new Map(),
  diagnostics: Object.freeze([]),
  generation: 0,
});

/** The skill whose `SKILL.md` is at `uri` (any spelling of it), or `undefined`. */
export function findSkill(snapshot: Snapshot, uri: string): SkillRecord | undefined {
  const key = canonicalSkillUri(uri);
  return key === undefined ? undefined : snapshot.skills.get(key);
}

/** The served file at `uri` (any spelling), or `undefined`. */
export function findFile(snapshot: Snapshot, uri: string): FileRecord | undefined {
  const key = canonicalSkillUri(uri);
  return key === undefined ? undefined : snapshot.files.get(key);
}

/** The sorted children of the directory resource at `uri` (any spelling), or `undefined` when it is not one. */
export function findDirectory(snapshot: Snapshot, uri: string): readonly DirectoryChild[] | undefined {
  const key = canonicalSkillUri(uri);
  return key === undefined ? undefined : snapshot.dirs.get(key);
}

/** Which skills contain the file at canonical `uri` (the nearest skill and every enclosing one). */
export function skillsContaining(snapshot: Snapshot, uri: string): SkillRecord[] {
  return snapshot.ordered.filter((skill) => uri.startsWith(`${skill.rootUri}/`));
}

const CURSOR_PREFIX = 'after:';
/** Longest cursor accepted: base64url of the prefix plus the longest URI (canonical URIs are ASCII). */
const MAX_CURSOR_LENGTH = Math.ceil(((CURSOR_PREFIX.length + MAX_URI_LENGTH) * 4) / 3);

/**
 * Encodes a keyset cursor: "the next page starts after this URI". It stays valid when the catalog changes between
 * pages (a removed URI still orders the rest), and it does not depend on which process issued it.
 *
 * @param afterUri the last URI of the page just returned.
 * @returns an opaque base64url string.
 */
export function encodeCursor(afterUri: string): string {
  return Buffer.from(CURSOR_PREFIX + afterUri, 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor}.
 *
 * @throws SkillsServeError `INVALID_CURSOR` (→ -32602) for anything else.
 */
export function decodeCursor(cursor: string): string {
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[\w-]+$/u.test(cursor)) {
    throw new SkillsServeError('INVALID_CURSOR', 'Invalid cursor: it was not issued by this server');
  }
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(CURSOR_PREFIX) || Buffer.from(decoded, 'utf8').toString('base64url') !== cursor) {
    throw new SkillsServeError('INVALID_CURSOR', 'Invalid cursor: it was not issued by this server');
  }
  return decoded.slice(CURSOR_PREFIX.length);
}

/** One page of a sorted list. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/**
 * The page of `items` (sorted by `keyOf` in code-unit order) that starts after the cursor's URI.
 *
 * @param items sorted ascending by `keyOf`.
 * @param cursor from a previous page, or `undefined` for the first page.
 * @param pageSize positive integer: entries per page.
 * @throws SkillsServeError `INVALID_CURSOR` for a cursor this server did not issue.
 */
export function pageOf<T>(items: readonly T[], cursor: string | undefined, pageSize: number, keyOf: (item: T) => string): Page<T> {
  let start = 0;
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareUris(keyOf(items[mid] as T), after) <= 0) low = mid + 1;
      else high = mid;
    }
    start = low;
  }
  const end = Math.min(items.length, start + pageSize);
  const page = items.slice(start, end);
  const last = page.at(-1);
  return end < items.length && last !== undefined ? { items: page, nextCursor: encodeCursor(keyOf(last)) } : { items: page };
}
