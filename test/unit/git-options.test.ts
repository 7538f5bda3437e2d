/**
 * Git-root options and cache layout (pure): where the cache is, the flag parsers with their ranges, the cache path of
 * a remote, and the provenance `_meta` object.
 */
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { cacheDirArgument, resolveCacheDir } from '../../src/cache-dir.js';
import { parseByteSize, parseGitMaxFiles, parseGitPollMs } from '../../src/cli/options.js';
import { remoteCache, treeDir } from '../../src/roots/git/cache.js';
import { PROVENANCE_META_KEY, provenanceMeta } from '../../src/roots/git/provenance.js';
import { DEFAULT_GIT_POLL_MS } from '../../src/roots/git/settings.js';
import { parseGitUrl } from '../../src/roots/git/url.js';

describe('resolveCacheDir', () => {
  const base = { env: {}, home: '/home/u', platform: 'linux' as const, cwd: '/work' };
  it.each([
    [{ ...base, flag: './cache' }, path.resolve('/work/cache')],
    [{ ...base, flag: '/c', env: { SKILLS_SERVE_CACHE_DIR: '/env' } }, path.resolve('/c')],
    [{ ...base, env: { SKILLS_SERVE_CACHE_DIR: '/env', XDG_CACHE_HOME: '/xdg' } }, path.resolve('/env')],
    [{ ...base, env: { SKILLS_SERVE_CACHE_DIR: '  ', XDG_CACHE_HOME: '/xdg' } }, path.join('/xdg', 'skills-serve')],
    [{ ...base, env: { XDG_CACHE_HOME: 'relative' } }, path.join('/home/u', '.cache', 'skills-serve')],
    [{ ...base }, path.join('/home/u', '.cache', 'skills-serve')],
    [
      { ...base, platform: 'win32' as const, env: { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' } },
      path.join('C:\\Users\\u\\AppData\\Local', 'skills-serve', 'Cache'),
    ],
  ])('%j → %s', (inputs, expected) => {
    expect(resolveCacheDir(inputs)).toBe(expected);
  });
});

describe('cacheDirArgument (read before the parser, for the compile cache)', () => {
  it.each([
    [['node', 'cli', './skills'], undefined],
    [['node', 'cli', '--cache-dir', '/c', './skills'], '/c'],
    [['node', 'cli', '--cache-dir=/c', 'serve'], '/c'],
    [['node', 'cli', '--cache-dir', '/a', '--cache-dir=/b'], '/b'],
    [['node', 'cli', '--', '--cache-dir', '/c'], undefined],
    [['node', 'cli', '--cache-dir'], undefined],
  ])('%j → %j', (argv, expected) => {
    expect(cacheDirArgument(argv)).toBe(expected);
  });
});

describe('flag parsers', () => {
  it('--git-poll defaults to 5 minutes and accepts 1000 ms to one day', () => {
    expect(DEFAULT_GIT_POLL_MS).toBe(300_000);
    expect(parseGitPollMs('1000')).toBe(1000);
    expect(parseGitPollMs('86400000')).toBe(86_400_000);
    for (const text of ['999', '0', '-5', '1e4', '86400001', 'often']) {
      expect(() => parseGitPollMs(text)).toThrow(
        new RangeError(`--git-poll must be an integer from 1000 to 86400000 (got "${text}")`),
      );
    }
  });

  it('--git-max-files takes a positive integer', () => {
    expect(parseGitMaxFiles('50000')).toBe(50_000);
    expect(() => parseGitMaxFiles('0')).toThrow(RangeError);
  });

  it.each([
    ['1048576', 1_048_576],
    ['512MiB', 512 * 1024 * 1024],
    ['512m', 512 * 1024 * 1024],
    ['2G', 2 * 1024 ** 3],
    ['64 KiB', 64 * 1024],
  ])('size %s → %d bytes', (text, bytes) => {
    expect(parseByteSize(text, '--git-max-bytes')).toBe(bytes);
  });

  it.each(['0', '', '1.5G', '-1', '10TB', 'lots'])('refuses the size %j', (text) => {
    expect(() => parseByteSize(text, '--git-max-bytes')).toThrow(
      new RangeError(`--git-max-bytes must be a size in bytes, optionally with K, M or G (got "${text}")`),
    );
  });
});

describe('cache layout', () => {
  it('names a remote readably and uniquely, and a tree by its commit (and subdirectory)', () => {
    const a = remoteCache('/c', parseGitUrl('https://github.com/acme/skills.git'));
    const b = remoteCache('/c', parseGitUrl('https://github.com/other/skills.git'));
    expect(a.dir).toMatch(/^\/c\/git\/github\.com-skills-[0-9a-f]{16}$/u);
    expect(b.dir).not.toBe(a.dir);
    expect(a.gitDir).toBe(path.join(a.dir, 'repo.git'));
    const commit = 'c'.repeat(40);
    expect(treeDir(a, commit, '')).toBe(path.join(a.dir, 'trees', commit));
    expect(treeDir(a, commit, 'skills')).toMatch(new RegExp(`/trees/${commit}-[0-9a-f]{16}$`, 'u'));
    expect(treeDir(a, commit, 'skills')).not.toBe(treeDir(a, commit, 'other'));
    expect(remoteCache('/c', parseGitUrl('file:///srv/x.git')).dir).toMatch(/^\/c\/git\/local-x-[0-9a-f]{16}$/u);
  });
});

describe('provenanceMeta', () => {
  it('puts the provenance under the project key, not a key MCP reserves', () => {
    const provenance = {
      source: 'https://github.com/acme/skills.git',
      ref: 'v1',
      commit: 'c'.repeat(40),
      subdir: 'skills',
    };
    expect(provenanceMeta(provenance)).toEqual({ 'dev.skills-serve/source': provenance });
    expect(PROVENANCE_META_KEY.split('/')[0]?.split('.')).not.toContain('modelcontextprotocol');
    expect(PROVENANCE_META_KEY.split('/')[0]?.split('.')[1]).not.toBe('mcp');
  });
});
