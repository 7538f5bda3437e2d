/**
 * Symlink policy on real trees (docs/ARCHITECTURE.md, "Policies": symlinks): links whose real path stays inside a
 * served root are followed; links out of the roots (including a sibling whose name merely starts with the root's),
 * dangling links and loops are skipped with exactly one warning each, and the rest of the skill is still served.
 */
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import { fileOnDisk } from '../helpers/disk.js';
import { addToTree, skillMd, tempTrees } from '../helpers/tree.js';
import {
  buildOne,
  childrenOf,
  diagKeys,
  expectSnapshotMatchesDisk,
  resourcesOf,
  servedFileUris,
  skillUris,
} from './snapshot.js';

const LOOP_TIMEOUT_MS = 10_000;

describe('symlinks', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());
  const { tree } = temps;

  it('serves a link to a file inside the root under the link name, with the digest of its target', async () => {
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with file links.'),
      's/real.md': 'Real file body.\n',
      's/alias.md': { symlink: 'real.md' },
      's/common.md': { symlink: '../shared/common.md' },
      'shared/common.md': 'Shared outside any skill, inside the root.\n',
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual([
      fileOnDisk('skill://s/SKILL.md', path.join(root, 's/SKILL.md')),
      fileOnDisk('skill://s/alias.md', path.join(root, 's/real.md')),
      fileOnDisk('skill://s/common.md', path.join(root, 'shared/common.md')),
      fileOnDisk('skill://s/real.md', path.join(root, 's/real.md')),
    ]);
    expect(findFile(snapshot, 'skill://s/alias.md')?.path).toBe(path.join(root, 's/real.md'));
    expect(findFile(snapshot, 'skill://s/common.md')?.path).toBe(path.join(root, 'shared/common.md'));
    expectSnapshotMatchesDisk(snapshot);
  });

  it('serves the files of a linked directory inside the root under the link path', async () => {
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with directory links.'),
      's/refs/deep.md': 'Deep reference.\n',
      's/more': { symlink: 'refs' },
      's/lib': { symlink: '../library' },
      'library/topic.md': 'Library topic.\n',
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual([
      fileOnDisk('skill://s/SKILL.md', path.join(root, 's/SKILL.md')),
      fileOnDisk('skill://s/lib/topic.md', path.join(root, 'library/topic.md')),
      fileOnDisk('skill://s/more/deep.md', path.join(root, 's/refs/deep.md')),
      fileOnDisk('skill://s/refs/deep.md', path.join(root, 's/refs/deep.md')),
    ]);
    expect(childrenOf(snapshot, 'skill://s')?.map((child) => [child.uri, child.mimeType])).toEqual([
      ['skill://s/SKILL.md', 'text/markdown'],
      ['skill://s/lib', 'inode/directory'],
      ['skill://s/more', 'inode/directory'],
      ['skill://s/refs', 'inode/directory'],
    ]);
    expect(childrenOf(snapshot, 'skill://s/more')?.map((child) => child.uri)).toEqual(['skill://s/more/deep.md']);
    expectSnapshotMatchesDisk(snapshot);
  });

  it('skips a link to a file outside the root with one warning and serves the rest of the skill', async () => {
    const outside = await tree({ 'secret.md': 'Outside the root.\n' });
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with a link out of the root.'),
      's/notes.md': 'Notes.\n',
      's/leak.md': { symlink: path.join(outside, 'secret.md') },
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'symlink-outside-root', file: path.join(root, 's/leak.md') },
    ]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md')).map((row) => row.uri)).toEqual([
      'skill://s/SKILL.md',
      'skill://s/notes.md',
    ]);
    expect(findFile(snapshot, 'skill://s/leak.md')).toBeUndefined();
  });

  it('skips a link to a directory outside the root with one warning', async () => {
    const outside = await tree({ 'a.md': 'A.\n', 'b/c.md': 'C.\n' });
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill linking a folder out of the root.'),
      's/ext': { symlink: outside },
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'symlink-outside-root', file: path.join(root, 's/ext') },
    ]);
    expect(skillUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    expect(findDirectory(snapshot, 'skill://s/ext')).toBeUndefined();
  });

  it('treats a sibling whose name starts with the root name (skills-secret next to skills) as outside', async () => {
    const base = await temps.tempDir();
    await addToTree(base, {
      'skills/s/SKILL.md': skillMd('s', 'Skill next to a look-alike folder.'),
      'skills/s/ok.md': 'OK.\n',
      'skills-secret/file.md': 'Not to be served.\n',
      'skills/s/leak.md': { symlink: '../../skills-secret/file.md' },
      'skills/s/leakdir': { symlink: path.join(base, 'skills-secret') },
    });
    const root = path.join(base, 'skills');
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'symlink-outside-root', file: path.join(root, 's/leak.md') },
      { severity: 'warning', rule: 'symlink-outside-root', file: path.join(root, 's/leakdir') },
    ]);
    expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md', 'skill://s/ok.md']);
  });

  it('skips a dangling link with one warning', async () => {
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with a dangling link.'),
      's/broken.md': { symlink: 'missing.md' },
      's/ok.md': 'OK.\n',
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'symlink-dangling', file: path.join(root, 's/broken.md') },
    ]);
    expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md', 'skill://s/ok.md']);
  });

  it.each([
    ['its own folder', 's/loop', '.'],
    ['the skill from a subfolder', 's/refs/up', '..'],
    ['the root itself', 's/to-root', '..'],
  ])(
    'skips a directory link to %s with symlink-loop, and terminates',
    async (_case, link, target) => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill with a looping link.'),
        's/refs/r.md': 'R.\n',
        [link]: { symlink: target },
      });
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual([{ severity: 'warning', rule: 'symlink-loop', file: path.join(root, link) }]);
      expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md')).map((row) => row.uri)).toEqual([
        'skill://s/SKILL.md',
        'skill://s/refs/r.md',
      ]);
    },
    LOOP_TIMEOUT_MS,
  );

  it(
    'walks two folders linking to each other once each way, then reports the loop',
    async () => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill with mutually linked folders.'),
        's/a/x.md': 'X.\n',
        's/b/y.md': 'Y.\n',
        's/a/to-b': { symlink: '../b' },
        's/b/to-a': { symlink: '../a' },
      });
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual([
        { severity: 'warning', rule: 'symlink-loop', file: path.join(root, 's/a/to-b/to-a') },
        { severity: 'warning', rule: 'symlink-loop', file: path.join(root, 's/b/to-a/to-b') },
      ]);
      expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual([
        fileOnDisk('skill://s/SKILL.md', path.join(root, 's/SKILL.md')),
        fileOnDisk('skill://s/a/to-b/y.md', path.join(root, 's/b/y.md')),
        fileOnDisk('skill://s/a/x.md', path.join(root, 's/a/x.md')),
        fileOnDisk('skill://s/b/to-a/x.md', path.join(root, 's/a/x.md')),
        fileOnDisk('skill://s/b/y.md', path.join(root, 's/b/y.md')),
      ]);
    },
    LOOP_TIMEOUT_MS,
  );

  it(
    'skips self-referencing and mutually referencing links (ELOOP) with one warning each',
    async () => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill with self links.'),
        's/a': { symlink: 'a' },
        's/x': { symlink: 'y' },
        's/y': { symlink: 'x' },
      });
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual(
        ['s/a', 's/x', 's/y'].map((rel) => ({ severity: 'warning', rule: 'symlink-loop', file: path.join(root, rel) })),
      );
      expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    },
    LOOP_TIMEOUT_MS,
  );

  it('serves a root given through a symlink, following links inside it', async () => {
    const real = await tree({
      's/SKILL.md': skillMd('s', 'Skill under a linked root.'),
      's/real.md': 'Real.\n',
      's/alias.md': { symlink: 'real.md' },
    });
    const holder = await tree({ 'root-link': { symlink: real } });
    const snapshot = await buildOne(path.join(holder, 'root-link'));
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md')).map((row) => row.uri)).toEqual([
      'skill://s/SKILL.md',
      'skill://s/alias.md',
      'skill://s/real.md',
    ]);
    expect(findFile(snapshot, 'skill://s/alias.md')?.path).toBe(path.join(real, 's/real.md'));
  });
});
