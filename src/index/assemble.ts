/**
 * Snapshot assembly: the records of every root's regions → the skills to publish (conflicts between roots settled)
 * → the next immutable {@link Snapshot}, patched from the previous one so that a change costs O(changed)
 * (docs/ARCHITECTURE.md, "Snapshots"). Pure: it reads no disk.
 */
import path from 'node:path';

import { compareDiagnostics, skillPathConflict } from './diagnostics.js';
import { buildNamespace, placeSkill, removeSkill } from './namespace.js';
import type { BuiltRegion } from './records.js';
import type { Diagnostic, SkillRecord, Snapshot } from './types.js';
import { compareUris } from './uri.js';

/** Each top skill placed in a snapshot, with every record published under it (itself included). */
export type Placement = ReadonlyMap<SkillRecord, readonly SkillRecord[]>;

/** One root's regions, in command-line order. */
export interface RootRegions {
  /** The root's directory as configured (named in conflict diagnostics). */
  readonly dir: string;
  /** Its outermost skill regions, by root-relative directory. */
  readonly regions: ReadonlyMap<string, BuiltRegion>;
}

/**
 * The top skills to place: in each region, valid skills not inside another placed one; across roots, the first
 * root wins: a skill whose path equals, encloses or lies inside a skill of an earlier root is left out with a
 * diagnostic naming both roots (its nested skills are then considered on their own).
 *
 * @param roots every root's regions, in command-line order.
 * @param diagnostics conflict diagnostics are appended.
 */
export function settleConflicts(roots: readonly RootRegions[], diagnostics: Diagnostic[]): Placement {
  const placed = new Map<SkillRecord, readonly SkillRecord[]>();
  const multiRoot = roots.filter((root) => root.regions.size > 0).length > 1;
  if (!multiRoot) {
    // One root: a region's placement depends on that region alone, and an unchanged region is the same object, so
    // a rebuild computes only its rebuilt regions' (what a one-file edit at 10,000 skills allocated here fell from
    // megabytes to the map).
    for (const root of roots)
      for (const region of root.regions.values()) for (const [top, under] of regionTops(region)) placed.set(top, under);
    return placed;
  }
  const claimed = new Map<string, SkillRecord>();
  const prefixes = new Map<string, SkillRecord>();
  for (const root of roots) {
    const accepted: SkillRecord[] = [];
    for (const region of root.regions.values()) {
      const tops: SkillRecord[] = [];
      for (const record of region.records) {
        if (tops.some((top) => isInside(record, top))) continue;
        const winner = multiRoot ? conflictWith(record, claimed, prefixes) : undefined;
        if (winner !== undefined) {
          const winnerRoot = (roots[winner.rootIndex] as RootRegions).dir;
          const dir = path.join(root.dir, ...(record.rel === '' ? [] : record.rel.split('/')));
          diagnostics.push(
            skillPathConflict(dir, record.segments.join('/'), root.dir, winner.segments.join('/'), winnerRoot),
          );
          continue;
        }
        tops.push(record);
      }
      for (const top of tops) {
        const under = region.records.filter((record) => record === top || isInside(record, top));
        placed.set(top, under);
        if (multiRoot) accepted.push(...under);
      }
    }
    for (const record of accepted) {
      claimed.set(record.segments.join('/'), record);
      for (let depth = 1; depth < record.segments.length; depth++)
        prefixes.set(record.segments.slice(0, depth).join('/'), record);
    }
  }
  return placed;
}

/** Each region's top skills, with the records under each (itself first among them), by region object. */
const topsOf = new WeakMap<BuiltRegion, readonly (readonly [SkillRecord, readonly SkillRecord[]])[]>();

/** The top skills of a region of the only root, with the records published under each. */
function regionTops(region: BuiltRegion): readonly (readonly [SkillRecord, readonly SkillRecord[]])[] {
  let tops = topsOf.get(region);
  if (tops === undefined) {
    const found: SkillRecord[] = [];
    for (const record of region.records) if (!found.some((top) => isInside(record, top))) found.push(record);
    tops = found.map((top) => [top, region.records.filter((record) => record === top || isInside(record, top))]);
    topsOf.set(region, tops);
  }
  return tops;
}

/**
 * The next snapshot: `previous` patched with the top skills placed or withdrawn between `before` and `placed`.
 *
 * @param previous the snapshot published last (generation 0: none yet).
 * @param before what `previous` placed.
 * @param placed what the next snapshot places.
 * @param diagnostics every diagnostic of the next snapshot (sorted here).
 * @returns a frozen snapshot one generation on; unchanged skills keep their records and namespace nodes.
 */
export function assembleSnapshot(
  previous: Snapshot,
  before: Placement,
  placed: Placement,
  diagnostics: Diagnostic[],
): Snapshot {
  const removedTops = [...before.keys()].filter((top) => !placed.has(top));
  const addedTops = [...placed.keys()].filter((top) => !before.has(top));
  const removedRecords = removedTops.flatMap((top) => before.get(top) ?? []);
  const addedRecords = addedTops.flatMap((top) => placed.get(top) ?? []);
  let root = previous.root;
  if (removedTops.length + addedTops.length > 256 || previous.generation === 0) {
    root = buildNamespace([...placed.keys()]);
  } else {
    for (const top of removedTops) root = removeSkill(root, top.segments);
    for (const top of addedTops) root = placeSkill(root, top.segments, top.node);
  }
  let skills = previous.skills as Map<string, SkillRecord>;
  let ordered = previous.ordered;
  if (removedRecords.length + addedRecords.length > 0) {
    skills = new Map(previous.skills);
    for (const record of removedRecords) if (skills.get(record.uri) === record) skills.delete(record.uri);
    for (const record of addedRecords) skills.set(record.uri, record);
    ordered = patchOrdered(previous.ordered, skills, removedRecords, addedRecords);
  }
  let fileCount = previous.fileCount;
  for (const top of removedTops) fileCount -= top.fileCount;
  for (const top of addedTops) fileCount += top.fileCount;
  return Object.freeze({
    skills,
    ordered,
    root,
    fileCount,
    diagnostics: Object.freeze(diagnostics.sort(compareDiagnostics)),
    generation: previous.generation + 1,
  });
}

/**
 * The `skills/list` order after a change: a patched copy of `previous` for a few changes, a full sort otherwise.
 *
 * @param skills the skills after the change, by URI.
 */
function patchOrdered(
  previous: readonly SkillRecord[],
  skills: ReadonlyMap<string, SkillRecord>,
  removed: readonly SkillRecord[],
  added: readonly SkillRecord[],
): readonly SkillRecord[] {
  if (removed.length + added.length > 64)
    return Object.freeze([...skills.values()].sort((a, b) => compareUris(a.uri, b.uri)));
  const ordered = [...previous];
  const indexOf = (uri: string): number => {
    let low = 0;
    let high = ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareUris((ordered[mid] as SkillRecord).uri, uri) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  for (const record of removed) {
    const at = indexOf(record.uri);
    if (ordered[at] === record) ordered.splice(at, 1);
  }
  for (const record of added) {
    if (skills.get(record.uri) !== record) continue;
    const at = indexOf(record.uri);
    if (ordered[at]?.uri === record.uri) ordered[at] = record;
    else ordered.splice(at, 0, record);
  }
  return Object.freeze(ordered);
}

/** Whether `record`'s directory lies strictly inside `outer`'s (same root). */
function isInside(record: SkillRecord, outer: SkillRecord): boolean {
  return (
    record.rootIndex === outer.rootIndex &&
    record !== outer &&
    (outer.rel === '' || record.rel.startsWith(`${outer.rel}/`))
  );
}

/** The skill of an earlier root whose path equals, encloses or lies inside `record`'s, if any. */
function conflictWith(
  record: SkillRecord,
  claimed: ReadonlyMap<string, SkillRecord>,
  prefixes: ReadonlyMap<string, SkillRecord>,
): SkillRecord | undefined {
  const key = record.segments.join('/');
  const inside = prefixes.get(key);
  if (inside !== undefined) return inside;
  for (let depth = 1; depth <= record.segments.length; depth++) {
    const winner = claimed.get(record.segments.slice(0, depth).join('/'));
    if (winner !== undefined) return winner;
  }
  return undefined;
}
