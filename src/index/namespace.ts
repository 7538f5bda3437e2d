/**
 * The served namespace as a persistent tree (pure): grouping directories above skills, whose leaves are the
 * directories of the *top* skills (published skills not inside another published skill). Placing or removing a skill
 * copies only the path from the namespace root to it, so an update costs O(depth × siblings), and every snapshot keeps
 * its own tree (docs/ARCHITECTURE.md, "Snapshots").
 * Implements SEP-2640 "URIs" (every directory of the namespace is a directory resource) and the lookups of
 * "resources/read" and "resources/directory/read".
 */
import path from 'node:path';

import { DirNode, type FileNode, type SkillRecord } from './types.js';

/**
 * The child of `node` called `name` (binary search: children are sorted by name).
 *
 * @returns the child, or `undefined`.
 */
export function findChild(node: DirNode | undefined, name: string): DirNode | FileNode | undefined {
  if (node === undefined) return undefined;
  const children = node.children;
  let low = 0;
  let high = children.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const candidate = children[mid] as DirNode | FileNode;
    if (candidate.name === name) return candidate;
    if (candidate.name < name) low = mid + 1;
    else high = mid - 1;
  }
  return undefined;
}

/** The empty namespace. */
export const EMPTY_NAMESPACE = new DirNode('', [], undefined, undefined);

function insertChild(children: readonly (DirNode | FileNode)[], child: DirNode | FileNode): (DirNode | FileNode)[] {
  const copy = [...children];
  let low = 0;
  let high = copy.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((copy[mid] as DirNode | FileNode).name < child.name) low = mid + 1;
    else high = mid;
  }
  if (copy[low]?.name === child.name) copy[low] = child;
  else copy.splice(low, 0, child);
  return copy;
}

/**
 * Places the directory of a top skill at its skill path.
 *
 * @param root the namespace before.
 * @param segments the skill path (its last segment is `node.name`).
 * @param node the skill's directory.
 * @returns the namespace after (`root` is unchanged).
 */
export function placeSkill(root: DirNode, segments: readonly string[], node: DirNode): DirNode {
  const place = (parent: DirNode, depth: number): DirNode => {
    if (depth === segments.length - 1)
      return new DirNode(parent.name, insertChild(parent.children, node), parent.real, parent.skill);
    const name = segments[depth] as string;
    const existing = findChild(parent, name);
    const group = existing instanceof DirNode ? existing : new DirNode(name, [], undefined, undefined);
    return new DirNode(parent.name, insertChild(parent.children, place(group, depth + 1)), parent.real, parent.skill);
  };
  return place(root, 0);
}

/**
 * Removes the top skill at `segments`, and the grouping directories it leaves empty.
 *
 * @returns the namespace after (`root` itself when nothing is there).
 */
export function removeSkill(root: DirNode, segments: readonly string[]): DirNode {
  const remove = (parent: DirNode, depth: number): DirNode | undefined => {
    const name = segments[depth] as string;
    const existing = findChild(parent, name);
    if (!(existing instanceof DirNode)) return parent;
    const replacement = depth === segments.length - 1 ? undefined : remove(existing, depth + 1);
    if (replacement === existing) return parent;
    const children = parent.children.filter((child) => child !== existing);
    if (replacement !== undefined)
      return new DirNode(parent.name, insertChild(children, replacement), parent.real, parent.skill);
    // A grouping directory left empty disappears with its last skill.
    return children.length === 0 && parent !== root
      ? undefined
      : new DirNode(parent.name, children, parent.real, parent.skill);
  };
  return remove(root, 0) ?? EMPTY_NAMESPACE;
}

/**
 * Builds a namespace from scratch.
 *
 * @param tops the top skills (no one inside another).
 */
export function buildNamespace(tops: readonly SkillRecord[]): DirNode {
  interface Group {
    readonly name: string;
    readonly groups: Map<string, Group>;
    readonly leaves: DirNode[];
  }
  const root: Group = { name: '', groups: new Map(), leaves: [] };
  for (const top of tops) {
    let group = root;
    for (const segment of top.segments.slice(0, -1)) {
      let next = group.groups.get(segment);
      if (next === undefined) group.groups.set(segment, (next = { name: segment, groups: new Map(), leaves: [] }));
      group = next;
    }
    group.leaves.push(top.node);
  }
  const toNode = (group: Group): DirNode => {
    const children: (DirNode | FileNode)[] = [...group.leaves, ...[...group.groups.values()].map(toNode)];
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return new DirNode(group.name, children, undefined, undefined);
  };
  return toNode(root);
}

/** What a skill path plus file path leads to in the namespace. */
export interface Located {
  readonly node: DirNode | FileNode;
  /** Absolute real host path (`undefined` for grouping directories, which exist only in the namespace). */
  readonly real: string | undefined;
  /** The top skill it lies in (or is), if any. */
  readonly top: SkillRecord | undefined;
  /** The nearest skill it lies in (or is): the top one or a nested one. */
  readonly skill: SkillRecord | undefined;
  /** Its root-relative path inside the top skill's root (for re-indexing), when it lies in one. */
  readonly rel: string | undefined;
}

/**
 * Finds the node at `segments` (decoded skill-path and file-path segments).
 *
 * @returns the node with its real path and enclosing skills, or `undefined` when nothing is served there.
 */
export function locate(root: DirNode, segments: readonly string[]): Located | undefined {
  let node: DirNode | FileNode = root;
  let real: string | undefined;
  let top: SkillRecord | undefined;
  let skill: SkillRecord | undefined;
  let rel: string | undefined;
  for (const segment of segments) {
    if (!(node instanceof DirNode)) return undefined;
    const child: DirNode | FileNode | undefined = findChild(node, segment);
    if (child === undefined) return undefined;
    if (child.real !== undefined) real = child.real;
    else if (real !== undefined) real = real.endsWith(path.sep) ? real + segment : real + path.sep + segment;
    if (rel !== undefined) rel = rel === '' ? segment : `${rel}/${segment}`;
    if (child instanceof DirNode && child.skill !== undefined) {
      if (top === undefined) {
        top = child.skill;
        rel = top.rel;
      }
      skill = child.skill;
    }
    node = child;
  }
  return { node, real, top, skill, rel };
}
