/**
 * The index builder: what it remembers of each root, and region rebuilds (docs/ARCHITECTURE.md, "Regions"). Roots →
 * region walks (`walk.ts`) → records (`records.ts`) → one immutable {@link Snapshot} (`assemble.ts`), for every root or
 * only for the regions whose contents changed. A region is rebuilt from disk; everything outside it is reused, and
 * inside it only files whose identity changed are read again.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { isPathWithin } from '../paths.js';
import { assembleSnapshot, type Placement, settleConflicts } from './assemble.js';
import { duplicateRoot, nestedRoot, rootEmpty, rootUnusable, unreadableDirectory } from './diagnostics.js';
import { describeIoError } from './digest.js';
import type { StoredDigests } from './digest-cache.js';
import type { ManifestFacts } from './manifest.js';
import { findChild } from './namespace.js';
import { MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import { buildRegionRecords, type BuiltRegion } from './records.js';
import { outermostRegions, type Region, regionContains } from './region.js';
import { createSlicer } from './slice.js';
import { EMPTY_SNAPSHOT } from './snapshot.js';
import { type Diagnostic, DirNode, type FileNode, type RootSpec, type Snapshot } from './types.js';
import { TransientWalkError, type WalkObserver, walkRegion } from './walk.js';

/** How the index treats the trees it walks, and who hears about them. */
export interface IndexOptions {
  /** Symlink policy (`--symlinks`); default `within`. */
  readonly symlinks?: SymlinkPolicy;
  /** Told about every directory walked and every region finished (the watcher). */
  readonly observer?: IndexObserver;
  /**
   * What the last start stored of a root's digests (the persistent digest cache), asked for once a root is resolved
   * afresh (its first build, or a root replaced): used for that walk only.
   *
   * @param real the root's real path.
   */
  readonly storedDigests?: (real: string) => StoredDigests | undefined;
  /**
   * `--withhold-executables`: skills bundling executable content are not published, each with an
   * `executables-withheld` diagnostic (docs/security.md, "Executable content").
   */
  readonly withholdExecutables?: boolean;
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
  #last: Snapshot = EMPTY_SNAPSHOT;
  /** The top skills placed in the last snapshot. */
  #placed: Placement = new Map();
  /** Real paths whose next walk must read them whatever their identity says (a read found them changed). */
  readonly #distrusted = new Set<string>();
  /** Regions abandoned on a transient failure since {@link IndexBuilder.takeRetries} was last called. */
  #retry: { region: Region; reason: string }[] = [];

  /**
   * @param roots configured roots in command-line order (earlier roots win conflicts).
   * @param options symlink policy, observer.
   */
  constructor(roots: readonly RootSpec[], options: IndexOptions = {}) {
    this.#roots = [...roots];
    this.#options = options;
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

  /**
   * Each usable root's real path, every file the index holds for it, root-relative, and the facts of each skill
   * directory's `SKILL.md` (what the persistent digest cache stores).
   */
  *roots(): Generator<{
    readonly real: string;
    readonly files: Iterable<{ rel: string; node: FileNode }>;
    readonly manifest: (dirRel: string) => ManifestFacts | undefined;
  }> {
    for (const [rootIndex, state] of this.#states.entries()) {
      if (state.real !== undefined)
        yield {
          real: state.real,
          files: this.#files(rootIndex, false),
          manifest: (dirRel) => regionAt(state.regions, dirRel)?.manifests.get(dirRel),
        };
    }
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
  files(rootIndex: number): Generator<{ rel: string; real: string; node: FileNode }> {
    return this.#files(rootIndex, true) as Generator<{ rel: string; real: string; node: FileNode }>;
  }

  /** {@link IndexBuilder.files}, each directory's files together; the real paths only when `withReal` (polling). */
  *#files(rootIndex: number, withReal: boolean): Generator<{ rel: string; real?: string; node: FileNode }> {
    const state = this.#states[rootIndex];
    if (state === undefined) return;
    for (const region of state.regions.values()) {
      const stack: { node: DirNode; rel: string; real: string }[] = [
        { node: region.node, rel: region.rel, real: withReal ? (region.node.real ?? '') : '' },
      ];
      for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
        for (const child of item.node.children) {
          const rel = item.rel === '' ? child.name : `${item.rel}/${child.name}`;
          const real = withReal ? (child.real ?? `${item.real}${path.sep}${child.name}`) : '';
          if (child instanceof DirNode) stack.push({ node: child, rel, real });
          else yield withReal ? { rel, real, node: child } : { rel, node: child };
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
          (linkedPath) => isPathWithin(target, linkedPath) || isPathWithin(linkedPath, target),
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
    const diagnostics = this.#states.flatMap((state) => state.diagnostics.map((item) => item.diagnostic));
    const roots = this.#states.map((state, index) => ({
      dir: (this.#roots[index] as RootSpec).dir,
      regions: state.regions,
    }));
    const placed = settleConflicts(roots, diagnostics);
    diagnostics.push(...this.#emptyRoots());
    this.#last = assembleSnapshot(this.#last, this.#placed, placed, diagnostics);
    this.#placed = placed;
    return this.#last;
  }

  /**
   * A `root-empty` warning for each usable root that holds no `SKILL.md` at all and has no diagnostic of its own (a
   * skill left out or shadowed, a link or folder skipped, already says why), naming the folders under a name starting
   * with `.` (never served) where skills are (`hiddenSkillFolders`). Computed afresh at each rebuild: a root that
   * gains a skill loses its warning.
   */
  #emptyRoots(): Diagnostic[] {
    const found: Diagnostic[] = [];
    this.#states.forEach((state, rootIndex) => {
      if (state.real === undefined || state.candidates.size > 0 || state.diagnostics.length > 0) return;
      found.push(rootEmpty((this.#roots[rootIndex] as RootSpec).dir, hiddenSkillFolders(state.real)));
    });
    return found;
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
      if (real !== other.real && isPathWithin(real, other.real))
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
          stored: fresh && rel === '' ? this.#options.storedDigests?.(state.real) : undefined,
          skillBase: state.base,
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
    const root = { rootIndex, spec, real: state.real, base: state.base };
    const note = (at: string, diagnostic: Diagnostic): void => void state.diagnostics.push({ rel: at, diagnostic });
    for (const walked of walk.regions) {
      for (const skillDir of walked.skillDirs) state.candidates.add(skillDir.rel);
      const built = await buildRegionRecords(
        root,
        walked,
        note,
        (dir) => previousFacts(removed, dir),
        this.#options.withholdExecutables === true,
      );
      state.regions.set(walked.rel, built);
      if (built.linkTargets.length > 0) state.linking.add(built);
      await slice();
    }
  }
}

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

/**
 * Builds a snapshot of every skill under `roots` in one go (no later incremental rebuilds).
 *
 * @param roots the configured roots, in command-line order (earlier roots win conflicts).
 * @param options symlink policy.
 */
export async function buildSnapshot(roots: readonly RootSpec[], options: IndexOptions = {}): Promise<Snapshot> {
  return new IndexBuilder(roots, options).buildAll();
}

/** The region of `regions` whose directory is `rel` or lies above it, if any. */
function regionAt(regions: ReadonlyMap<string, BuiltRegion>, rel: string): BuiltRegion | undefined {
  for (let at = rel; ; at = parentOf(at)) {
    const region = regions.get(at);
    if (region !== undefined || at === '') return region;
  }
}

/** The previous node at `rel`: in the removed region whose directory is `rel` or lies above it. */
function previousNode(removed: ReadonlyMap<string, BuiltRegion>, rel: string): DirNode | undefined {
  const region = regionAt(removed, rel);
  if (region === undefined) return undefined;
  let node: DirNode | undefined = region.node;
  const below = region.rel === '' ? rel : rel.slice(region.rel.length + 1);
  for (const name of below === '' ? [] : below.split('/')) {
    const child = findChild(node, name);
    node = child instanceof DirNode ? child : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** The facts of the `SKILL.md` at the skill directory `rel` in the removed regions, if any. */
function previousFacts(removed: ReadonlyMap<string, BuiltRegion>, rel: string): ManifestFacts | undefined {
  return regionAt(removed, rel)?.manifests.get(rel);
}

function isRegularFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function parentOf(rel: string): string {
  const slash = rel.lastIndexOf('/');
  return slash === -1 ? '' : rel.slice(0, slash);
}

/**
 * Folders below `real` whose names start with `.` (never served) that hold skills, with how many: each `.<name>/skills`
 * and `.<name>` whose child folders hold a `SKILL.md`. Reads at most two levels; an unreadable folder counts none.
 *
 * @returns root-relative paths (`.claude/skills`), sorted.
 */
export function hiddenSkillFolders(real: string): { rel: string; skills: number }[] {
  const skillsIn = (dir: string): number => {
    try {
      return readdirSync(dir, { withFileTypes: true }).filter(
        (entry) => entry.isDirectory() && isRegularFile(path.join(dir, entry.name, MANIFEST_NAME)),
      ).length;
    } catch {
      return 0;
    }
  };
  let dots: string[];
  try {
    dots = readdirSync(real, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name.startsWith('.') && entry.name !== '.git')
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
  const found: { rel: string; skills: number }[] = [];
  for (const dot of dots) {
    for (const rel of [path.join(dot, 'skills'), dot]) {
      const skills = skillsIn(path.join(real, rel));
      if (skills > 0) {
        found.push({ rel, skills });
        break;
      }
    }
  }
  return found;
}
