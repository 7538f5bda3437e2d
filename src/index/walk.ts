/**
 * The index walk: one pass over one region of one root (docs/ARCHITECTURE.md, "The walk"). Outside skills it only
 * lists directories, looking for `SKILL.md`; from a skill's directory down it hashes every file and builds the
 * skill's {@link DirNode} tree. Each directory is announced to the {@link WalkObserver} *before* it is listed, so the
 * watcher's watch on it exists before the listing and no change made after the listing is missed.
 *
 * Files whose identity (device, inode, size, mtime, ctime) matches the node published at the same place are not
 * read again: the previous node is the digest cache. Unchanged directories keep their previous node objects, so
 * diffs and entries of unchanged skills are skipped by identity.
 *
 * Problems inside the tree never throw: each becomes one warning diagnostic (special files, unreadable files and
 * directories, links not followed, names that are not UTF-8). The walk yields to the event loop every `SLICE_MS`.
 */
import {
  closeSync,
  type Dirent,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import path from 'node:path';

import { isPathWithin } from '../paths.js';
import {
  secretFile,
  specialFile,
  unreadableDirectory,
  unreadableFile,
  unreadableIgnoreFile,
  unrepresentableName,
} from './diagnostics.js';
import { describeIoError, type Hashed, hashFileSync, isTransientIoError, NotHashableError } from './digest.js';
import type { StoredDigests } from './digest-cache.js';
import { hashLargeFile } from './hash-pool.js';
import { looksLikeSecretName, privateKeyLine, SECRET_SCAN_BYTES } from './hygiene.js';
import { isDiagnostic, type LinkTarget, resolveLink } from './links.js';
import { type ManifestFacts, skillSegments } from './manifest.js';
import { findChild } from './namespace.js';
import {
  IGNORE_FILE,
  type IgnoreLayer,
  isIgnoredByLayers,
  isIgnoredName,
  isRepresentableName,
  MANIFEST_NAME,
  parseIgnoreFile,
  type SymlinkPolicy,
} from './policy.js';
import { holdsPrivateKey, makeKey, sameIdentity, wasRacy } from './record.js';
import { createSlicer } from './slice.js';
import { type Diagnostic, DirNode, FileNode } from './types.js';

/**
 * A region walk met a transient failure (out of file descriptors: EMFILE, ENFILE) that would make it publish a wrong
 * tree: the walk is abandoned, and the builder keeps what it had and tries the region again later.
 */
export class TransientWalkError extends Error {
  constructor(
    readonly code: string,
    readonly path: string,
  ) {
    super(`${code} while indexing ${path}`);
    this.name = 'TransientWalkError';
  }
}

/** Told about every directory the walk is about to list. */
export interface WalkObserver {
  /**
   * @param rootIndex the root.
   * @param rel the directory, root-relative and `/`-separated (`''` for the root).
   * @param real its real path (a followed link's target).
   */
  directory(rootIndex: number, rel: string, real: string): void;
}

/** Everything one region walk needs. */
export interface WalkContext {
  readonly rootIndex: number;
  /** The root as given on the command line (diagnostics name paths under it). */
  readonly rootDir: string;
  /** Real paths of every served root. */
  readonly allowedRealRoots: readonly string[];
  readonly symlinks: SymlinkPolicy;
  /** The node published at a root-relative directory, if any: the cache for that directory's files. */
  readonly previous: (rel: string) => DirNode | undefined;
  /** Real paths to read whatever their identity says (a read found them changed). */
  readonly distrusted: ReadonlySet<string>;
  /** What the last start stored of the root's digests (its first walk only), for files with no published node. */
  readonly stored: StoredDigests | undefined;
  /** Skill-path segments of the root's own directory (`manifest.ts` `skillSegments`): what stored facts hold for. */
  readonly skillBase: readonly string[];
  readonly observer: WalkObserver | undefined;
}

/** A directory holding `SKILL.md` met by the walk, valid or not, with what is needed to build its record. */
export interface WalkedSkillDir {
  /** Root-relative directory. */
  readonly rel: string;
  /** Its final node. */
  readonly node: DirNode;
  /** The node published there before, if any. */
  readonly previous: DirNode | undefined;
  /** Absolute real path of the directory. */
  readonly real: string;
  /**
   * Raw `SKILL.md`; or what the digest cache kept of it, when it trusted the file unread; or `undefined` when it
   * could not be read (already reported).
   */
  readonly manifest: Buffer | ManifestFacts | undefined;
}

/** An outermost skill directory found by the walk: its tree and every skill directory in it (outermost first). */
export interface WalkedRegion {
  readonly rel: string;
  readonly node: DirNode;
  readonly skillDirs: readonly WalkedSkillDir[];
  /** Real paths reached through symlinks inside it (the topmost of each linked subtree). */
  readonly linkTargets: readonly string[];
}

/** What one region walk found. */
export interface RegionWalk {
  /** Outermost skill directories, in walk order. */
  readonly regions: WalkedRegion[];
  /** Diagnostics, each with the root-relative path it concerns. */
  readonly diagnostics: { readonly rel: string; readonly diagnostic: Diagnostic }[];
}

/** A directory waiting to be listed. */
interface Dir {
  /** Its name (interned), as its node is called. */
  readonly name: string;
  readonly rel: string;
  /** Path through the root as given (for diagnostics). */
  readonly abs: string;
  readonly real: string;
  /** Reached through a symlink: its real path is not its parent's + `/` + its name. */
  readonly linked: boolean;
  readonly layers: readonly IgnoreLayer[];
  /** Real path of the linked skill folder it lies in, if any (see `links.ts`). */
  readonly anchor: string | undefined;
}

/** A listed directory: entries sorted by name, and the ignore layers that apply to them. */
interface Listing {
  readonly entries: readonly Dirent[];
  readonly layers: readonly IgnoreLayer[];
}

type Slot = DirNode | FileNode | undefined;

/** A large file being hashed on the thread pool, and where its node goes. */
interface PendingFile {
  readonly children: Slot[];
  readonly index: number;
  readonly name: string;
  readonly dir: Dir;
  readonly realOverride: string | undefined;
  readonly hashed: Promise<Hashed>;
}

/** A directory node built in this walk, in its parent's children array (or the region holder). */
interface Built {
  readonly node: DirNode;
  readonly previous: DirNode | undefined;
  readonly holder: Slot[];
  readonly index: number;
  /** Set when the directory holds `SKILL.md`. */
  readonly skill?: { readonly manifest: Buffer | ManifestFacts | undefined };
  readonly rel: string;
  readonly real: string;
}

/** What one outermost skill directory's build collects. */
interface RegionBuild {
  readonly built: Built[];
  readonly linkTargets: string[];
}

/** An entry of a directory, as the walk goes on with it. */
type Resolved =
  | { readonly kind: 'dir'; readonly dir: Dir }
  | { readonly kind: 'file'; readonly name: string; readonly real: string; readonly realOverride: string | undefined };

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Walks region `start` of a root: finds the outermost skill directories in it and builds each one's tree.
 *
 * @param context the root, policies, cache and observer.
 * @param start root-relative directory (`''` for the whole root).
 * @returns the regions and diagnostics found; nothing when `start` is ignored or cannot be listed.
 * @throws Error (with `code`) only when `start` itself cannot be resolved (it no longer exists) or is not a directory;
 *   TransientWalkError when the walk ran out of file descriptors.
 */
export async function walkRegion(context: WalkContext, start: string): Promise<RegionWalk> {
  return new RegionWalker(context).walk(start);
}

class RegionWalker {
  readonly #context: WalkContext;
  readonly #result: RegionWalk = { regions: [], diagnostics: [] };
  readonly #ancestors = new Set<string>();
  readonly #pending: PendingFile[] = [];
  readonly #slice = createSlicer();
  /** One string per distinct name (`SKILL.md`, `references`, … are stored once, not once per skill). */
  readonly #names = new Map<string, string>();

  constructor(context: WalkContext) {
    this.#context = context;
  }

  async walk(start: string): Promise<RegionWalk> {
    const { rootDir } = this.#context;
    let dir: Dir = {
      name: this.#intern(path.basename(rootDir)),
      rel: '',
      abs: rootDir,
      real: realpathSync(rootDir),
      linked: true,
      layers: [],
      anchor: undefined,
    };
    // Down to `start` the way a full walk gets there: each step judged by `#resolve` (ignore rules, the symlink
    // policy and the anchor of a linked skill folder), each directory above adding its real path (a link back up
    // is a loop) and its `.skillsignore`, so a partial walk serves exactly what a full walk would.
    for (const segment of start === '' ? [] : start.split('/')) {
      this.#ancestors.add(dir.real);
      const layer = this.#readIgnoreLayer(dir.rel, dir.abs, dir.real);
      const layers = layer === undefined ? dir.layers : [...dir.layers, layer];
      const resolved = this.#resolve({ ...dir, layers }, entryAt(dir.real, segment), layers, false);
      if (resolved === undefined) return this.#result; // ignored, or a link the policy does not follow (noted)
      // A region named by an event may be a file (an entry appeared outside every skill): there is nothing to walk.
      if (resolved.kind !== 'dir')
        throw Object.assign(new Error(`${joinPath(dir.abs, segment)} is not a directory`), { code: 'ENOTDIR' });
      dir = resolved.dir;
    }
    if (start === '' && !statSync(dir.real).isDirectory())
      throw Object.assign(new Error(`${rootDir} is not a directory`), { code: 'ENOTDIR' });
    await this.#search(dir);
    return this.#result;
  }

  /** Outside skills: lists `dir` looking for `SKILL.md`; a skill directory is built, any other one searched. */
  async #search(dir: Dir): Promise<void> {
    const listing = this.#list(dir);
    if (listing === undefined) return;
    if (this.#holdsManifest(dir, listing.entries)) {
      await this.#buildRegion(dir, listing);
      return;
    }
    this.#ancestors.add(dir.real);
    for (const entry of listing.entries) {
      const resolved = this.#resolve(dir, entry, listing.layers, false);
      if (resolved?.kind === 'dir') await this.#search(resolved.dir);
    }
    this.#ancestors.delete(dir.real);
    await this.#slice();
  }

  /** Whether the listing has a regular `SKILL.md`, or a link to one that may be followed (checked quietly). */
  #holdsManifest(dir: Dir, entries: readonly Dirent[]): boolean {
    const entry = entries.find((candidate) => candidate.name === MANIFEST_NAME);
    if (entry === undefined) return false;
    if (entry.isFile()) return true;
    if (!entry.isSymbolicLink()) return false;
    const target = resolveLink(
      joinPath(dir.abs, MANIFEST_NAME),
      joinPath(dir.real, MANIFEST_NAME),
      this.#linkContext(dir, true),
    );
    return !isDiagnostic(target) && target.kind === 'file';
  }

  /**
   * What the walk does with one entry: a directory to go into, a file to hash, or nothing (ignored, or skipped with a
   * warning: a name that is not UTF-8, a special file, a link not followed).
   *
   * @param insideSkill files matter (outside skills only directories and `SKILL.md` do).
   */
  #resolve(dir: Dir, entry: DirEntry, layers: readonly IgnoreLayer[], insideSkill: boolean): Resolved | undefined {
    const name = this.#intern(entry.name);
    if (isIgnoredName(name)) return undefined;
    if (!isRepresentableName(name)) {
      this.#note(joinRel(dir.rel, name), unrepresentableName(joinPath(dir.abs, name)));
      return undefined;
    }
    const isDirectory = entry.isDirectory();
    // A link is judged by its own name as a file first, then, if it leads to a directory, as a directory.
    if (layers.length > 0 && isIgnoredByLayers(layers, joinRel(dir.rel, name), isDirectory)) return undefined;
    const real = joinPath(dir.real, name);
    if (entry.isFile()) return { kind: 'file', name, real, realOverride: undefined };
    const rel = joinRel(dir.rel, name);
    const abs = joinPath(dir.abs, name);
    if (isDirectory) return { kind: 'dir', dir: { name, rel, abs, real, linked: false, layers, anchor: dir.anchor } };
    if (!entry.isSymbolicLink()) {
      this.#note(rel, specialFile(abs));
      return undefined;
    }
    const target: LinkTarget | Diagnostic = resolveLink(abs, real, this.#linkContext(dir, insideSkill));
    if (isDiagnostic(target)) {
      this.#note(rel, target);
      return undefined;
    }
    if (target.kind === 'file') return { kind: 'file', name, real: target.real, realOverride: target.real };
    if (layers.length > 0 && isIgnoredByLayers(layers, rel, true)) return undefined;
    return { kind: 'dir', dir: { name, rel, abs, real: target.real, linked: true, layers, anchor: target.anchor } };
  }

  #linkContext(dir: Dir, insideSkill: boolean): Parameters<typeof resolveLink>[2] {
    const { symlinks, allowedRealRoots } = this.#context;
    return { policy: symlinks, allowedRealRoots, anchor: dir.anchor, insideSkill, ancestors: this.#ancestors };
  }

  /** Builds the outermost skill directory `dir` (already listed) and everything under it; records it as a region. */
  async #buildRegion(dir: Dir, listing: Listing): Promise<void> {
    const build: RegionBuild = { built: [], linkTargets: [] };
    const holder: Slot[] = [undefined];
    await this.#buildDir(dir, listing, this.#context.previous(dir.rel), build, holder, 0, true);
    await this.#settlePending(build);
    // Unchanged directories keep their previous node: children first, so each parent compares its final children.
    const finalNode = new Map<DirNode, DirNode>();
    for (const item of build.built) {
      const { node, previous } = item;
      const kept =
        previous !== undefined && previous.real === node.real && sameChildren(node.children, previous.children);
      item.holder[item.index] = kept ? previous : node;
      finalNode.set(node, kept ? previous : node);
    }
    // New nodes get exactly sized children arrays (the parents' arrays hold their final children by now).
    for (const item of build.built) {
      // (The node is not published yet: this is the end of its construction.)
      if (finalNode.get(item.node) === item.node)
        (item.node as { children: readonly (DirNode | FileNode)[] }).children = item.node.children.slice();
    }
    const skillDirs: WalkedSkillDir[] = [];
    for (const item of build.built) {
      if (item.skill === undefined) continue;
      const node = finalNode.get(item.node) ?? item.node;
      skillDirs.push({
        rel: item.rel,
        node,
        previous: item.previous,
        real: item.real,
        manifest: item.skill.manifest,
      });
    }
    skillDirs.reverse(); // built children first: the outermost skill directory comes last
    this.#result.regions.push({
      rel: dir.rel,
      node: holder[0] as DirNode,
      skillDirs,
      linkTargets: topmost(build.linkTargets, dir.real),
    });
  }

  /** Builds the node of one directory inside a skill (children first), into `holder[index]`. */
  async #buildDir(
    dir: Dir,
    listed: Listing | undefined,
    previous: DirNode | undefined,
    build: RegionBuild,
    holder: Slot[],
    index: number,
    isRegionTop: boolean,
  ): Promise<void> {
    const listing = listed ?? this.#list(dir);
    const children: Slot[] = [];
    let manifest: { manifest: Buffer | ManifestFacts | undefined } | undefined;
    this.#ancestors.add(dir.real);
    for (const entry of listing?.entries ?? []) {
      const resolved = this.#resolve(dir, entry, listing?.layers ?? dir.layers, true);
      if (resolved === undefined) continue;
      if (resolved.kind === 'dir') {
        if (resolved.dir.linked) build.linkTargets.push(resolved.dir.real);
        children.push(undefined);
        await this.#buildDir(
          resolved.dir,
          undefined,
          childDir(previous, entry.name),
          build,
          children,
          children.length - 1,
          false,
        );
        continue;
      }
      if (resolved.realOverride !== undefined) build.linkTargets.push(resolved.realOverride);
      const isManifest = resolved.name === MANIFEST_NAME;
      const read = this.#addFile(dir, resolved, previous, children, isManifest);
      if (isManifest) manifest = { manifest: read };
    }
    this.#ancestors.delete(dir.real);
    const name = dir.name;
    // Skill directories, region tops and followed links carry their real path; others derive it from their parent's.
    const real = isRegionTop || dir.linked || manifest !== undefined ? dir.real : undefined;
    const node = new DirNode(name, children as (DirNode | FileNode)[], real, undefined);
    holder[index] = node;
    build.built.push({
      node,
      previous,
      holder,
      index,
      rel: dir.rel,
      real: dir.real,
      ...(manifest === undefined ? {} : { skill: manifest }),
    });
    await this.#slice();
  }

  /**
   * Adds one file to `children`: the previous node when its identity is unchanged, otherwise a new node from its
   * bytes (a large file is hashed by `hashLargeFile` and its node put in place by `#settlePending`).
   *
   * @param isManifest `SKILL.md`: read whenever it is hashed (its bytes are parsed), and trusted from the digest cache
   *   only together with the facts stored beside it.
   * @returns for `SKILL.md`, its bytes, or the stored facts when the digest cache was trusted, or `undefined` when
   *   it could not be read; `undefined` for any other file.
   */
  #addFile(
    dir: Dir,
    file: Extract<Resolved, { kind: 'file' }>,
    previous: DirNode | undefined,
    children: Slot[],
    isManifest: boolean,
  ): Buffer | ManifestFacts | undefined {
    const { name, real, realOverride } = file;
    const before = fileChild(previous, name);
    if (!isManifest && before !== undefined && before.real === realOverride && !this.#context.distrusted.has(real)) {
      try {
        const stat = statSync(real);
        if (stat.isFile() && !wasRacy(before) && sameIdentity(before, stat)) {
          children.push(before);
          this.#checkSecret(dir, name, holdsPrivateKey(before));
          return undefined;
        }
      } catch {
        // gone or unreadable since it was listed: hashing below reports it
      }
    }
    const { stored, skillBase } = this.#context;
    const facts = isManifest ? stored?.manifest(dir.rel, skillSegments(skillBase, dir.rel).join('/')) : undefined;
    if (
      before === undefined &&
      stored !== undefined &&
      (!isManifest || facts !== undefined) &&
      !this.#context.distrusted.has(real)
    ) {
      try {
        const stat = statSync(real);
        const key = stat.isFile() ? stored.lookup(dir.rel, name, stat) : undefined;
        if (key !== undefined) {
          const node = new FileNode(name, Number(stat.size), key, realOverride);
          children.push(node);
          this.#checkSecret(dir, name, holdsPrivateKey(node));
          return facts;
        }
      } catch {
        // gone or unreadable since it was listed: hashing below reports it
      }
    }
    let hashed: Hashed | 'large';
    try {
      hashed = hashFileSync(real, isManifest);
    } catch (error) {
      if (!(error instanceof NotHashableError)) throw error;
      this.#noteUnhashable(dir, name, error);
      return undefined;
    }
    if (hashed === 'large') {
      children.push(undefined);
      const pending = {
        children,
        index: children.length - 1,
        name,
        dir,
        realOverride,
        hashed: hashLargeFile(real),
      };
      pending.hashed.catch(() => undefined); // settled (and reported) by #settlePending
      this.#pending.push(pending);
      return undefined;
    }
    children.push(this.#fileNode(dir, name, realOverride, hashed, before));
    return hashed.bytes;
  }

  #fileNode(
    dir: Dir,
    name: string,
    realOverride: string | undefined,
    hashed: Hashed,
    before: FileNode | undefined,
  ): FileNode {
    this.#checkSecret(dir, name, hashed.privateKey, hashed.bytes);
    const key = makeKey(hashed.digest, hashed.size, hashed.identity, hashed.privateKey, hashed.racy, hashed.marks);
    // Same bytes and identity as before (a SKILL.md read again): keep the published node.
    if (before !== undefined && before.key === key && before.real === realOverride) return before;
    return new FileNode(name, hashed.size, key, realOverride);
  }

  /**
   * Notes a file named like a secret or holding a private key block. The block's line is found in `bytes` when the
   * file was just read whole, else in its first {@link SECRET_SCAN_BYTES} read again (only a flagged file is: the
   * flag may come from the digest cache).
   */
  #checkSecret(dir: Dir, name: string, privateKey: boolean, bytes?: Buffer): void {
    if (!privateKey && !looksLikeSecretName(name)) return;
    const abs = joinPath(dir.abs, name);
    const line = privateKey ? privateKeyLine((bytes ?? readHead(abs)).subarray(0, SECRET_SCAN_BYTES)) : undefined;
    this.#note(joinRel(dir.rel, name), secretFile(abs, privateKey, IGNORE_FILE, line));
  }

  #noteUnhashable(dir: Dir, name: string, error: NotHashableError): void {
    const abs = joinPath(dir.abs, name);
    if (isTransientIoError(error)) throw new TransientWalkError(error.code as string, abs);
    // Listed, then gone before it was opened (an editor's atomic-save temporary, a deletion in progress): a change
    // the watcher reports next, not a problem of the tree. The file is left out of this build without a warning.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return;
    this.#note(
      joinRel(dir.rel, name),
      error.reason === 'special' ? specialFile(abs) : unreadableFile(abs, error.message),
    );
  }

  /** Waits for the region's large files and puts their nodes in place; drops (and reports) the ones that failed. */
  async #settlePending(build: RegionBuild): Promise<void> {
    const failed = new Set<Slot[]>();
    for (const file of this.#pending.splice(0)) {
      try {
        const hashed = await file.hashed;
        file.children[file.index] = this.#fileNode(file.dir, file.name, file.realOverride, hashed, undefined);
      } catch (error) {
        if (!(error instanceof NotHashableError)) throw error;
        this.#noteUnhashable(file.dir, file.name, error);
        failed.add(file.children);
      }
    }
    for (const item of build.built) {
      const children = item.node.children as Slot[];
      if (!failed.has(children)) continue;
      const kept = children.filter((child) => child !== undefined);
      children.length = 0;
      children.push(...kept);
    }
  }

  /**
   * Announces `dir` to the observer, then lists it and reads its `.skillsignore`.
   *
   * @returns the entries sorted by name and the ignore layers for them, or `undefined` (reported) when it cannot be
   *   listed.
   */
  #list(dir: Dir): Listing | undefined {
    this.#context.observer?.directory(this.#context.rootIndex, dir.rel, dir.real);
    let entries: Dirent[];
    try {
      entries = readdirSync(dir.real, { withFileTypes: true });
    } catch (error) {
      if (isTransientIoError(error))
        throw new TransientWalkError((error as NodeJS.ErrnoException).code as string, dir.abs);
      // A directory below the root removed since its parent was listed (`rm -rf` in progress) is left out silently,
      // like a vanished file; the watcher reports the change.
      const code = (error as NodeJS.ErrnoException).code;
      if (dir.rel !== '' && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
      this.#note(dir.rel, unreadableDirectory(dir.abs, describeIoError(error)));
      return undefined;
    }
    entries.sort(byName);
    let layers = dir.layers;
    if (entries.some((entry) => entry.name === IGNORE_FILE)) {
      const layer = this.#readIgnoreLayer(dir.rel, dir.abs, dir.real);
      if (layer !== undefined) layers = [...layers, layer];
    }
    return { entries, layers };
  }

  /** Reads `<dir>/.skillsignore` if it exists; an unreadable one is reported and treated as absent. */
  #readIgnoreLayer(rel: string, abs: string, real: string): IgnoreLayer | undefined {
    let text: string;
    try {
      text = readFileSync(path.join(real, IGNORE_FILE), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Ignore rules never fail open on a passing shortage: the region is tried again instead.
      if (isTransientIoError(error)) throw new TransientWalkError(code as string, path.join(abs, IGNORE_FILE));
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        this.#note(rel, unreadableIgnoreFile(path.join(abs, IGNORE_FILE), describeIoError(error)));
      return undefined;
    }
    return { base: rel, matcher: parseIgnoreFile(text) };
  }

  #intern(name: string): string {
    const known = this.#names.get(name);
    if (known !== undefined) return known;
    this.#names.set(name, name);
    return name;
  }

  #note(rel: string, diagnostic: Diagnostic): void {
    this.#result.diagnostics.push({ rel, diagnostic });
  }
}

function childDir(previous: DirNode | undefined, name: string): DirNode | undefined {
  const child = findChild(previous, name);
  return child instanceof DirNode ? child : undefined;
}

function fileChild(previous: DirNode | undefined, name: string): FileNode | undefined {
  const child = findChild(previous, name);
  return child instanceof FileNode ? child : undefined;
}

function sameChildren(a: readonly Slot[], b: readonly Slot[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** Keeps only targets that are not inside another target (a linked subtree implies everything under it). */
function topmost(targets: readonly string[], regionReal: string): string[] {
  const sorted = [...new Set(targets)].filter((target) => target !== regionReal).sort();
  const kept: string[] = [];
  for (const target of sorted) if (!kept.some((outer) => isPathWithin(target, outer))) kept.push(target);
  return kept;
}

/** What `#resolve` needs of a directory entry: a `Dirent` from a listing, or {@link entryAt}. */
type DirEntry = Pick<Dirent, 'name' | 'isFile' | 'isDirectory' | 'isSymbolicLink'>;

/**
 * The entry `name` of the directory at `real`, as its listing would give it (from `lstat`: a link is a link).
 *
 * @throws the `lstat` error (ENOENT when it is gone).
 */
function entryAt(real: string, name: string): DirEntry {
  const stat = lstatSync(joinPath(real, name));
  return {
    name,
    isFile: () => stat.isFile(),
    isDirectory: () => stat.isDirectory(),
    isSymbolicLink: () => stat.isSymbolicLink(),
  };
}

function joinRel(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}

/** `dir` + separator + `name`, for a normalized absolute `dir` (the root `/` included). */
function joinPath(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name;
}

/** The first {@link SECRET_SCAN_BYTES} of a file; nothing when it cannot be read now (a rebuild follows its change). */
function readHead(abs: string): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(abs, 'r');
    const head = Buffer.allocUnsafe(SECRET_SCAN_BYTES);
    return head.subarray(0, readSync(fd, head, 0, SECRET_SCAN_BYTES, 0));
  } catch {
    return Buffer.alloc(0);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
