/**
 * Which part of a root a filesystem event invalidates (pure). Implements the live-update rule "a change affects the
 * nearest skill and every enclosing skill": the region rebuilt is the *outermost* skill directory containing the
 * path, which covers all of them, or, for changes outside every skill, the smallest directory that can hold new
 * skills.
 */
import { IGNORE_FILE, isIgnoredName, MANIFEST_NAME } from '../index/policy.js';

/** A filesystem event, relative to its root. */
export interface WatchEvent {
  readonly rootIndex: number;
  /** What happened, as chokidar names it. */
  readonly kind: 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';
  /** Root-relative, `/`-separated path; `''` for the root itself. */
  readonly rel: string;
}

/**
 * The region (root-relative directory) to rebuild for one event, or `undefined` when the event cannot change
 * what is served.
 *
 * - A `.skillsignore` (outside ignored directories): the region of its directory, whose subtree it governs.
 * - Any name under an ignored segment (`.git/…`, `node_modules/…`, `.swp` files): ignored.
 * - The root itself appearing or vanishing, or its own `SKILL.md` (which changes every URI): `''`, the whole root.
 * - Inside a skill (a directory holding `SKILL.md`, valid or not): the outermost such directory.
 * - Outside every skill: a `SKILL.md` → its directory; a directory added or removed → that directory (it may hold
 *   skills); any other file → ignored (files outside skills are never served).
 *
 * @param event the event.
 * @param candidates directories of the root that currently hold a `SKILL.md`.
 */
export function regionOf(event: WatchEvent, candidates: ReadonlySet<string>): string | undefined {
  const { rel, kind } = event;
  if (rel === '' || rel === MANIFEST_NAME || rel === IGNORE_FILE) return '';
  const segments = rel.split('/');
  if (segments.at(-1) === IGNORE_FILE && !segments.slice(0, -1).some((segment) => isIgnoredName(segment))) {
    return regionOf({ ...event, kind: 'addDir', rel: segments.slice(0, -1).join('/') }, candidates);
  }
  if (segments.some((segment) => isIgnoredName(segment))) return undefined;
  if (candidates.has('')) return '';
  for (let depth = 1; depth <= segments.length; depth++) {
    const dir = segments.slice(0, depth).join('/');
    if (candidates.has(dir)) return dir;
  }
  const isDir = kind === 'addDir' || kind === 'unlinkDir';
  if (isDir) return rel;
  if (segments.at(-1) === MANIFEST_NAME) return segments.slice(0, -1).join('/');
  return undefined;
}

/**
 * Regions to rebuild for a batch of events, per root, with regions inside other regions dropped.
 *
 * @param events the batch.
 * @param candidatesOf the candidate skill directories of a root.
 * @returns root index → regions (empty map when nothing served can have changed).
 */
export function regionsOf(events: readonly WatchEvent[], candidatesOf: (rootIndex: number) => ReadonlySet<string>): Map<number, string[]> {
  const byRoot = new Map<number, Set<string>>();
  for (const event of events) {
    const region = regionOf(event, candidatesOf(event.rootIndex));
    if (region === undefined) continue;
    let set = byRoot.get(event.rootIndex);
    if (set === undefined) byRoot.set(event.rootIndex, (set = new Set()));
    set.add(region);
  }
  const result = new Map<number, string[]>();
  for (const [rootIndex, set] of byRoot) {
    const sorted = [...set].sort();
    result.set(rootIndex, sorted.filter((rel) => !sorted.some((outer) => outer !== rel && (outer === '' || rel.startsWith(`${outer}/`)))));
  }
  return result;
}
