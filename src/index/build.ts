/**
 * The index builder: roots → walk → hash → entries → one immutable {@link Snapshot}, either for every root or
 * incrementally for *regions* (root-relative directories) whose contents changed. A region is rebuilt from disk;
 * everything outside it is reused, and inside it only files whose identity (device, inode, size, mtime, ctime)
 * changed are hashed again.
 *
 * Implements SEP-2640 "Skills and nesting", "The entry"; DESIGN §4 "Data flow", §5 "Policies".
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { SnapshotAssembler, type PublishedSkill } from './assemble.js';
import { DigestCache } from './digest-cache.js';
import { MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import { buildRegion } from './region.js';
import type { Diagnostic, RootSpec, Snapshot } from './types.js';
import { warning } from './walk.js';

/** The `rel` of diagnostics about a root as a whole (set when the root is resolved, kept by region rebuilds). */
const ROOT_LEVEL = '/';

/** How the index treats the trees it walks. */
export interface IndexOptions {
  /** Symlink policy (`--symlinks`); default `within`. */
  readonly symlinks?: SymlinkPolicy;
}

/** One usable root: where it really is and which segments its directories map to. */
interface ResolvedRoot {
  readonly real: string;
  /** Segments prepended to every root-relative path: the prefix, plus the folder name when the root is a skill. */
  readonly base: readonly string[];
}

/** What the builder remembers of one root between rebuilds. */
interface RootState {
  resolved: ResolvedRoot | undefined;
  /** Skill directory (root-relative) → published skill. */
  readonly skills: Map<string, PublishedSkill>;
  /** Every directory holding a `SKILL.md`, valid or not: what makes a change "inside a skill". */
  readonly candidates: Set<string>;
  /** Diagnostics with the root-relative path they concern. */
  diagnostics: { rel: string; diagnostic: Diagnostic }[];
  /**
   * Real paths reached through a symlink inside each region (region → targets): a change at such a target, which
   * the watcher reports at the target's own path, must rebuild the region that links to it.
   */
  readonly linkTargets: Map<string, string[]>;
}

/**
 * Builds and incrementally rebuilds the snapshot of a fixed list of roots. Not re-entrant: callers serialize
 * calls (the live index does).
 */
export class IndexBuilder {
  readonly #roots: readonly RootSpec[];
  readonly #states: RootState[];
  readonly #cache = new DigestCache();
  readonly #assembler = new SnapshotAssembler();
  readonly #options: IndexOptions;
  #generation: number;

  /**
   * @param roots configured roots in command-line order (earlier roots win conflicts).
   * @param generation the generation number of the last snapshot already built (0 for none).
   * @param options symlink policy.
   */
  constructor(roots: readonly RootSpec[], generation = 0, options: IndexOptions = {}) {
    this.#roots = roots;
    this.#generation = generation;
    this.#options = options;
    this.#states = roots.map(() => ({ resolved: undefined, skills: new Map(), candidates: new Set(), diagnostics: [], linkTargets: new Map() }));
  }

  /** The configured roots. */
  get roots(): readonly RootSpec[] {
    return this.#roots;
  }

  /** Makes the next rebuild hash the file at `realPath` from its bytes, whatever its metadata says. */
  forget(realPath: string): void {
    this.#cache.forget(realPath);
  }

  /**
   * Regions that reach the path `rel` of root `rootIndex` through a symlink (in any root), so that a change there is
   * applied to every skill that serves it under another name.
   *
   * @returns `[rootIndex, region]` pairs; empty when nothing links to the path or a directory above it.
   */
  regionsLinkedTo(rootIndex: number, rel: string): [number, string][] {
    const real = this.#states[rootIndex]?.resolved?.real;
    if (real === undefined) return [];
    const target = rel === '' ? real : path.join(real, ...rel.split('/'));
    const found: [number, string][] = [];
    for (const [index, state] of this.#states.entries()) {
      for (const [region, targets] of state.linkTargets) {
        if (targets.some((linked) => target === linked || target.startsWith(`${linked}${path.sep}`) || linked.startsWith(`${target}${path.sep}`))) {
          found.push([index, region]);
        }
      }
    }
    return found;
  }

  /** Directories (root-relative) of root `rootIndex` that hold a `SKILL.md`, valid or not. */
  candidates(rootIndex: number): ReadonlySet<string> {
    return this.#states[rootIndex]?.candidates ?? new Set();
  }

  /**
   * Rebuilds every root from scratch (the digest cache still saves re-hashing unchanged files).
   *
   * @returns the new snapshot.
   */
  async buildAll(): Promise<Snapshot> {
    return this.rebuild(new Map(this.#roots.map((_, index) => [index, [''] as const])));
  }

  /**
   * Rebuilds the given regions and returns the new snapshot.
   *
   * @param regions root index → root-relative directories to rebuild (`''` = the whole root, re-resolved).
   *   Regions must not lie strictly inside a skill directory (use the outermost enclosing skill: see `classify.ts`).
   * @returns the new snapshot; problems on disk become diagnostics, never exceptions.
   */
  async rebuild(regions: ReadonlyMap<number, readonly string[]>): Promise<Snapshot> {
    // Roots rebuilt whole are resolved first, so links from one root into another are judged against every root.
    for (const [rootIndex, rels] of regions) {
      const spec = this.#roots[rootIndex];
      const state = this.#states[rootIndex];
      if (spec !== undefined && state !== undefined && rels.includes('')) {
        await this.#resolveRoot(spec, state);
        this.#checkOverlap(rootIndex, spec, state);
      }
    }
    for (const [rootIndex, rels] of regions) {
      const spec = this.#roots[rootIndex];
      const state = this.#states[rootIndex];
      if (spec === undefined || state === undefined) continue;
      for (const rel of outermost(rels)) await this.#rebuildRegion(rootIndex, spec, state, rel);
    }
    const diagnostics = this.#states.flatMap((state) => state.diagnostics.map((item) => item.diagnostic));
    const published = this.#states.flatMap((state) => [...state.skills.values()]);
    this.#cache.prune(published);
    return this.#assembler.assemble(published, diagnostics, ++this.#generation);
  }

  async #resolveRoot(spec: RootSpec, state: RootState): Promise<void> {
    state.resolved = undefined;
    state.skills.clear();
    state.candidates.clear();
    state.diagnostics = [];
    try {
      const real = await fsp.realpath(spec.dir);
      if (!(await fsp.stat(real)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      const isSkill = await isRegularFile(path.join(real, MANIFEST_NAME));
      state.resolved = { real, base: isSkill ? [...spec.prefix, path.basename(spec.dir)] : spec.prefix };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      state.diagnostics.push({
        rel: ROOT_LEVEL,
        diagnostic: warning('root-unusable', spec.dir, `root cannot be read (${code === 'ENOENT' ? 'it does not exist' : code}); its skills are withdrawn`, 'restore the directory; skills-serve picks it up again when it reappears'),
      });
    }
  }

  /**
   * A root listed twice (same real path and prefix) is served once: the later copy is dropped with a warning. A root
   * inside another one (without a prefix that sets it apart) is served, and its skills appear twice under two
   * paths; that gets a warning too.
   */
  #checkOverlap(rootIndex: number, spec: RootSpec, state: RootState): void {
    const real = state.resolved?.real;
    if (real === undefined) return;
    for (const [otherIndex, other] of this.#states.entries()) {
      const otherReal = other.resolved?.real;
      const otherSpec = this.#roots[otherIndex];
      if (otherIndex === rootIndex || otherReal === undefined || otherSpec === undefined) continue;
      const samePrefix = otherSpec.prefix.join('/') === spec.prefix.join('/');
      if (otherReal === real && samePrefix && otherIndex < rootIndex) {
        state.resolved = undefined;
        state.diagnostics.push({ rel: ROOT_LEVEL, diagnostic: warning('duplicate-root', spec.dir, `root is the same folder as root ${otherSpec.dir}, listed earlier; it is served once`, 'list each folder once') });
        return;
      }
      if (otherIndex < rootIndex && real.startsWith(`${otherReal}${path.sep}`)) {
        state.diagnostics.push({
          rel: ROOT_LEVEL,
          diagnostic: warning('nested-root', spec.dir, `root lies inside root ${otherSpec.dir}; the skills in it are served twice, under two skill paths`, 'list only the outer folder, or give the inner one a prefix (prefix=dir) on purpose'),
        });
      }
    }
  }

  async #rebuildRegion(rootIndex: number, spec: RootSpec, state: RootState, region: string): Promise<void> {
    const resolved = state.resolved;
    if (resolved === undefined) return;
    const within = (rel: string): boolean => region === '' || rel === region || rel.startsWith(`${region}/`);
    for (const rel of [...state.skills.keys()]) if (within(rel)) state.skills.delete(rel);
    for (const rel of [...state.candidates]) if (within(rel)) state.candidates.delete(rel);
    state.diagnostics = state.diagnostics.filter((item) => item.rel === ROOT_LEVEL || !within(item.rel));
    for (const rel of [...state.linkTargets.keys()]) if (within(rel)) state.linkTargets.delete(rel);

    const allowedRealRoots = this.#states.flatMap((other) => (other.resolved === undefined ? [] : [other.resolved.real]));
    const result = await buildRegion({
      rootIndex,
      spec,
      base: resolved.base,
      rootReal: resolved.real,
      region,
      allowedRealRoots,
      symlinks: this.#options.symlinks ?? 'within',
      cache: this.#cache,
    });
    if (result === undefined) return; // the region is gone: everything that was in it has been withdrawn above
    state.diagnostics.push(...result.diagnostics);
    if (result.linkTargets.length > 0) state.linkTargets.set(region, result.linkTargets);
    for (const dir of result.candidates) state.candidates.add(dir);
    for (const [dir, skill] of result.skills) state.skills.set(dir, skill);
  }
}

/**
 * Builds a snapshot of every skill under `roots` in one go (no later incremental rebuilds).
 *
 * @param roots the configured roots, in command-line order (earlier roots win conflicts).
 * @param generation the snapshot's build number.
 * @param options symlink policy.
 */
export async function buildSnapshot(roots: readonly RootSpec[], generation: number, options: IndexOptions = {}): Promise<Snapshot> {
  return new IndexBuilder(roots, generation - 1, options).buildAll();
}

/** Drops regions that lie inside another region of the list. */
function outermost(rels: readonly string[]): string[] {
  const sorted = [...new Set(rels)].sort();
  const kept: string[] = [];
  for (const rel of sorted) {
    if (!kept.some((outer) => outer === '' || rel.startsWith(`${outer}/`))) kept.push(rel);
  }
  return kept;
}

async function isRegularFile(file: string): Promise<boolean> {
  try {
    return (await fsp.stat(file)).isFile();
  } catch {
    return false;
  }
}

