/**
 * What changed between two snapshots, as hosts need to hear it (pure). Notifications come from this diff, never from
 * raw filesystem events. Nodes that are the same object in both snapshots (everything outside the rebuilt regions,
 * and unchanged files and directories inside them) are skipped, so a diff costs O(what changed).
 */
import { sameDigest } from './record.js';
import { DirNode, FileNode, type Snapshot } from './types.js';
import { buildSkillUri, encodeSegment } from './uri.js';

/** The notifications one snapshot swap calls for. */
export interface SnapshotDiff {
  /**
   * `notifications/resources/list_changed` is due: a file, directory or skill URI appeared or disappeared, or a
   * skill's name or description changed.
   */
  readonly listChanged: boolean;
  /** URIs served before and after whose digest or size changed: each gets `notifications/resources/updated`. Sorted. */
  readonly updated: readonly string[];
  /**
   * File URIs served now and not before (created, or deleted and created again), sorted: each gets
   * `notifications/resources/updated` too, since a host may subscribe to a URI while it is not served. Empty against
   * the empty snapshot before the first build (generation 0): nobody has seen those files change.
   */
  readonly appeared: readonly string[];
  /** `SKILL.md` URIs of skills added, removed, or whose entry changed in any way. Sorted. */
  readonly skillsChanged: readonly string[];
}

/**
 * Compares two snapshots.
 *
 * @param previous the snapshot served until now.
 * @param next the snapshot served from now on.
 */
export function diffSnapshots(previous: Snapshot, next: Snapshot): SnapshotDiff {
  let listChanged = false;
  const skillsChanged: string[] = [];
  if (previous.ordered !== next.ordered || previous.skills !== next.skills) {
    for (const [uri, skill] of next.skills) {
      const before = previous.skills.get(uri);
      if (before === skill) continue;
      if (before === undefined) {
        listChanged = true;
        skillsChanged.push(uri);
        continue;
      }
      if (before.name !== skill.name || before.description !== skill.description) listChanged = true;
      if (before.json !== skill.json) skillsChanged.push(uri);
    }
    for (const uri of previous.skills.keys()) {
      if (!next.skills.has(uri)) {
        listChanged = true;
        skillsChanged.push(uri);
      }
    }
  }
  const updated: string[] = [];
  const appeared: string[] = [];
  if (compareTrees(previous.root, next.root, undefined, updated, previous.generation === 0 ? undefined : appeared))
    listChanged = true;
  return { listChanged, updated: updated.sort(), skillsChanged: skillsChanged.sort(), appeared: appeared.sort() };
}

/**
 * Walks two versions of a directory side by side.
 *
 * @param uri the directory's URI (`undefined` for the namespace root, whose children are URI authorities).
 * @param updated receives the URIs of files whose digest or size changed.
 * @param appeared receives the URIs of files in `after` only (`undefined`: not wanted).
 * @returns whether a file or directory appeared or disappeared.
 */
function compareTrees(
  before: DirNode,
  after: DirNode,
  uri: string | undefined,
  updated: string[],
  appeared: string[] | undefined,
): boolean {
  if (before === after) return false;
  let listChanged = false;
  const a = before.children;
  const b = after.children;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const left = a[i];
    const right = b[j];
    if (right === undefined || (left !== undefined && left.name < right.name)) {
      listChanged = true;
      i++;
      continue;
    }
    if (left === undefined || right.name < left.name) {
      listChanged = true;
      if (appeared !== undefined) filesOf(right, childUriOf(uri, right.name), appeared);
      j++;
      continue;
    }
    i++;
    j++;
    if (left === right) continue;
    const childUri = childUriOf(uri, left.name);
    if (left instanceof FileNode && right instanceof FileNode) {
      if (left.size !== right.size || !sameDigest(left, right)) updated.push(childUri);
    } else if (left instanceof DirNode && right instanceof DirNode) {
      if (compareTrees(left, right, childUri, updated, appeared)) listChanged = true;
    } else {
      listChanged = true;
      if (appeared !== undefined) filesOf(right, childUri, appeared);
    }
  }
  return listChanged;
}

/** The URI of the entry `name` of the directory at `uri` (`undefined`: the namespace root). */
function childUriOf(uri: string | undefined, name: string): string {
  return uri === undefined ? buildSkillUri([name]) : `${uri}/${encodeSegment(name)}`;
}

/** Appends the URI of `node` at `uri` (a file) or of every file under it (a directory) to `out`. */
function filesOf(node: DirNode | FileNode, uri: string, out: string[]): void {
  if (node instanceof FileNode) {
    out.push(uri);
    return;
  }
  for (const child of node.children) filesOf(child, childUriOf(uri, child.name), out);
}
