/**
 * Per-team visibility (`--http-tokens`): which part of the namespace one HTTP client may see (pure;
 * docs/ARCHITECTURE.md, "Serving"). A client's view is a list of skill-path prefixes: it sees every skill whose path
 * starts with one of them, every file and directory under them, and the grouping directories on the way to them
 * (listing only what leads to them). Everything else is answered exactly as if it did not exist.
 */
import { type DirectoryChild, DirNode, FileNode, type SkillRecord, type Snapshot } from '../index/types.js';
import { parseSkillUri } from '../index/uri.js';
import { PerSnapshot } from './per-snapshot.js';

/** One client's view. */
export interface Visibility {
  /** A name for logs (never the token). */
  readonly name: string;
  /** Skill-path prefixes, as segments (`[['acme', 'billing'], ['shared']]`); `[[]]` sees everything. */
  readonly prefixes: readonly (readonly string[])[];
}

function startsWith(segments: readonly string[], prefix: readonly string[]): boolean {
  if (segments.length < prefix.length) return false;
  for (let index = 0; index < prefix.length; index++) if (segments[index] !== prefix[index]) return false;
  return true;
}

/** Whether `segments` (a skill path, or a file or directory path) lies at or under one of the view's prefixes. */
export function isVisible(view: Visibility, segments: readonly string[]): boolean {
  return view.prefixes.some((prefix) => startsWith(segments, prefix));
}

/** Whether `segments` is visible, or a directory on the way to a visible prefix (a grouping directory above it). */
export function leadsToVisible(view: Visibility, segments: readonly string[]): boolean {
  return view.prefixes.some((prefix) => startsWith(segments, prefix) || startsWith(prefix, segments));
}

/** Whether the resource at `uri` (any spelling) may be seen. */
export function isVisibleUri(view: Visibility, uri: string): boolean {
  const segments = parseSkillUri(uri);
  return segments !== undefined && isVisible(view, segments);
}

const visibleSkillsCache = new PerSnapshot<readonly SkillRecord[], Visibility>();

/**
 * The skills of `snapshot` the view sees, in `skills/list` order (computed once per snapshot and view).
 *
 * @returns all of `snapshot.ordered` when `view` is undefined.
 */
export function visibleSkills(snapshot: Snapshot, view: Visibility | undefined): readonly SkillRecord[] {
  if (view === undefined) return snapshot.ordered;
  return visibleSkillsCache.get(snapshot, view, () =>
    snapshot.ordered.filter((skill) => isVisible(view, skill.segments)),
  );
}

/**
 * The children of a directory the view may list: all of them inside a visible prefix; only those on the way to one
 * in a grouping directory above it.
 *
 * @param segments the directory's path.
 * @returns `undefined` when the directory itself may not be seen.
 */
export function visibleChildren(
  view: Visibility,
  segments: readonly string[],
  children: readonly DirectoryChild[],
): readonly DirectoryChild[] | undefined {
  if (isVisible(view, segments)) return children;
  if (!leadsToVisible(view, segments)) return undefined;
  return children.filter((child) => leadsToVisible(view, [...segments, child.name]));
}

const viewCache = new PerSnapshot<Snapshot, Visibility>();
const bases = new WeakMap<Snapshot, Snapshot>();

/**
 * `snapshot` as `view` sees it: only its skills, a namespace pruned to what they see (grouping directories keep only
 * the children on the way to a visible prefix), no diagnostics. What the compat tools, prompts and instructions of a
 * view are answered from, so that they cannot name what the view may not see. Computed once per snapshot and view.
 *
 * @returns `snapshot` itself when `view` is undefined.
 */
export function viewOf(snapshot: Snapshot, view: Visibility | undefined): Snapshot {
  if (view === undefined) return snapshot;
  return viewCache.get(snapshot, view, () => {
    const ordered = visibleSkills(snapshot, view);
    const root = pruned(snapshot.root, [], view);
    const viewed = Object.freeze({
      skills: new Map(ordered.map((skill) => [skill.uri, skill])),
      ordered,
      root,
      fileCount: countFiles(root),
      diagnostics: Object.freeze([]),
      generation: snapshot.generation,
    });
    bases.set(viewed, snapshot);
    return viewed;
  });
}

/** The whole snapshot a {@link viewOf} view was cut from (`snapshot` itself when it is not a view). */
export function baseOf(snapshot: Snapshot): Snapshot {
  return bases.get(snapshot) ?? snapshot;
}

function pruned(dir: DirNode, segments: readonly string[], view: Visibility): DirNode {
  if (isVisible(view, segments)) return dir;
  const children: DirNode[] = [];
  for (const child of dir.children) {
    if (!(child instanceof DirNode)) continue;
    const path = [...segments, child.name];
    if (leadsToVisible(view, path)) children.push(pruned(child, path, view));
  }
  return new DirNode(dir.name, children, dir.real, dir.skill);
}

function countFiles(dir: DirNode): number {
  let count = 0;
  for (const child of dir.children) count += child instanceof FileNode ? 1 : countFiles(child);
  return count;
}
