/**
 * The git-root cache on real directories and real git: roots of one repository share its cache safely, trees left
 * half-written by a dead process are removed, and a missing git binary is a clear error.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { remoteCache, removeAbandonedTrees } from '../../src/roots/git/cache.js';
import { parseGitUrl } from '../../src/roots/git/url.js';
import { committedTree, createRemote, diskTree, isolatedGitEnv } from '../helpers/git-repo.js';
import { gitSpec, makeGitRoot } from '../helpers/git-root.js';
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

  it('removes trees half-written by processes that no longer run, and keeps those of live ones', async () => {
    const cache = remoteCache(await makeTempDir(), parseGitUrl('https://example.invalid/x.git'));
    await fsp.mkdir(cache.tmpDir, { recursive: true });
    for (const name of ['abc.111.0badc0de', `abc.${process.pid}.12345678`, 'unrelated'])
      await fsp.mkdir(path.join(cache.tmpDir, name));
    expect(await removeAbandonedTrees(cache, (pid) => pid === process.pid)).toEqual(['abc.111.0badc0de']);
    expect((await fsp.readdir(cache.tmpDir)).sort()).toEqual([`abc.${process.pid}.12345678`, 'unrelated']);
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
