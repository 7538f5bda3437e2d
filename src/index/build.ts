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
import { NotHashableError, type FileDigest } from './digest.js';
import { buildEntry } from './entry.js';
import { mimeTypeFor } from './mime.js';
import { findHiddenCharacters, looksLikeSecretName } from './hygiene.js';
import { IGNORE_FILE, MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import type { Diagnostic, FileRecord, RootSpec, Snapshot } from './types.js';
import { buildSkillUri } from './uri.js';
import { walkTree, warning } from './walk.js';

/** The `rel` of diagnostics about a root as a whole (set when the root is resolved, kept by region rebuilds). */
const ROOT_LEVEL = '/';

/** How many large files are read and hashed at once. */
export const HASH_CONCURRENCY = 4;
/** Longest stretch of synchronous work before the builder yields to the event loop (ms). */
export const SLICE_MS = 15;

/** How many entries (`SKILL.md` parses through the SDK, which awaits a WebCrypto digest each) are built at once. */
export const ENTRY_CONCURRENCY = 32;

/**
 * Returns a function to call between units of synchronous work: it yields to the event loop (letting pending I/O
 * callbacks and requests run) once {@link SLICE_MS} have passed since the last yield.
 */
function createSlicer(): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
}

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
    let walk;
    try {
      walk = await walkTree({ root: spec.dir, allowedRealRoots, symlinks: this.#options.symlinks ?? 'within' }, region);
    } catch {
      return; // the region is gone: everything that was in it has been withdrawn above
    }
    const note = (diagnostic: Diagnostic): void => {
      state.diagnostics.push({ rel: relativeTo(spec.dir, diagnostic.file), diagnostic });
    };
    walk.diagnostics.forEach(note);
    const slice = createSlicer();
    const targets = await linkedTargets(resolved.real, walk.dirs, walk.files, slice);
    if (targets.length > 0) state.linkTargets.set(region, targets);

    const skillDirs = new Set<string>();
    for (const file of walk.files) if (baseName(file.rel) === MANIFEST_NAME) skillDirs.add(parentOf(file.rel));
    for (const dir of skillDirs) state.candidates.add(dir);
    if (skillDirs.size === 0) return;

    // Every file and directory at or under a skill directory belongs to that skill and to every enclosing one.
    const filesOf = await groupUnder(skillDirs, walk.files, (file) => parentOf(file.rel), slice);
    const dirsOf = await groupUnder(skillDirs, walk.dirs, (dir) => dir.rel, slice);
    const owned = [...new Set([...filesOf.values()].flat())];
    await slice();
    const reportUnhashable = (rel: string, error: NotHashableError): void => {
      const abs = path.join(spec.dir, ...splitRel(rel));
      note(
        error.reason === 'special'
          ? warning('special-file', abs, 'not a regular file (FIFO, socket or device) and was skipped', 'skills may only contain regular files and directories')
          : warning('unreadable-file', abs, `file could not be read (${error.message}) and was skipped`, 'make the file readable by the user running skills-serve'),
      );
    };

    // Small files are hashed synchronously (no thread-pool round trips), in slices of at most SLICE_MS so requests
    // keep being answered; large ones are read asynchronously in chunks.
    const digests = new Map<string, FileDigest>();
    const large: typeof owned = [];
    for (const file of owned) {
      try {
        const digest = this.#cache.digestSync(file.real, baseName(file.rel) === MANIFEST_NAME);
        if (digest === 'large') large.push(file);
        else digests.set(file.rel, digest);
      } catch (error) {
        if (!(error instanceof NotHashableError)) throw error;
        reportUnhashable(file.rel, error);
      }
      await slice();
    }
    await forEachLimited(large, HASH_CONCURRENCY, async (file) => {
      try {
        digests.set(file.rel, await this.#cache.digest(file.real, false));
      } catch (error) {
        if (!(error instanceof NotHashableError)) throw error;
        reportUnhashable(file.rel, error);
      }
    });

    const records = new Map<string, FileRecord>();
    for (const file of owned) {
      const digest = digests.get(file.rel);
      if (digest === undefined) continue;
      const name = baseName(file.rel);
      if (digest.privateKey || looksLikeSecretName(name)) {
        note(warning('secret-file', path.join(spec.dir, ...splitRel(file.rel)), `${digest.privateKey ? 'holds a private key' : 'is named like a secret'} and is served to every host`, `remove it from the skill, or list it in ${IGNORE_FILE} if it is not meant to be published`));
      }
      records.set(file.rel, Object.freeze({
        uri: buildSkillUri([...resolved.base, ...file.rel.split('/')]),
        path: file.real,
        name,
        digest: digest.digest,
        size: digest.size,
        mtimeMs: digest.mtimeMs,
        ctimeMs: digest.ctimeMs,
        ino: digest.ino,
        dev: digest.dev,
        mimeType: mimeTypeFor(name),
        rootIndex,
        rel: file.rel,
      }));
      await slice();
    }

    await forEachLimited([...skillDirs].sort(), ENTRY_CONCURRENCY, async (dir) => {
      const manifestRel = dir === '' ? MANIFEST_NAME : `${dir}/${MANIFEST_NAME}`;
      const manifest = digests.get(manifestRel);
      const segments = [...resolved.base, ...splitRel(dir)];
      if (manifest?.bytes === undefined || segments.length === 0) return; // unreadable SKILL.md: already reported
      const manifestPath = path.join(spec.dir, ...splitRel(manifestRel));
      const hidden = findHiddenCharacters(Buffer.from(manifest.bytes).toString('utf8'));
      if (hidden !== undefined) {
        note({
          ...warning('hidden-characters', manifestPath, `SKILL.md holds ${hidden.count} invisible character(s) (${hidden.kinds.join(', ')}) that can hide instructions from a reviewer`, 'remove them, or make the intent visible in plain text'),
          line: hidden.line,
          column: hidden.column,
        });
      }
      const files = (filesOf.get(dir) ?? []).flatMap((file) => records.get(file.rel) ?? []);
      const result = await buildEntry({ segments, manifestPath, manifestBytes: manifest.bytes, files });
      if ('diagnostic' in result) {
        note(result.diagnostic);
        return;
      }
      state.skills.set(dir, {
        rootIndex,
        rootDir: spec.dir,
        segments,
        dir: path.join(spec.dir, ...splitRel(dir)),
        built: result.built,
        manifestSize: manifest.size,
        files,
        dirUris: (dirsOf.get(dir) ?? []).map((walked) => buildSkillUri([...resolved.base, ...splitRel(walked.rel)])),
      });
      await slice();
    });
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

/**
 * The real paths that a walk reached through symlinks: directories and files whose real path is not where their
 * root-relative path would put them. Only the topmost such directory is kept (its subtree is implied).
 */
async function linkedTargets(
  rootReal: string,
  dirs: readonly { rel: string; real: string }[],
  files: readonly { rel: string; real: string }[],
  slice: () => Promise<void>,
): Promise<string[]> {
  const targets: string[] = [];
  const prefix = rootReal.endsWith(path.sep) ? rootReal : rootReal + path.sep;
  const viaLink = (item: { rel: string; real: string }): boolean =>
    item.rel === '' ? item.real !== rootReal : item.real !== prefix + (path.sep === '/' ? item.rel : item.rel.split('/').join(path.sep));
  const linkedDirs = dirs.filter(viaLink).sort((a, b) => a.rel.length - b.rel.length);
  const covered = (rel: string): boolean => linkedDirs.some((dir) => rel.startsWith(`${dir.rel}/`));
  for (const dir of linkedDirs) if (!covered(dir.rel)) targets.push(dir.real);
  for (const [index, file] of files.entries()) {
    if (viaLink(file) && !covered(file.rel)) targets.push(file.real);
    if (index % 4096 === 0) await slice();
  }
  return targets;
}

/** Groups items under every skill directory that is their directory or one of its ancestors. */
async function groupUnder<T>(skillDirs: ReadonlySet<string>, items: readonly T[], dirOf: (item: T) => string, slice: () => Promise<void>): Promise<Map<string, T[]>> {
  const groups = new Map<string, T[]>([...skillDirs].map((dir) => [dir, []]));
  for (const [index, item] of items.entries()) {
    for (let dir = dirOf(item); ; dir = parentOf(dir)) {
      groups.get(dir)?.push(item);
      if (dir === '') break;
    }
    if (index % 4096 === 0) await slice();
  }
  return groups;
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

/** Runs `task` over `items` with at most `limit` running at once. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function relativeTo(root: string, file: string): string {
  const rel = path.relative(root, file);
  return rel === '' ? '' : rel.split(path.sep).join('/');
}

function splitRel(rel: string): string[] {
  return rel === '' ? [] : rel.split('/');
}

function parentOf(rel: string): string {
  const slash = rel.lastIndexOf('/');
  return slash === -1 ? '' : rel.slice(0, slash);
}

function baseName(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}

