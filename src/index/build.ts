/**
 * Full index build: roots → walk → hash → entries → one immutable {@link Snapshot}
 * (SEP-2640 "Skills and nesting", "The entry"; DESIGN §4 "Data flow", §5 "Policies").
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { hashFile, NotHashableError, type FileDigest } from './digest.js';
import { buildEntry } from './entry.js';
import { mimeTypeFor } from './mime.js';
import { MANIFEST_NAME } from './policy.js';
import { assembleSnapshot, type PublishedSkill } from './assemble.js';
import type { Diagnostic, FileRecord, RootSpec, Snapshot } from './types.js';
import { buildSkillUri } from './uri.js';
import { walkTree, warning, type WalkedFile } from './walk.js';

/** How many files are opened and hashed at once. */
export const HASH_CONCURRENCY = 32;

/** One root as the build sees it: where it is, and which segments its directories map to. */
interface ResolvedRoot {
  readonly index: number;
  readonly spec: RootSpec;
  readonly real: string;
  /** Segments prepended to every root-relative path: the prefix, plus the folder name when the root is a skill. */
  readonly base: readonly string[];
}

/**
 * Builds a snapshot of every skill under `roots`.
 *
 * @param roots the configured roots, in command-line order (earlier roots win conflicts).
 * @param generation the snapshot's build number.
 * @returns the snapshot; problems inside the roots become diagnostics, never exceptions.
 * @throws only on a bug.
 */
export async function buildSnapshot(roots: readonly RootSpec[], generation: number): Promise<Snapshot> {
  const diagnostics: Diagnostic[] = [];
  const resolved: ResolvedRoot[] = [];
  for (const [index, spec] of roots.entries()) {
    try {
      const real = await fsp.realpath(spec.dir);
      const isSkill = await isRegularFile(path.join(real, MANIFEST_NAME));
      resolved.push({ index, spec, real, base: isSkill ? [...spec.prefix, path.basename(spec.dir)] : spec.prefix });
    } catch (error) {
      diagnostics.push(warning('root-unusable', spec.dir, `root could not be read (${(error as Error).message.split(',')[0]})`, 'check that the directory exists and is readable'));
    }
  }
  const allowedRealRoots = resolved.map((root) => root.real);
  const published: PublishedSkill[] = [];
  for (const root of resolved) {
    published.push(...(await buildRoot(root, allowedRealRoots, diagnostics)));
  }
  return assembleSnapshot(published, diagnostics, generation);
}

async function isRegularFile(file: string): Promise<boolean> {
  try {
    return (await fsp.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Walks one root, hashes the files that belong to skills and builds each skill's entry. */
async function buildRoot(root: ResolvedRoot, allowedRealRoots: readonly string[], diagnostics: Diagnostic[]): Promise<PublishedSkill[]> {
  const walk = await walkTree({ root: root.spec.dir, allowedRealRoots });
  diagnostics.push(...walk.diagnostics);
  const skillDirs = new Set<string>();
  for (const file of walk.files) if (baseName(file.rel) === MANIFEST_NAME) skillDirs.add(parentOf(file.rel));
  if (skillDirs.size === 0) return [];

  // Every file under a skill directory belongs to that skill and to every enclosing skill.
  const filesOf = new Map<string, WalkedFile[]>([...skillDirs].map((dir) => [dir, []]));
  const owned: WalkedFile[] = [];
  for (const file of walk.files) {
    let owners = 0;
    for (let dir = parentOf(file.rel); ; dir = parentOf(dir)) {
      const list = filesOf.get(dir);
      if (list !== undefined) {
        list.push(file);
        owners++;
      }
      if (dir === '') break;
    }
    if (owners > 0) owned.push(file);
  }

  const digests = new Map<string, FileDigest>();
  await forEachLimited(owned, HASH_CONCURRENCY, async (file) => {
    try {
      digests.set(file.rel, await hashFile(file.real, baseName(file.rel) === MANIFEST_NAME));
    } catch (error) {
      if (!(error instanceof NotHashableError)) throw error;
      const abs = path.join(root.spec.dir, ...file.rel.split('/'));
      diagnostics.push(
        error.reason === 'special'
          ? warning('special-file', abs, 'not a regular file (FIFO, socket or device) and was skipped', 'skills may only contain regular files and directories')
          : warning('unreadable-file', abs, `file could not be read (${error.message}) and was skipped`, 'make the file readable by the user running skills-serve'),
      );
    }
  });

  const records = new Map<string, FileRecord>();
  const recordOf = (file: WalkedFile): FileRecord | undefined => {
    const cached = records.get(file.rel);
    if (cached !== undefined) return cached;
    const digest = digests.get(file.rel);
    if (digest === undefined) return undefined;
    const name = baseName(file.rel);
    const record: FileRecord = Object.freeze({
      uri: buildSkillUri([...root.base, ...file.rel.split('/')]),
      path: file.real,
      name,
      digest: digest.digest,
      size: digest.size,
      mtimeMs: digest.mtimeMs,
      ctimeMs: digest.ctimeMs,
      ino: digest.ino,
      dev: digest.dev,
      mimeType: mimeTypeFor(name),
    });
    records.set(file.rel, record);
    return record;
  };

  // Likewise every directory at or under a skill directory is a directory resource of that skill.
  const dirsOf = new Map<string, string[]>([...skillDirs].map((dir) => [dir, []]));
  for (const walked of walk.dirs) {
    for (let dir = walked.rel; ; dir = parentOf(dir)) {
      dirsOf.get(dir)?.push(walked.rel);
      if (dir === '') break;
    }
  }

  const published: PublishedSkill[] = [];
  for (const dir of [...skillDirs].sort()) {
    const manifestRel = dir === '' ? MANIFEST_NAME : `${dir}/${MANIFEST_NAME}`;
    const manifestPath = path.join(root.spec.dir, ...manifestRel.split('/'));
    const manifest = digests.get(manifestRel);
    if (manifest?.bytes === undefined) continue; // unreadable SKILL.md: already reported
    const files = (filesOf.get(dir) ?? []).map(recordOf).filter((record): record is FileRecord => record !== undefined);
    const segments = [...root.base, ...(dir === '' ? [] : dir.split('/'))];
    if (segments.length === 0) continue;
    const result = await buildEntry({ segments, manifestPath, manifestBytes: manifest.bytes, files });
    if ('diagnostic' in result) {
      diagnostics.push(result.diagnostic);
      continue;
    }
    published.push({
      rootIndex: root.index,
      rootDir: root.spec.dir,
      segments,
      dir: path.join(root.spec.dir, ...(dir === '' ? [] : dir.split('/'))),
      built: result.built,
      manifestSize: manifest.size,
      files,
      dirUris: (dirsOf.get(dir) ?? []).map((rel) => buildSkillUri([...root.base, ...(rel === '' ? [] : rel.split('/'))])),
    });
  }
  return published;
}

/** Runs `task` over `items` with at most `limit` running at once. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function parentOf(rel: string): string {
  const slash = rel.lastIndexOf('/');
  return slash === -1 ? '' : rel.slice(0, slash);
}

function baseName(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}
