/**
 * The cache of git roots (docs/git-roots.md, "Versions"): where it is, and its layout.
 *
 *   <cache>/git/<host>-<repo>-<hash>/          one directory per remote URL (hash of the credential-free URL)
 *     repo.git/                                a bare, shallow repository holding the fetched objects
 *     repo.git.lock                            held while a process fetches into repo.git (`lock.ts`)
 *     refs.json                                what each ref resolved to at its last fetch (for offline starts)
 *     refs.json.lock                           held while a process rewrites refs.json
 *     trees/<commit>[-<subdir hash>]/          a materialized tree, complete once it exists (renamed into place)
 *     users/<tree>/<host>.<pid>.<random>       one file per root (in any process) serving that tree
 *     tmp/<tree>.<host>.<pid>.<random>/        trees being written, or being removed
 *
 * A tree directory is immutable once renamed into place: its name is the commit (and subdirectory) it holds. Several
 * processes (on several hosts, over a shared volume) may use one cache at once: writes to `repo.git` and `refs.json`
 * take turns through their lock files; trees are written apart and renamed into place, the first one in wins; a
 * branch's old tree is removed by the last root that served it ({@link leaveTree}).
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
  readonly usersDir: string;
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
    usersDir: path.join(dir, 'users'),
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
 * A name for one root's registrations as a user of trees ({@link enterTree}): `<host>.<pid>.<random>`, so a user of
 * this host that no longer runs is told apart.
 */
export function treeUserName(): string {
  return tempTreeName('').slice(1);
}

/** The registrations of a tree's users. */
function usersOf(cache: RemoteCache, tree: string): string {
  return path.join(cache.usersDir, path.basename(tree));
}

/**
 * Registers `user` as serving `tree` (a directory under `trees/`), so that no other root sharing the cache removes it
 * meanwhile. Register before looking whether the tree is there: a tree found after registering stays.
 *
 * @throws the file system's error when the cache is not writable.
 */
export async function enterTree(cache: RemoteCache, tree: string, user: string): Promise<void> {
  const dir = usersOf(cache, tree);
  for (let attempt = 0; ; attempt++) {
    await fsp.mkdir(dir, { recursive: true });
    try {
      await fsp.writeFile(path.join(dir, user), '');
      return;
    } catch (error) {
      // The last user of the tree removed the directory between the two steps.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw error;
    }
  }
}

/**
 * Drops `user`'s registration for `tree` and, with `remove`, removes the tree when no other user that still runs is
 * registered: it is moved under `tmp/` first (atomic), the registrations are read again, and a tree someone
 * registered for meanwhile is moved back. Users of another host are trusted to run until they leave (a replica that
 * died leaves its trees behind rather than a tree removed under a live one).
 *
 * @param isAlive whether a process id of this host runs.
 * @returns whether the tree was removed.
 */
export async function leaveTree(
  cache: RemoteCache,
  tree: string,
  user: string,
  remove: boolean,
  isAlive: (pid: number) => boolean = processIsAlive,
): Promise<boolean> {
  const dir = usersOf(cache, tree);
  await fsp.rm(path.join(dir, user), { force: true });
  if (!remove || (await hasUsers(dir, isAlive))) return false;
  await fsp.mkdir(cache.tmpDir, { recursive: true });
  const aside = path.join(cache.tmpDir, tempTreeName(path.basename(tree)));
  try {
    await fsp.rename(tree, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  if (await hasUsers(dir, isAlive)) {
    // Someone found it before it moved: back it goes (unless the tree was written again meanwhile).
    await fsp.rename(aside, tree).catch(() => undefined);
    await fsp.rm(aside, { recursive: true, force: true });
    return false;
  }
  await fsp.rm(aside, { recursive: true, force: true });
  await fsp.rmdir(dir).catch(() => undefined);
  return true;
}

/** Whether a tree's registrations name a user that may run (dropping those of this host's gone processes). */
async function hasUsers(dir: string, isAlive: (pid: number) => boolean): Promise<boolean> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return false;
  }
  let users = 0;
  for (const name of names) {
    const match = /^([A-Za-z0-9_-]+)\.(\d+)\.[0-9a-f]+$/u.exec(name);
    if (match?.[1] === HOST_PART && !isAlive(Number(match[2]))) await fsp.rm(path.join(dir, name), { force: true });
    else users += 1;
  }
  return users > 0;
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
