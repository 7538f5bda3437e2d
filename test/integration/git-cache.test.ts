/**
 * The git-root cache on real directories and real git: roots of one repository share its cache safely, a branch's
 * old tree stays while another root sharing the cache serves it, trees left half-written by a dead process are
 * removed, a lock whose holder is gone is taken over, git's own lock files are contention, and a missing git binary is
 * a clear error.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { directoryExists, remoteCache, removeAbandonedTrees, tempTreeName } from '../../src/roots/git/cache.js';
import { HOST, LockTimeoutError, withLock } from '../../src/roots/git/lock.js';
import { gitLockInTheWay } from '../../src/roots/git/remote.js';
import { GIT_NETWORK_TIMEOUT_MS } from '../../src/roots/git/settings.js';
import { parseGitUrl } from '../../src/roots/git/url.js';
import { committedTree, createRemote, diskTree, isolatedGitEnv } from '../helpers/git-repo.js';
import { gitSpec, makeGitRoot, recordingLogger } from '../helpers/git-root.js';
import { makeTempDir, skillMd } from '../helpers/tree.js';

describe('git-root cache', () => {
  it('serves two subdirectories of one repository, started together, from one shared bare repository', async () => {
    const remote = await createRemote();
    const commit = await remote.commit({
      'a/one/SKILL.md': skillMd('one', 'One.'),
      'b/two/SKILL.md': skillMd('two', 'Two.'),
    });
    const cacheDir = await makeTempDir();
    const [a, b] = await Promise.all([
      (await makeGitRoot(gitSpec(remote.fileUrl, 'main:a'), { cacheDir })).start(),
      (await makeGitRoot(gitSpec(remote.fileUrl, 'main:b'), { cacheDir })).start(),
    ]);
    expect(await diskTree(a.root.dir)).toEqual(committedTree(remote.bare, commit, 'a'));
    expect(await diskTree(b.root.dir)).toEqual(committedTree(remote.bare, commit, 'b'));
    expect(await fsp.readdir(path.join(cacheDir, 'git'))).toHaveLength(1);
  });

  it("keeps a branch's old tree while another root sharing the cache serves it; its last user removes it", async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'one/SKILL.md': skillMd('one', 'One.') });
    const cacheDir = await makeTempDir();
    const writer = await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { cacheDir });
    const reader = await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { cacheDir });
    const written = await writer.start();
    const found = await reader.start();
    expect([written.materialized === undefined, found.materialized, found.root.dir]).toEqual([
      false,
      undefined,
      written.root.dir,
    ]);
    const second = await remote.commit({ 'two/SKILL.md': skillMd('two', 'Two.') });
    expect(await writer.pollNow()).toBe(true);
    await writer.release(written);
    // The writer moved on; the reader still serves the first commit's tree.
    expect(await diskTree(found.root.dir)).toEqual(committedTree(remote.bare, first));
    const moved = new Promise<string>((resolve) => reader.once('commit', (next) => resolve(next.provenance.commit)));
    expect(await reader.pollNow()).toBe(true);
    expect(await moved).toBe(second);
    await reader.release(found);
    expect(await directoryExists(found.root.dir)).toBe(false);
  });

  it('removes trees half-written by processes that no longer run, and keeps those of live ones', async () => {
    const cache = remoteCache(await makeTempDir(), parseGitUrl('https://example.invalid/x.git'));
    await fsp.mkdir(cache.tmpDir, { recursive: true });
    const mine = tempTreeName('abc');
    const otherHost = 'abc.other-host.111.0badc0de';
    for (const name of ['abc.111.0badc0de', `abc.${process.pid}.12345678`, mine, otherHost, 'unrelated'])
      await fsp.mkdir(path.join(cache.tmpDir, name));
    // A dead pid of this host (an older name without the host too); another host's tree is not this host's to judge.
    const deadHere = tempTreeName('abc').replace(`.${process.pid}.`, '.111.');
    await fsp.mkdir(path.join(cache.tmpDir, deadHere));
    expect((await removeAbandonedTrees(cache, (pid) => pid === process.pid)).sort()).toEqual(
      ['abc.111.0badc0de', deadHere].sort(),
    );
    expect((await fsp.readdir(cache.tmpDir)).sort()).toEqual(
      [`abc.${process.pid}.12345678`, mine, otherHost, 'unrelated'].sort(),
    );
  });

  it('takes over a lock whose holder on this host is gone, or that nobody touched; waits for a live one', async () => {
    const dir = await makeTempDir();
    const lockFile = path.join(dir, 'repo.git.lock');
    const owner = (pid: number, host = HOST) => JSON.stringify({ pid, host, token: 'x', acquiredAt: 0 });
    await fsp.writeFile(lockFile, owner(111));
    expect(await withLock(lockFile, async () => 'ran', { timeoutMs: 0, isAlive: () => false })).toBe('ran');
    expect(await fsp.readdir(dir)).toEqual([]);
    // Another host's holder, touched long ago.
    await fsp.writeFile(lockFile, owner(111, 'elsewhere'));
    const old = new Date(Date.now() - 60_000);
    await fsp.utimes(lockFile, old, old);
    expect(await withLock(lockFile, async () => 'ran', { timeoutMs: 0, staleMs: 30_000 })).toBe('ran');
    // A live holder: waited for, up to the bound.
    await fsp.writeFile(lockFile, owner(process.pid));
    await expect(withLock(lockFile, async () => 'ran', { timeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    // Released while waited for: the waiter runs then.
    const waiting = withLock(lockFile, async () => 'ran after', { timeoutMs: 15_000 });
    await fsp.rm(lockFile);
    expect(await waiting).toBe('ran after');
    // Turns in one process: never two tasks at once.
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        withLock(
          lockFile,
          async () => {
            most = Math.max(most, ++running);
            await new Promise((resolve) => setImmediate(resolve));
            running -= 1;
          },
          { timeoutMs: 15_000 },
        ),
      ),
    );
    expect(most).toBe(1);
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it("waits out git's own lock file in the repository and removes one older than the network timeout: no warning", async () => {
    const remote = await createRemote();
    await remote.commit({ 'one/SKILL.md': skillMd('one', 'One.') });
    const cacheDir = await makeTempDir();
    const logger = recordingLogger();
    const root = await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { cacheDir, logger });
    const first = await root.start();
    const second = await remote.commit({ 'two/SKILL.md': skillMd('two', 'Two.') });
    // What a git killed in the repository (SIGKILL, a crash) leaves behind: git itself refuses to go on.
    const shallowLock = path.join(path.dirname(path.dirname(first.root.dir)), 'repo.git', 'shallow.lock');
    await fsp.writeFile(shallowLock, '');
    const old = new Date(Date.now() - 2 * GIT_NETWORK_TIMEOUT_MS);
    await fsp.utimes(shallowLock, old, old);
    expect(await root.pollNow()).toBe(true);
    expect(await directoryExists(path.join(path.dirname(first.root.dir), second))).toBe(true);
    expect(logger.warnings()).toEqual([]);
  }, 60_000);

  it("reads git's own lock contention from its message, not as an unreachable remote", () => {
    expect(
      gitLockInTheWay(
        '/c/repo.git',
        "fatal: Unable to create '/c/repo.git/shallow.lock': File exists.\n\nAnother git process seems to be running",
      ),
    ).toBe('/c/repo.git/shallow.lock');
    expect(
      gitLockInTheWay(
        '/c/repo.git',
        "error: cannot lock ref 'refs/skills-serve/fetched': Unable to create '/c/repo.git/refs/skills-serve/fetched.lock': File exists.",
      ),
    ).toBe('/c/repo.git/refs/skills-serve/fetched.lock');
    expect(gitLockInTheWay('/c/repo.git', 'fatal: shallow file has changed since we read it')).toBe(
      '/c/repo.git/shallow.lock',
    );
    expect(gitLockInTheWay('/c/repo.git', "fatal: '/nowhere' does not appear to be a git repository")).toBeUndefined();
  });

  it('fails with a clear message when git is not installed', async () => {
    const root = await makeGitRoot(gitSpec('https://example.invalid/x.git', 'main'), {
      env: isolatedGitEnv({ PATH: '/nonexistent' }),
    });
    await expect(root.start()).rejects.toMatchObject({
      reason: 'git-unavailable',
      code: 'ROOT_UNUSABLE',
      message: 'git roots need the git program, which is not installed or not on PATH (install git 2.31 or later)',
    });
  });
});
