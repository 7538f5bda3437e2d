/**
 * The cache of git roots (docs/git-roots.md, "Versions"): where it is, and its layout.
 *
 *   <cache>/git/<host>-<repo>-<hash>/          one directory per remote URL (hash of the credential-free URL)
 *     repo.git/                                a bare, shallow repository holding the fetched objects
 *     repo.git.lock                            held while a process fetches into repo.git (`lock.ts`)
 *     refs.json                                what each ref resolved to at its last fetch (for offline starts)
 *     refs.json.lock                           held while a process rewrites refs.json
 *     trees/<commit>[-<subdir hash>]/          a materialized tree, complete once it exists (renamed into place)
 *     tmp/<tree>.<host>.<pid>.<random>/        trees being written
 *
 * A tree directory is immutable once renamed into place: its name is the commit (and subdirectory) it holds. Several
 * processes (on several hosts, over a shared volume) may use one cache at once: writes to `repo.git` and `refs.json`
 * take turns through their lock files; trees are written apart and renamed into place, the first one in wins.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { HOST, processIsAlive, STALE_MS, withLock } from './lock.js';
import type { GitRemote } from './url.js';

/** First hex digits of a sha256, for directory names. */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * The lock file of a bare repository of the cache: held while a process writes it (fetches).
 *
 * @param gitDir the repository (`RemoteCache.gitDir`).
 */
export function repositoryLockFile(gitDir: string): string {
  return `${gitDir}.lock`;
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
 * Records what `ref` resolved to, atomically (written beside, then renamed over `refs.json`), holding
 * `refs.json.lock` so that processes recording different refs at once keep each other's records.
 *
 * @throws the file system's error when the cache is not writable; `LockTimeoutError` when another process holds the
 *   lock for over twice `STALE_MS` (and keeps it alive).
 */
export async function writeRefRecord(cache: RemoteCache, ref: string | undefined, record: RefRecord): Promise<void> {
  await withLock(
    `${cache.refsFile}.lock`,
    async () => {
      let refs: Record<string, RefRecord>;
      try {
        refs =
          (JSON.parse(await fsp.readFile(cache.refsFile, 'utf8')) as { refs?: Record<string, RefRecord> }).refs ?? {};
      } catch {
        refs = {};
      }
      refs[refKey(ref)] = record;
      const temp = `${cache.refsFile}.${process.pid}.${Date.now()}.tmp`;
      await fsp.writeFile(temp, `${JSON.stringify({ version: 1, refs }, null, 2)}\n`);
      await fsp.rename(temp, cache.refsFile);
    },
    { timeoutMs: 2 * STALE_MS },
  );
}

/** Whether a directory exists (a materialized tree is complete once it does). */
export async function directoryExists(dir: string): Promise<boolean> {
  try {
    return (await fsp.stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** This host's name as it appears in the names under `tmp/` (dots and other separators made `_`). */
const HOST_PART = HOST.replace(/[^A-Za-z0-9-]+/gu, '_') || 'host';

/** Age past which a tree under `tmp/` written on another host is abandoned (ms): no write takes a day. */
const FOREIGN_TEMP_MS = 24 * 60 * 60 * 1000;

/**
 * The name under `tmp/` of a tree being written by this process: `<final name>.<host>.<pid>.<random>`.
 *
 * @param finalName the tree directory's name under `trees/`.
 */
export function tempTreeName(finalName: string): string {
  return `${finalName}.${HOST_PART}.${process.pid}.${randomBytes(4).toString('hex')}`;
}

/**
 * Removes trees left half-written under `tmp/` by a process that no longer runs (their names carry the writer's host
 * and pid, see {@link tempTreeName}; names of earlier versions, without the host, count as this host's). Trees of
 * live processes, this one included, are left alone; a tree of another host (a replica sharing the volume) is
 * removed once it is a day old.
 *
 * @param cache the remote's cache paths.
 * @param isAlive whether a process id of this host runs (default: `process.kill(pid, 0)` succeeds or is refused
 *   with `EPERM`).
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
    const match = /(?:\.([A-Za-z0-9_-]+))?\.(\d+)\.[0-9a-f]+$/u.exec(name);
    const pid = Number(match?.[2]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const host = match?.[1] ?? HOST_PART;
    const abandoned =
      host === HOST_PART ? !isAlive(pid) : await olderThan(path.join(cache.tmpDir, name), FOREIGN_TEMP_MS);
    if (!abandoned) continue;
    await fsp.rm(path.join(cache.tmpDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Whether a file was last modified more than `ageMs` ago (false when it is gone). */
async function olderThan(file: string, ageMs: number): Promise<boolean> {
  try {
    return Date.now() - (await fsp.stat(file)).mtimeMs > ageMs;
  } catch {
    return false;
  }
}
