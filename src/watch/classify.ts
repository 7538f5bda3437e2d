/**
 * Which region a filesystem event invalidates (pure; docs/ARCHITECTURE.md, "Regions"). A change affects the nearest
 * skill and every enclosing skill, so the region rebuilt is the *outermost* skill directory containing the path, which
 * covers all of them; a change outside every skill rebuilds the smallest directory that can hold new skills.
 *
 * Events are named the way `fs.watch` names them: `rename` (an entry appeared, disappeared or moved: it may be a
 * directory) and `change` (an entry's content or attributes changed). `rescan` asks for the whole root.
 */
import { IGNORE_FILE, isIgnoredName, MANIFEST_NAME } from '../index/policy.js';
import { outermostRegions, type Region } from '../index/region.js';

/** A filesystem event, relative to its root. */
export interface WatchEvent {
  readonly rootIndex: number;
  readonly kind: 'change' | 'rename' | 'rescan';
  /** Root-relative, `/`-separated path; `''` for the root itself. */
  readonly rel: string;
}

/**
 * The region (root-relative directory) to rebuild for one event, or `undefined` when it cannot change what is served.
 *
 * - `rescan`, the root itself, its own `SKILL.md` (which changes every URI) or its `.skillsignore`: `''`.
 * - A `.skillsignore` elsewhere (outside ignored directories): the region of its directory, whose subtree it governs.
 * - Any path under an ignored segment (`.git/…`, `node_modules/…`, `.swp` files): nothing.
 * - Inside a skill (a directory holding `SKILL.md`, valid or not): the outermost such directory.
 * - Outside every skill: a `SKILL.md` → its directory; another entry that appeared or disappeared → that entry (it may
 *   be a directory holding skills; walking a file finds nothing); a content change → nothing (files outside skills
 *   are never served).
 *
 * @param event the event.
 * @param candidates directories of the root that currently hold a `SKILL.md`.
 */
export function regionOf(event: WatchEvent, candidates: ReadonlySet<string>): string | undefined {
  const { rel, kind } = event;
  if (kind === 'rescan' || rel === '' || rel === MANIFEST_NAME || rel === IGNORE_FILE) return '';
  const segments = rel.split('/');
  const last = segments.length - 1;
  if (segments[last] === IGNORE_FILE && !segments.slice(0, last).some(isIgnoredName)) {
    return regionOf({ ...event, kind: 'rename', rel: segments.slice(0, last).join('/') }, candidates);
  }
  if (segments.some(isIgnoredName)) return undefined;
  if (candidates.has('')) return '';
  let dir = '';
  for (let depth = 0; depth < segments.length; depth++) {
    dir = depth === 0 ? (segments[0] as string) : `${dir}/${segments[depth] as string}`;
    if (candidates.has(dir)) return dir;
  }
  if (segments[last] === MANIFEST_NAME) return segments.slice(0, last).join('/');
  return kind === 'rename' ? rel : undefined;
}

/**
 * The regions to rebuild for a batch of events, outermost only.
 *
 * @param events the batch.
 * @param candidatesOf the candidate skill directories of a root.
 */
export function regionsOf(
  events: readonly WatchEvent[],
  candidatesOf: (rootIndex: number) => ReadonlySet<string>,
): Region[] {
  const regions: Region[] = [];
  for (const event of events) {
    const rel = regionOf(event, candidatesOf(event.rootIndex));
    if (rel !== undefined) regions.push({ rootIndex: event.rootIndex, rel });
  }
  return outermostRegions(regions);
}

/**
 * How the names a platform's `fs.watch` reports are split into path segments: `posix` at `/` only (there `\` is an
 * ordinary character of a file name: `a\b.md` is one file), `win32` at `/` and `\` (Windows reports `sub\x.md`, and
 * no Windows name holds either).
 */
export type NameSeparators = 'posix' | 'win32';

/**
 * The segments of a name a directory watch reported (pure), without empty and `.` segments.
 *
 * @param name a name, or a relative path (`sub/x.md`; `sub\x.md` on Windows).
 * @returns the segments, `[]` for a name that is only separators and dots, or `undefined` when a segment is `..` (a
 *   path out of the watched directory, which no watch reports of its own entries).
 */
function nameSegments(name: string, separators: NameSeparators): string[] | undefined {
  const parts = name.split(separators === 'win32' ? /[\\/]/u : '/').filter((part) => part !== '' && part !== '.');
  return parts.includes('..') ? undefined : parts;
}

/**
 * Splits a path relative to a watched directory into root-relative form (pure).
 *
 * @param dirRel the watched directory, root-relative and `/`-separated (`''` for the root).
 * @param name what the watch reported (a name, or a relative path), or `null` when it did not say.
 * @param separators how `name` is split into segments ({@link NameSeparators}).
 * @returns the root-relative, `/`-separated path of the entry (`dirRel` itself when no usable name was given).
 */
export function eventPath(dirRel: string, name: string | null, separators: NameSeparators): string {
  if (name === null || name === '') return dirRel;
  const tail = nameSegments(name, separators)?.join('/') ?? '';
  if (tail === '') return dirRel;
  return dirRel === '' ? tail : `${dirRel}/${tail}`;
}

/**
 * Whether an event a directory watch reported names something that cannot change what is served, so the watcher
 * drops it before batching (pure; the same rule as {@link regionOf} for paths under ignored segments): a segment is an
 * ignored name (`.git`, `node_modules`, an editor's `.x.swp`), unless it is a `.skillsignore` that is the last
 * segment, with no ignored segment above it.
 *
 * @param name what the watch reported, or `null` when it did not say (never ignored: the directory is rescanned).
 * @param separators how `name` is split into segments ({@link NameSeparators}).
 */
export function isIgnoredEventName(name: string | null, separators: NameSeparators): boolean {
  if (name === null) return false;
  const segments = nameSegments(name, separators) ?? [];
  const last = segments.length - 1;
  return segments.some((segment, index) => isIgnoredName(segment) && !(index === last && segment === IGNORE_FILE));
}
