/**
 * Rebuilding one region (a root-relative directory) of one root from disk: walk, hash (reusing unchanged digests),
 * file records, entries. The builder (`build.ts`) decides which regions to rebuild and merges the results.
 * Implements SEP-2640 "Skills and nesting" and "The entry"; DESIGN §5 "Policies".
 */
import path from 'node:path';
import type { PublishedSkill } from './assemble.js';
import type { DigestCache } from './digest-cache.js';
import { NotHashableError, type FileDigest } from './digest.js';
import { buildEntry } from './entry.js';
import { findHiddenCharacters, looksLikeSecretName } from './hygiene.js';
import { mimeTypeFor } from './mime.js';
import { IGNORE_FILE, MANIFEST_NAME, type SymlinkPolicy } from './policy.js';
import type { Diagnostic, FileRecord, RootSpec } from './types.js';
import { createSlicer } from './slice.js';
import { buildSkillUri } from './uri.js';
import { walkTree, warning } from './walk.js';

/** How many large files are read and hashed at once. */
export const HASH_CONCURRENCY = 4;
/** How many entries (`SKILL.md` parses through the SDK, which awaits a WebCrypto digest each) are built at once. */
export const ENTRY_CONCURRENCY = 32;

/** What to rebuild, and with what. */
export interface RegionInput {
  readonly rootIndex: number;
  readonly spec: RootSpec;
  /** Skill-path segments of the root's own directory (prefix, plus its name when the root is a skill). */
  readonly base: readonly string[];
  readonly rootReal: string;
  /** Root-relative directory (`''` for the whole root). */
  readonly region: string;
  readonly allowedRealRoots: readonly string[];
  readonly symlinks: SymlinkPolicy;
  readonly cache: DigestCache;
}

/** Everything a region contributes to its root's state. */
export interface RegionResult {
  /** Skill directory (root-relative) → published skill. */
  readonly skills: Map<string, PublishedSkill>;
  /** Every directory holding a `SKILL.md`, valid or not. */
  readonly candidates: Set<string>;
  /** Diagnostics with the root-relative path they concern. */
  readonly diagnostics: { rel: string; diagnostic: Diagnostic }[];
  /** Real paths reached through symlinks (see `IndexBuilder.regionsLinkedTo`). */
  readonly linkTargets: string[];
}

/**
 * Rebuilds one region from disk. Problems inside it become diagnostics, never exceptions.
 *
 * @returns what the region contributes, or `undefined` when the region no longer exists.
 */
export async function buildRegion(input: RegionInput): Promise<RegionResult | undefined> {
  const { rootIndex, spec, base, rootReal, region, cache } = input;
  const result: RegionResult = { skills: new Map(), candidates: new Set(), diagnostics: [], linkTargets: [] };
  let walk;
  try {
    walk = await walkTree({ root: spec.dir, allowedRealRoots: input.allowedRealRoots, symlinks: input.symlinks }, region);
  } catch {
    return undefined;
  }
  const note = (diagnostic: Diagnostic): void => {
    result.diagnostics.push({ rel: relativeTo(spec.dir, diagnostic.file), diagnostic });
  };
  walk.diagnostics.forEach(note);
  const slice = createSlicer();
  result.linkTargets.push(...(await linkedTargets(rootReal, walk.dirs, walk.files, slice)));

  const skillDirs = new Set<string>();
  for (const file of walk.files) if (baseName(file.rel) === MANIFEST_NAME) skillDirs.add(parentOf(file.rel));
  for (const dir of skillDirs) result.candidates.add(dir);
  if (skillDirs.size === 0) return result;

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
      const digest = cache.digestSync(file.real, baseName(file.rel) === MANIFEST_NAME);
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
      digests.set(file.rel, await cache.digest(file.real, false));
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
      uri: buildSkillUri([...base, ...file.rel.split('/')]),
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
    const segments = [...base, ...splitRel(dir)];
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
    const entry = await buildEntry({ segments, manifestPath, manifestBytes: manifest.bytes, files });
    if ('diagnostic' in entry) {
      note(entry.diagnostic);
      return;
    }
    result.skills.set(dir, {
      rootIndex,
      rootDir: spec.dir,
      segments,
      dir: path.join(spec.dir, ...splitRel(dir)),
      built: entry.built,
      manifestSize: manifest.size,
      files,
      dirUris: (dirsOf.get(dir) ?? []).map((walked) => buildSkillUri([...base, ...splitRel(walked.rel)])),
    });
    await slice();
  });
  return result;
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

