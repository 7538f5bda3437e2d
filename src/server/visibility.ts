/**
 * Per-team visibility (`--http-tokens`): which part of the namespace one HTTP client may see (pure;
 * docs/ARCHITECTURE.md, "Serving"). A client's view is a list of skill-path prefixes: it sees every skill whose path
 * starts with one of them, every file and directory under them, and the grouping directories on the way to them
 * (listing only what leads to them). A view may also withhold the skills that bundle executable content
 * (`withholdExecutables`, docs/security.md): each such skill's directory, everything under it (nested skills
 * included), is then answered as if it did not exist too. Everything else is answered exactly as if it did not exist.
 */
import { editDistance } from '../edit-distance.js';
import { type DirectoryChild, DirNode, FileNode, type SkillRecord, type Snapshot } from '../index/types.js';
import { parseSkillUri } from '../index/uri.js';
import { PerSnapshot } from './per-snapshot.js';

/** One client's view. */
export interface Visibility {
  /** A name for logs (never the token). */
  readonly name: string;
  /** Skill-path prefixes, as segments (`[['acme', 'billing'], ['shared']]`); `[[]]` sees everything. */
  readonly prefixes: readonly (readonly string[])[];
  /** Skills bundling executable content (`SkillRecord.executables`) are withheld from it, with their directories. */
  readonly withholdExecutables?: boolean;
}

const flaggedCache = new WeakMap<Snapshot, ReadonlySet<string>>();

/** The skill paths (`/`-joined segments) of the skills of `snapshot` that bundle executable content; once each. */
function flaggedPaths(snapshot: Snapshot): ReadonlySet<string> {
  let flagged = flaggedCache.get(snapshot);
  if (flagged === undefined) {
    flagged = new Set(
      snapshot.ordered.filter((skill) => skill.executables.length > 0).map((skill) => skill.segments.join('/')),
    );
    flaggedCache.set(snapshot, flagged);
  }
  return flagged;
}

/**
 * Whether `segments` (a skill path, or a file or directory path) lie at or under a skill that `view` withholds in
 * `snapshot`: the view withholds executables and the skill bundles some.
 */
export function isWithheld(snapshot: Snapshot, view: Visibility | undefined, segments: readonly string[]): boolean {
  if (view?.withholdExecutables !== true) return false;
  const flagged = flaggedPaths(snapshot);
  if (flagged.size === 0) return false;
  for (let depth = 1; depth <= segments.length; depth++)
    if (flagged.has(segments.slice(0, depth).join('/'))) return true;
  return false;
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
    snapshot.ordered.filter((skill) => isVisible(view, skill.segments) && !isWithheld(snapshot, view, skill.segments)),
  );
}

/**
 * The children of a directory the view may list: all of them inside a visible prefix; only those on the way to one
 * in a grouping directory above it; none of a skill the view withholds ({@link isWithheld}).
 *
 * @param snapshot the snapshot the directory was found in.
 * @param segments the directory's path.
 * @returns `undefined` when the directory itself may not be seen.
 */
export function visibleChildren(
  snapshot: Snapshot,
  view: Visibility,
  segments: readonly string[],
  children: readonly DirectoryChild[],
): readonly DirectoryChild[] | undefined {
  if (isWithheld(snapshot, view, segments)) return undefined;
  const kept = (child: DirectoryChild): boolean => !isWithheld(snapshot, view, [...segments, child.name]);
  if (isVisible(view, segments)) return view.withholdExecutables === true ? children.filter(kept) : children;
  if (!leadsToVisible(view, segments)) return undefined;
  return children.filter((child) => leadsToVisible(view, [...segments, child.name]) && kept(child));
}

/**
 * The skills `view` would see but withholds for their executable content ({@link isWithheld}), in `skills/list`
 * order, each with the withheld skill that encloses it, if that is why.
 */
export function withheldSkills(
  snapshot: Snapshot,
  view: Visibility | undefined,
): readonly { readonly skill: SkillRecord; readonly enclosing: SkillRecord | undefined }[] {
  if (view?.withholdExecutables !== true) return [];
  const withheld = snapshot.ordered.filter(
    (skill) => isVisible(view, skill.segments) && isWithheld(snapshot, view, skill.segments),
  );
  return withheld.map((skill) => ({
    skill,
    enclosing: skill.executables.length > 0 ? undefined : withheld.find((outer) => isInside(skill, outer)),
  }));
}

function isInside(skill: SkillRecord, outer: SkillRecord): boolean {
  return outer.segments.length < skill.segments.length && startsWith(skill.segments, outer.segments);
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
    const root = pruned(snapshot.root, [], view, (segments) => isWithheld(snapshot, view, segments));
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

/**
 * The namespace under `dir` as `view` sees it.
 *
 * @param withheld whether a path lies at or under a skill the view withholds ({@link isWithheld}).
 */
function pruned(
  dir: DirNode,
  segments: readonly string[],
  view: Visibility,
  withheld: (segments: readonly string[]) => boolean,
): DirNode {
  const visible = isVisible(view, segments);
  // Withheld skills are top skills' directories or grouping paths above them: only directories lead to them.
  if (visible && (view.withholdExecutables !== true || dir.skill !== undefined)) return dir;
  const children: (DirNode | FileNode)[] = [];
  for (const child of dir.children) {
    if (!(child instanceof DirNode)) {
      if (visible) children.push(child);
      continue;
    }
    const path = [...segments, child.name];
    if (withheld(path)) continue;
    if (visible || leadsToVisible(view, path)) children.push(pruned(child, path, view, withheld));
  }
  return new DirNode(dir.name, children, dir.real, dir.skill);
}

function countFiles(dir: DirNode): number {
  let count = 0;
  for (const child of dir.children) count += child instanceof FileNode ? 1 : countFiles(child);
  return count;
}

/** A view's prefix under which no skill is served, and the served path it was likely meant to be. */
export interface UnmatchedPrefix {
  /** The view's name (a token's or claim entry's name; never the token). */
  readonly view: string;
  /** The prefix as written, `/`-joined. */
  readonly prefix: string;
  /** The served path of as many segments that is closest in spelling (at most 2 edits), if any. */
  readonly nearest?: string;
}

/**
 * The prefixes of `views` under which `snapshot` serves no skill: a mistyped prefix (`acme/biling`) gives its team an
 * empty catalog without any error. `"*"` (`[]`) always matches.
 *
 * @returns one entry per view and unmatched prefix, in the order given.
 */
export function unmatchedPrefixes(snapshot: Snapshot, views: readonly Visibility[]): UnmatchedPrefix[] {
  const found: UnmatchedPrefix[] = [];
  for (const view of views)
    for (const prefix of view.prefixes) {
      if (snapshot.ordered.some((skill) => startsWith(skill.segments, prefix))) continue;
      const written = prefix.join('/');
      const served = new Set(
        snapshot.ordered.flatMap((skill) =>
          skill.segments.length >= prefix.length ? [skill.segments.slice(0, prefix.length).join('/')] : [],
        ),
      );
      const [nearest] = [...served]
        .map((path) => ({ path, distance: editDistance(written, path, 3) }))
        .filter(({ distance }) => distance < 3)
        .sort((x, y) => x.distance - y.distance || (x.path < y.path ? -1 : 1))
        .map(({ path }) => path);
      found.push({ view: view.name, prefix: written, ...(nearest === undefined ? {} : { nearest }) });
    }
  return found;
}
