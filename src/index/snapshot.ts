/**
 * Lookups and pages over one {@link Snapshot} (pure). Every lookup goes through the index: a URI is parsed to its
 * canonical spelling and looked up, never joined onto a host path.
 * Implements SEP-2640 "skills/list" and "resources/directory/read" pagination, and "skills/get" lookups.
 */
import { DIRECTORY_MIME_TYPE } from '@modelcontextprotocol/server/ext/skills';

import { SkillsServeError } from '../errors.js';
import { mimeTypeFor } from './mime.js';
import { EMPTY_NAMESPACE, locate } from './namespace.js';
import { type DirectoryChild, DirNode, FileNode, type SkillRecord, type Snapshot } from './types.js';
import { buildSkillUri, canonicalSkillUri, compareUris, encodeSegment, MAX_URI_LENGTH, parseSkillUri } from './uri.js';

/** An empty snapshot (generation 0): what a store holds before its first build. */
export const EMPTY_SNAPSHOT: Snapshot = Object.freeze({
  skills: new Map(),
  ordered: Object.freeze([]),
  root: EMPTY_NAMESPACE,
  fileCount: 0,
  diagnostics: Object.freeze([]),
  generation: 0,
});

/** A served file, as a lookup finds it. */
export interface ServedFile {
  /** Canonical URI. */
  readonly uri: string;
  readonly node: FileNode;
  /** Absolute real host path: what a read opens. */
  readonly path: string;
  readonly mimeType: string;
  /** The top skill it lies in: whose region a re-index rebuilds. */
  readonly top: SkillRecord;
  /** Root-relative path of the file in that skill's root. */
  readonly rel: string;
}

/** A directory resource, as a lookup finds it. */
export interface ServedDirectory {
  /** Canonical URI. */
  readonly uri: string;
  readonly node: DirNode;
}

/** The skill whose `SKILL.md` is at `uri` (any spelling of it), or `undefined`. */
export function findSkill(snapshot: Snapshot, uri: string): SkillRecord | undefined {
  const key = canonicalSkillUri(uri);
  return key === undefined ? undefined : snapshot.skills.get(key);
}

/** The served file at `uri` (any spelling), or `undefined`. */
export function findFile(snapshot: Snapshot, uri: string): ServedFile | undefined {
  const segments = parseSkillUri(uri);
  const found = segments === undefined ? undefined : locate(snapshot.root, segments);
  if (found === undefined || !(found.node instanceof FileNode) || found.real === undefined || found.top === undefined)
    return undefined;
  return {
    uri: buildSkillUri(segments as string[]),
    node: found.node,
    path: found.real,
    mimeType: mimeTypeFor(found.node.name),
    top: found.top,
    rel: found.rel ?? '',
  };
}

/** The directory resource at `uri` (any spelling), or `undefined` when it is not one. */
export function findDirectory(snapshot: Snapshot, uri: string): ServedDirectory | undefined {
  const segments = parseSkillUri(uri);
  const found = segments === undefined ? undefined : locate(snapshot.root, segments);
  if (found === undefined || !(found.node instanceof DirNode)) return undefined;
  return { uri: buildSkillUri(segments as string[]), node: found.node };
}

/**
 * The children of a directory resource as `resources/directory/read` lists them: files with their MIME type and
 * size, subdirectories as `inode/directory`, sorted by URI (code-unit order). Derived when asked, never stored.
 */
export function listDirectory(directory: ServedDirectory): DirectoryChild[] {
  const children = directory.node.children.map((child): DirectoryChild => {
    const uri = `${directory.uri}/${encodeSegment(child.name)}`;
    return child instanceof FileNode
      ? { uri, name: child.name, mimeType: mimeTypeFor(child.name), size: child.size }
      : { uri, name: child.name, mimeType: DIRECTORY_MIME_TYPE };
  });
  return children.sort((a, b) => compareUris(a.uri, b.uri));
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
  if (
    typeof cursor !== 'string' ||
    cursor.length === 0 ||
    cursor.length > MAX_CURSOR_LENGTH ||
    !/^[\w-]+$/u.test(cursor)
  ) {
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

/** A bound on the summed size of one page's items, beside the entry count. */
export interface PageBudget<T> {
  /** Most summed size (in the unit of `sizeOf`); a page always holds at least one item. */
  readonly max: number;
  readonly sizeOf: (item: T) => number;
  /** An item index no page crosses: a page that starts before it ends at it at the latest. */
  readonly boundary?: number;
}

/**
 * Where a page of `items` that starts at `start` ends (exclusive): after `pageSize` items, at `budget.boundary` when
 * it starts before it, and before the item that would take the page's summed size over `budget.max` (a page holds at
 * least one item). Used by every paged answer, whatever its cursor.
 */
export function pageEnd<T>(items: readonly T[], start: number, pageSize: number, budget?: PageBudget<T>): number {
  let end = Math.min(items.length, start + pageSize);
  if (budget === undefined) return end;
  if (budget.boundary !== undefined && start < budget.boundary) end = Math.min(end, budget.boundary);
  let used = 0;
  for (let at = start; at < end; at++) {
    used += budget.sizeOf(items[at] as T);
    if (used > budget.max && at > start) return at;
  }
  return end;
}

/**
 * The page of `items` (sorted by `keyOf` in code-unit order) that starts after the cursor's URI.
 *
 * @param items sorted ascending by `keyOf`.
 * @param cursor from a previous page, or `undefined` for the first page.
 * @param pageSize positive integer: most entries per page.
 * @param budget also ends the page before the item that would take its summed size over `budget.max`.
 * @throws SkillsServeError `INVALID_CURSOR` for a cursor this server did not issue.
 */
export function pageOf<T>(
  items: readonly T[],
  cursor: string | undefined,
  pageSize: number,
  keyOf: (item: T) => string,
  budget?: PageBudget<T>,
): Page<T> {
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
  const end = pageEnd(items, start, pageSize, budget);
  const page = items.slice(start, end);
  const last = page.at(-1);
  return end < items.length && last !== undefined
    ? { items: page, nextCursor: encodeCursor(keyOf(last)) }
    : { items: page };
}

/**
 * UTF-8 bytes of the longest URI of a file or directory of `skill` (nested skills' included): what an extension
 * client that declines long URIs measures.
 */
export function longestResourceUriBytes(skill: SkillRecord): number {
  let longest = 0;
  const stack: { node: DirNode; uri: string }[] = [{ node: skill.node, uri: skill.rootUri }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    for (const child of item.node.children) {
      const uri = `${item.uri}/${encodeSegment(child.name)}`;
      longest = Math.max(longest, Buffer.byteLength(uri, 'utf8'));
      if (child instanceof DirNode) stack.push({ node: child, uri });
    }
  }
  return longest;
}
