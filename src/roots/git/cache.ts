/**
 * The cache of git roots (docs/git-roots.md, "Versions"): where it is, and its layout.
 *
 *   <cache>/git/<host>-<repo>-<hash>/          one directory per remote URL (hash of the credential-free URL)
 *     repo.git/                                a bare, shallow repository holding the fetched objects
 *     refs.json                                what each ref resolved to at its last fetch (for offline starts)
 *     trees/<commit>[-<subdir hash>]/          a materialized tree, complete once it exists (renamed into place)
 *     tmp/                                     trees being written
 *
 * A tree directory is immutable once renamed into place: its name is the commit (and subdirectory) it holds.
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import type { GitRemote } from './url.js';

/** First hex digits of a sha256, for directory names. */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** Paths of one remote's part of the cache. */
export interface RemoteCache {
  readonly dir: string;
  readonly gitDir: string;
  readonly refsFile: string;
  readonly treesDir: string;
  readonly tmpDir: string;
}

/**
 * The cache paths of a remote. The directory name is readable (host and repository name) and unique (a hash of the
 * credential-free URL).
 *
 * @param cacheDir the resolved cache directory.
 * @param remote the remote.
 */
export function remoteCache(cacheDir: string, remote: GitRemote): RemoteCache {
  const readable = [remote.hostname || 'local', remote.segments.at(-1) ?? 'repo']
    .join('-')
    .replace(/\.git$/u, '')
    .replace(/[^A-Za-z0-9._-]+/gu, '_')
    .slice(0, 60);
  const dir = path.join(cacheDir, 'git', `${readable}-${shortHash(remote.url)}`);
  return {
    dir,
    gitDir: path.join(dir, 'repo.git'),
    refsFile: path.join(dir, 'refs.json'),
    treesDir: path.join(dir, 'trees'),
    tmpDir: path.join(dir, 'tmp'),
  };
}

/**
 * Directory of the materialized tree of `commit` (of `subdir` inside it).
 *
 * @param cache the remote's cache paths.
 * @param commit full commit id.
 * @param subdir the served subdirectory (`''` for the whole tree).
 */
export function treeDir(cache: RemoteCache, commit: string, subdir: string): string {
  return path.join(cache.treesDir, subdir === '' ? commit : `${commit}-${shortHash(subdir)}`);
}

/** What a ref resolved to at its last successful fetch. */
export interface RefRecord {
  readonly kind: 'branch' | 'tag' | 'commit';
  readonly commit: string;
  /** When it was fetched (ms since the epoch). */
  readonly fetchedAt: number;
}

/** The key under which a ref is recorded (`''` for the default branch is written `HEAD`). */
const refKey = (ref: string | undefined): string => ref ?? 'HEAD';

/**
 * Reads the record of `ref` from `refs.json`.
 *
 * @returns the record, or `undefined` when the file is missing, unreadable or has none for the ref.
 */
export async function readRefRecord(cache: RemoteCache, ref: string | undefined): Promise<RefRecord | undefined> {
  try {
    const parsed = JSON.parse(await fsp.readFile(cache.refsFile, 'utf8')) as { refs?: Record<string, RefRecord> };
    const record = parsed.refs?.[refKey(ref)];
    if (
      record === undefined ||
      !/^[0-9a-f]{40,64}$/u.test(record.commit) ||
      !['branch', 'tag', 'commit'].includes(record.kind)
    )
      return undefined;
    return record;
  } catch {
    return undefined;
  }
}

/**
 * Records what `ref` resolved to, atomically (written beside, then renamed over `refs.json`).
 *
 * @throws the file system's error when the cache is not writable.
 */
export async function writeRefRecord(cache: RemoteCache, ref: string | undefined, record: RefRecord): Promise<void> {
  let refs: Record<string, RefRecord>;
  try {
    refs = (JSON.parse(await fsp.readFile(cache.refsFile, 'utf8')) as { refs?: Record<string, RefRecord> }).refs ?? {};
  } catch {
    refs = {};
  }
  refs[refKey(ref)] = record;
  const temp = `${cache.refsFile}.${process.pid}.${Date.now()}.tmp`;
  await fsp.writeFile(temp, `${JSON.stringify({ version: 1, refs }, null, 2)}\n`);
  await fsp.rename(temp, cache.refsFile);
}

/** Whether a directory exists (a materialized tree is complete once it does). */
export async function directoryExists(dir: string): Promise<boolean> {
  try {
    return (await fsp.stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Removes trees left half-written under `tmp/` by a process that no longer runs (their names carry the writer's pid:
 * `<name>.<pid>.<random>`). Trees of live processes, this one included, are left alone.
 *
 * @param cache the remote's cache paths.
 * @param isAlive whether a process id runs (default: `process.kill(pid, 0)` succeeds or is refused with `EPERM`).
 * @returns the names removed.
 */
export async function removeAbandonedTrees(
  cache: RemoteCache,
  isAlive: (pid: number) => boolean = processIsAlive,
): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir(cache.tmpDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(/\.(\d+)\.[0-9a-f]+$/u.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    await fsp.rm(path.join(cache.tmpDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
