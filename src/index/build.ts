/**
 * The index builder: roots → region walks → records → one immutable {@link Snapshot}, for every root or only for the
 * regions whose contents changed (docs/ARCHITECTURE.md, "Regions" and "Snapshots"). A region is rebuilt from disk;
 * everything outside it is reused, and inside it only files whose identity changed are read again.
 *
 * Implements SEP-2640 "Skills and nesting" and "The entry"; the policies of docs/ARCHITECTURE.md.
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import {
  compareDiagnostics,
  duplicateRoot,
  hiddenCharacters,
  nestedRoot,
  rootUnusable,
  skillPathConflict,
  unreadableDirectory,
} from './diagnostics.js';
import { describeIoError } from './digest.js';
import { buildRecord, limitProblems, problemsDiagnostic } from './entry.js';
import { readFrontmatter } from './frontmatter.js';
import { InProcessHasher, type LargeFileHasher } from './hash-pool.js';
import { findHiddenCharacters } from './hygiene.js';
import { decodeLossless } from './mime.js';
import { buildNamespace, findChild, placeSkill, removeSkill } from './namespace.js';
import { MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import { outermostRegions, type Region, regionContains } from './region.js';
import { createSlicer } from './slice.js';
import { EMPTY_SNAPSHOT } from './snapshot.js';
import { type Diagnostic, DirNode, type FileNode, type RootSpec, type SkillRecord, type Snapshot } from './types.js';
import { compareUris } from './uri.js';
import { TransientWalkError, type WalkedRegion, type WalkObserver, walkRegion } from './walk.js';

/** How the index treats the trees it walks, and who hears about them. */
export interface IndexOptions {
  /** Symlink policy (`--symlinks`); default `within`. */
  readonly symlinks?: SymlinkPolicy;
  /** Hashes large files (default: on this thread). */
  readonly hasher?: LargeFileHasher;
  /** Told about every directory walked and every region finished (the watcher). */
  readonly observer?: IndexObserver;
}

/** What the watcher needs to hear from the builder. */
export interface IndexObserver extends WalkObserver {
  /** A region of a root is about to be walked. */
  regionStarted(rootIndex: number, rel: string): void;
  /** It was walked: directories under `rel` not announced since {@link regionStarted} are gone or ignored now. */
  regionFinished(rootIndex: number, rel: string): void;
  /** A root was resolved to its real path (`undefined`: it cannot be used now). */
  rootResolved(rootIndex: number, real: string | undefined): void;
}

/** A root-relative diagnostic key: `'/'` for diagnostics about the root as a whole (kept by region rebuilds). */
const ROOT_LEVEL = '/';

/** An outermost skill directory of one root, as built. */
interface BuiltRegion {
  readonly rel: string;
  readonly node: DirNode;
  /** Valid skills in it, outermost first. */
  readonly records: readonly SkillRecord[];
  /** Real paths reached through symlinks inside it (see {@link IndexBuilder.regionsLinkedTo}). */
  readonly linkTargets: readonly string[];
}

/** What the builder remembers of one root between rebuilds. */
interface RootState {
  real: string | undefined;
  /** Skill-path segments of the root's own directory: the prefix, plus the folder name when the root is a skill. */
  base: readonly string[];
  /** Outermost skill directory (root-relative) → its region. */
  readonly regions: Map<string, BuiltRegion>;
  /** Every directory holding a `SKILL.md`, valid or not: what makes a change "inside a skill". */
  readonly candidates: Set<string>;
  /** The regions that reach something through a symlink (few: scanned for every event). */
  readonly linking: Set<BuiltRegion>;
  /** Diagnostics with the root-relative path they concern. */
  diagnostics: { rel: string; diagnostic: Diagnostic }[];
}

/**
 * Builds and incrementally rebuilds the snapshot of a fixed list of roots. Not re-entrant: callers serialize calls
 * (the live index does).
 */
export class IndexBuilder {
  readonly #roots: RootSpec[];
  readonly #states: RootState[];
  readonly #options: IndexOptions;
  readonly #hasher: LargeFileHasher;
  #last: Snapshot = EMPTY_SNAPSHOT;
  /** The top skills placed in the last snapshot, each with every record published under it (itself included). */
  #placed = new Map<SkillRecord, readonly SkillRecord[]>();
  /** Real paths whose next walk must read them whatever their identity says (a read found them changed). */
  readonly #distrusted = new Set<string>();
  /** Regions abandoned on a transient failure since {@link IndexBuilder.takeRetries} was last called. */
  #retry: { region: Region; reason: string }[] = [];

  /**
   * @param roots configured roots in command-line order (earlier roots win conflicts).
   * @param options symlink policy, hasher, observer.
   */
  constructor(roots: readonly RootSpec[], options: IndexOptions = {}) {
    this.#roots = [...roots];
    this.#options = options;
    this.#hasher = options.hasher ?? new InProcessHasher();
    this.#states = roots.map((spec) => ({
      real: undefined,
      base: spec.prefix,
      regions: new Map(),
      candidates: new Set(),
      linking: new Set(),
      diagnostics: [],
    }));
  }

  /**
   * Serves root `rootIndex` from another directory (a git root's new commit) from its next rebuild of `''` on.
   *
   * @param spec the new directory, prefix and `_meta`.
   */
  setRoot(rootIndex: number, spec: RootSpec): void {
    if (rootIndex >= 0 && rootIndex < this.#roots.length) this.#roots[rootIndex] = spec;
  }

  /** Directories (root-relative) of root `rootIndex` that hold a `SKILL.md`, valid or not. */
  candidates(rootIndex: number): ReadonlySet<string> {
    return this.#states[rootIndex]?.candidates ?? new Set();
  }

  /**
   * The regions whose last rebuild met a transient failure (out of file descriptors) and kept what was served: to be
   * rebuilt again later.
   */
  takeRetries(): { region: Region; reason: string }[] {
    const retries = this.#retry;
    this.#retry = [];
    return retries;
  }

  /** Makes the next rebuild hash the file at `realPath` from its bytes, whatever its metadata says. */
  distrust(realPath: string): void {
    this.#distrusted.add(realPath);
  }

  /**
   * Every file the index holds for root `rootIndex` (published or not), with its root-relative and real path: what
   * polling compares with the disk.
   */
  *files(rootIndex: number): Generator<{ rel: string; real: string; node: FileNode }> {
    const state = this.#states[rootIndex];
    if (state === undefined) return;
    for (const region of state.regions.values()) {
      const stack: { node: DirNode; rel: string; real: string }[] = [
        { node: region.node, rel: region.rel, real: region.node.real ?? '' },
      ];
      for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
        for (const child of item.node.children) {
          const rel = item.rel === '' ? child.name : `${item.rel}/${child.name}`;
          const real = child.real ?? `${item.real}${path.sep}${child.name}`;
          if (child instanceof DirNode) stack.push({ node: child, rel, real });
          else yield { rel, real, node: child };
        }
      }
    }
  }

  /**
   * Regions that reach the path `rel` of root `rootIndex` through a symlink (in any root), so that a change there is
   * applied to every skill that serves it under another name.
   *
   * @returns regions (root index and root-relative directory); empty when nothing links to the path.
   */
  regionsLinkedTo(rootIndex: number, rel: string): Region[] {
    const real = this.#states[rootIndex]?.real;
    if (real === undefined) return [];
    const target = rel === '' ? real : path.join(real, ...rel.split('/'));
    const found: Region[] = [];
    for (const [index, state] of this.#states.entries()) {
      for (const region of state.linking) {
        const linked = region.linkTargets.some(
          (linkedPath) =>
            target === linkedPath ||
            target.startsWith(`${linkedPath}${path.sep}`) ||
            linkedPath.startsWith(`${target}${path.sep}`),
        );
        if (linked) found.push({ rootIndex: index, rel: region.rel });
      }
    }
    return found;
  }

  /** Rebuilds every root from scratch (unchanged files are still not read again). */
  buildAll(): Promise<Snapshot> {
    return this.rebuild(this.#roots.map((_, rootIndex) => ({ rootIndex, rel: '' })));
  }

  /**
   * Rebuilds the given regions and returns the new snapshot.
   *
   * @param regions regions to rebuild (`rel: ''` = the whole root, resolved again). A region must not lie strictly
   *   inside a skill directory: classification gives the outermost enclosing one (`watch/classify.ts`).
   * @returns the new snapshot; problems on disk become diagnostics, never exceptions.
   */
  async rebuild(regions: readonly Region[]): Promise<Snapshot> {
    const todo = outermostRegions(this.#options.observer === undefined ? regions : burstsAsRoots(regions));
    // Roots rebuilt whole are resolved first, so links from one root into another are judged against every root.
    const fresh = new Set<number>();
    for (const region of todo) {
      if (region.rel !== '') continue;
      if (this.#resolveRoot(region.rootIndex)) fresh.add(region.rootIndex);
    }
    for (const region of todo) this.#checkOverlap(region.rootIndex);
    for (const region of todo) await this.#rebuildRegion(region, fresh.has(region.rootIndex));
    this.#distrusted.clear();
    return this.#assemble();
  }

  /**
   * Resolves a root (its real path, and whether it is itself a skill).
   *
   * @returns whether its real path or base changed (its previous nodes must not be reused then).
   */
  #resolveRoot(rootIndex: number): boolean {
    const spec = this.#roots[rootIndex] as RootSpec;
    const state = this.#states[rootIndex] as RootState;
    const before = { real: state.real, base: state.base.join('/') };
    state.diagnostics = state.diagnostics.filter((item) => item.rel !== ROOT_LEVEL);
    try {
      const real = realpathSync(spec.dir);
      if (!statSync(real).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      state.real = real;
      state.base = isRegularFile(path.join(real, MANIFEST_NAME))
        ? [...spec.prefix, path.basename(spec.dir)]
        : spec.prefix;
    } catch (error) {
      state.real = undefined;
      state.diagnostics.push({
        rel: ROOT_LEVEL,
        diagnostic: rootUnusable(spec.dir, (error as NodeJS.ErrnoException).code ?? 'error'),
      });
    }
    this.#options.observer?.rootResolved(rootIndex, state.real);
    return state.real !== before.real || state.base.join('/') !== before.base;
  }

  /**
   * A root listed twice (same real path and prefix) is served once: the later copy is dropped with a warning. A root
   * inside another one (without a prefix that sets it apart) is served, and its skills appear twice under two
   * paths; that gets a warning too.
   */
  #checkOverlap(rootIndex: number): void {
    const spec = this.#roots[rootIndex] as RootSpec;
    const state = this.#states[rootIndex] as RootState;
    const real = state.real;
    if (real === undefined) return;
    for (let otherIndex = 0; otherIndex < rootIndex; otherIndex++) {
      const other = this.#states[otherIndex] as RootState;
      const otherSpec = this.#roots[otherIndex] as RootSpec;
      if (other.real === undefined) continue;
      const samePrefix = otherSpec.prefix.join('/') === spec.prefix.join('/');
      if (other.real === real && samePrefix) {
        state.real = undefined;
        this.#replaceRootDiagnostic(state, 'duplicate-root', duplicateRoot(spec.dir, otherSpec.dir));
        return;
      }
      if (real.startsWith(`${other.real}${path.sep}`))
        this.#replaceRootDiagnostic(state, 'nested-root', nestedRoot(spec.dir, otherSpec.dir));
    }
  }

  #replaceRootDiagnostic(state: RootState, rule: string, diagnostic: Diagnostic): void {
    state.diagnostics = state.diagnostics.filter((item) => item.rel !== ROOT_LEVEL || item.diagnostic.rule !== rule);
    state.diagnostics.push({ rel: ROOT_LEVEL, diagnostic });
  }

  async #rebuildRegion(region: Region, fresh: boolean): Promise<void> {
    const { rootIndex, rel } = region;
    const spec = this.#roots[rootIndex] as RootSpec;
    const state = this.#states[rootIndex] as RootState;
    const removed = new Map<string, BuiltRegion>();
    for (const [key, built] of state.regions) if (regionContains(rel, key)) removed.set(key, built);
    const withdraw = (): void => {
      for (const [key, built] of removed) {
        state.regions.delete(key);
        state.linking.delete(built);
      }
      for (const candidate of [...state.candidates])
        if (regionContains(rel, candidate)) state.candidates.delete(candidate);
      state.diagnostics = state.diagnostics.filter((item) => item.rel === ROOT_LEVEL || !regionContains(rel, item.rel));
    };
    const observer = this.#options.observer;
    if (state.real === undefined) {
      withdraw();
      if (rel === '') observer?.regionFinished(rootIndex, '');
      return;
    }
    observer?.regionStarted(rootIndex, rel);
    let walk;
    let walkError: string | undefined;
    try {
      walk = await walkRegion(
        {
          rootIndex,
          rootDir: spec.dir,
          allowedRealRoots: this.#states.flatMap((other) => (other.real === undefined ? [] : [other.real])),
          symlinks: this.#options.symlinks ?? 'within',
          previous: fresh ? () => undefined : (dir) => previousNode(removed, dir),
          distrusted: this.#distrusted,
          hasher: this.#hasher,
          observer,
        },
        rel,
      );
    } catch (error) {
      // Out of file descriptors: what was served stays served, and the region is tried again later.
      if (error instanceof TransientWalkError) {
        this.#retry.push({ region, reason: error.message });
        return;
      }
      const code = (error as NodeJS.ErrnoException | null)?.code;
      // Not the disk's answer but a bug: nothing is withdrawn on its account (the caller logs rebuild-failed).
      if (typeof code !== 'string') throw error;
      walk = undefined; // the region is gone (or cannot be reached): everything that was in it is withdrawn
      walkError = code === 'ENOENT' || code === 'ENOTDIR' ? undefined : describeIoError(error);
    }
    observer?.regionFinished(rootIndex, rel);
    withdraw();
    if (walk === undefined) {
      // Gone is a change; unreachable (EACCES, EIO, …) is a problem to report, as a full walk would.
      if (walkError !== undefined) {
        const abs = rel === '' ? spec.dir : path.join(spec.dir, ...rel.split('/'));
        state.diagnostics.push({ rel, diagnostic: unreadableDirectory(abs, walkError) });
      }
      return;
    }
    state.diagnostics.push(...walk.diagnostics);
    const slice = createSlicer();
    for (const walked of walk.regions) {
      const built = await this.#buildRecords(rootIndex, spec, state, walked);
      state.regions.set(walked.rel, built);
      if (built.linkTargets.length > 0) state.linking.add(built);
      await slice();
    }
  }

  /** The records of one walked region (reusing the previous record of every unchanged skill directory). */
  async #buildRecords(rootIndex: number, spec: RootSpec, state: RootState, walked: WalkedRegion): Promise<BuiltRegion> {
    const records: SkillRecord[] = [];
    for (const skillDir of walked.skillDirs) {
      state.candidates.add(skillDir.rel);
      const segments = [...state.base, ...(skillDir.rel === '' ? [] : skillDir.rel.split('/'))];
      const manifestPath =
        skillDir.rel === ''
          ? path.join(spec.dir, MANIFEST_NAME)
          : path.join(spec.dir, ...skillDir.rel.split('/'), MANIFEST_NAME);
      const note = (diagnostic: Diagnostic): void => void state.diagnostics.push({ rel: skillDir.rel, diagnostic });
      const bytes = skillDir.manifestBytes;
      if (bytes === undefined || segments.length === 0) continue; // unreadable SKILL.md: already reported
      const text = decodeLossless(bytes);
      const hidden = text === undefined ? undefined : findHiddenCharacters(text);
      if (hidden !== undefined)
        note(hiddenCharacters(manifestPath, hidden.count, hidden.kinds, hidden.line, hidden.column));
      const reusable = skillDir.previous?.skill;
      if (skillDir.node === skillDir.previous && reusable !== undefined && reusable.rootIndex === rootIndex) {
        records.push(reusable);
        continue;
      }
      const frontmatter = await readFrontmatter(segments, bytes);
      if ('problems' in frontmatter) {
        // Every rule the skill breaks in one diagnostic: its frontmatter's, and the limits'.
        note(problemsDiagnostic(manifestPath, [...frontmatter.problems, ...limitProblems(skillDir.node)]));
        continue;
      }
      const node = skillDir.node === skillDir.previous ? cloneNode(skillDir.node) : skillDir.node;
      const record = buildRecord({
        segments,
        node,
        dirReal: skillDir.real,
        rootIndex,
        rel: skillDir.rel,
        manifestPath,
        frontmatter,
        meta: spec.meta,
      });
      if ('severity' in record) {
        note(record);
        continue;
      }
      (node as { skill: SkillRecord | undefined }).skill = record;
      records.push(record);
    }
    const expectedReal = walked.rel === '' ? state.real : path.join(state.real ?? '', ...walked.rel.split('/'));
    const linkTargets =
      walked.node.real !== expectedReal && walked.node.real !== undefined
        ? [walked.node.real, ...walked.linkTargets]
        : walked.linkTargets;
    return { rel: walked.rel, node: walked.node, records, linkTargets };
  }

  /** Settles conflicts between roots, then patches the previous snapshot with the skills placed or withdrawn. */
  #assemble(): Snapshot {
    const diagnostics = this.#states.flatMap((state) => state.diagnostics.map((item) => item.diagnostic));
    const placed = this.#settle(diagnostics);
    const previous = this.#last;
    const removedTops = [...this.#placed.keys()].filter((top) => !placed.has(top));
    const addedTops = [...placed.keys()].filter((top) => !this.#placed.has(top));
    const removedRecords = removedTops.flatMap((top) => this.#placed.get(top) ?? []);
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
    this.#placed = placed;
    this.#last = Object.freeze({
      skills,
      ordered,
      root,
      fileCount,
      diagnostics: Object.freeze(diagnostics.sort(compareDiagnostics)),
      generation: previous.generation + 1,
    });
    return this.#last;
  }

  /**
   * The top skills to place: in each region, valid skills not inside another placed one; across roots, the first
   * root wins: a skill whose path equals, encloses or lies inside a skill of an earlier root is left out with a
   * diagnostic naming both roots (its nested skills are then considered on their own).
   *
   * @param diagnostics conflict diagnostics are appended.
   * @returns each top skill with every record published under it (itself included).
   */
  #settle(diagnostics: Diagnostic[]): Map<SkillRecord, readonly SkillRecord[]> {
    const placed = new Map<SkillRecord, readonly SkillRecord[]>();
    const multiRoot = this.#states.filter((state) => state.regions.size > 0).length > 1;
    const claimed = new Map<string, SkillRecord>();
    const prefixes = new Map<string, SkillRecord>();
    for (const [rootIndex, state] of this.#states.entries()) {
      const accepted: SkillRecord[] = [];
      for (const region of state.regions.values()) {
        const tops: SkillRecord[] = [];
        for (const record of region.records) {
          if (tops.some((top) => isInside(record, top))) continue;
          const winner = multiRoot ? conflictWith(record, claimed, prefixes) : undefined;
          if (winner !== undefined) {
            const rootDir = (this.#roots[rootIndex] as RootSpec).dir;
            const winnerRoot = (this.#roots[winner.rootIndex] as RootSpec).dir;
            const dir = path.join(rootDir, ...splitRel(record.rel));
            diagnostics.push(
              skillPathConflict(dir, record.segments.join('/'), rootDir, winner.segments.join('/'), winnerRoot),
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
}

/**
 * Builds a snapshot of every skill under `roots` in one go (no later incremental rebuilds).
 *
 * @param roots the configured roots, in command-line order (earlier roots win conflicts).
 * @param options symlink policy.
 */
/**
 * When watching, above this many regions of one root in one rebuild the root is rebuilt whole instead: each region
 * pays a pass over the root's watches (`TreeWatcher.regionFinished`) and indexed state, so a burst (a `git pull`
 * touching hundreds of skills) costs more region by region than one walk that reuses every unchanged file's
 * digest. At 10,000 skills, watching: about 5 ms per region (500 regions 2.4 s) against about 1 s for the whole
 * root. Without a watcher a region costs about 0.7 ms (500 regions 342 ms, 1,000 629 ms, the root 846 ms), so
 * regions are always rebuilt one by one there.
 */
export const REGION_BURST_LIMIT = 200;

/** `regions`, with every root that has more than {@link REGION_BURST_LIMIT} of them replaced by the root itself. */
function burstsAsRoots(regions: readonly Region[]): readonly Region[] {
  const counts = new Map<number, number>();
  for (const { rootIndex } of regions) counts.set(rootIndex, (counts.get(rootIndex) ?? 0) + 1);
  const burst = [...counts].filter(([, count]) => count > REGION_BURST_LIMIT).map(([rootIndex]) => rootIndex);
  if (burst.length === 0) return regions;
  return [
    ...regions.filter((region) => !burst.includes(region.rootIndex)),
    ...burst.map((rootIndex) => ({ rootIndex, rel: '' })),
  ];
}

export async function buildSnapshot(roots: readonly RootSpec[], options: IndexOptions = {}): Promise<Snapshot> {
  return new IndexBuilder(roots, options).buildAll();
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

/** The previous node at `rel`: in the removed region whose directory is `rel` or lies above it. */
function previousNode(removed: ReadonlyMap<string, BuiltRegion>, rel: string): DirNode | undefined {
  for (let at = rel; ; at = parentOf(at)) {
    const region = removed.get(at);
    if (region !== undefined) {
      let node: DirNode | undefined = region.node;
      const below = at === '' ? rel : rel.slice(at.length + 1);
      for (const name of below === '' ? [] : below.split('/')) {
        const child = findChild(node, name);
        node = child instanceof DirNode ? child : undefined;
        if (node === undefined) return undefined;
      }
      return node;
    }
    if (at === '') return undefined;
  }
}

/** A fresh copy of a published node (so that assigning its skill never changes what an older snapshot holds). */
function cloneNode(node: DirNode): DirNode {
  return new DirNode(node.name, node.children, node.real, undefined);
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

function isRegularFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function splitRel(rel: string): string[] {
  return rel === '' ? [] : rel.split('/');
}

function parentOf(rel: string): string {
  const slash = rel.lastIndexOf('/');
  return slash === -1 ? '' : rel.slice(0, slash);
}
