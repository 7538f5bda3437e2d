/**
 * Regions: the unit of rebuilding (docs/ARCHITECTURE.md, "Regions"). A region is a root-relative directory of one
 * root: an outermost skill directory (a change inside a skill rebuilds the outermost skill that contains it, which
 * covers the nearest skill and every enclosing one), or a directory outside every skill that may hold new skills, or
 * `''`, the whole root. Classification (`watch/classify.ts`), rebuilds and full builds all speak in regions. Pure.
 */

/** One region of one root. */
export interface Region {
  readonly rootIndex: number;
  /** Root-relative directory, `/`-separated; `''` for the whole root. */
  readonly rel: string;
}

/** Whether root-relative `rel` is the region directory `outer` or lies inside it. */
export function regionContains(outer: string, rel: string): boolean {
  return outer === '' || rel === outer || rel.startsWith(`${outer}/`);
}

/**
 * Drops duplicates and regions inside another region of the same root.
 *
 * @returns the outermost regions, by root, then by `rel` in code-unit order.
 */
export function outermostRegions(regions: readonly Region[]): Region[] {
  const byRoot = new Map<number, Set<string>>();
  for (const { rootIndex, rel } of regions) {
    let set = byRoot.get(rootIndex);
    if (set === undefined) byRoot.set(rootIndex, (set = new Set()));
    set.add(rel);
  }
  const result: Region[] = [];
  for (const rootIndex of [...byRoot.keys()].sort((a, b) => a - b)) {
    const rels = byRoot.get(rootIndex) as Set<string>;
    // A region is dropped when the root ('') or one of its ancestors is also a region: O(regions × depth).
    for (const rel of [...rels].sort()) {
      if (rel !== '' && (rels.has('') || ancestorsOf(rel).some((ancestor) => rels.has(ancestor)))) continue;
      result.push({ rootIndex, rel });
    }
  }
  return result;
}

/** The proper ancestors of a non-empty `rel` (`a/b/c` → `a`, `a/b`), not the root. */
function ancestorsOf(rel: string): string[] {
  const ancestors: string[] = [];
  for (let slash = rel.indexOf('/'); slash !== -1; slash = rel.indexOf('/', slash + 1))
    ancestors.push(rel.slice(0, slash));
  return ancestors;
}
