/**
 * `.skillsignore` files (gitignore syntax, any directory) and the `--symlinks` policy, on real trees: applied
 * identically by full builds and by partial rebuilds of one region.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot, IndexBuilder } from '../../src/index/build.js';
import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { childrenOf, resourcesOf } from './snapshot.js';

const temps = tempTrees();
afterEach(() => temps.removeAll());
const { tree } = temps;
const uris = (snapshot: Snapshot, skill: string): string[] =>
  resourcesOf(findSkill(snapshot, skill)).map((row) => row.uri);

describe('.skillsignore', () => {
  it('honours a .skillsignore file in a skill (gitignore syntax: names, dir/, globs, !negation)', async () => {
    const root = await tree({
      'visible/SKILL.md': skillMd('visible', 'Visible skill.'),
      'visible/.skillsignore': '# drafts are private\nnotes.md\ndrafts/\n*.tmp\n!keep.tmp\n',
      'visible/notes.md': 'Private notes.\n',
      'visible/drafts/wip.md': 'Work in progress.\n',
      'visible/a.tmp': 'scratch\n',
      'visible/keep.tmp': 'kept\n',
      'visible/guide.md': 'Guide.\n',
    });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(uris(snapshot, 'skill://visible/SKILL.md')).toEqual([
      'skill://visible/SKILL.md',
      'skill://visible/guide.md',
      'skill://visible/keep.tmp',
    ]);
    expect(findFile(snapshot, 'skill://visible/notes.md')).toBeUndefined();
    expect(findDirectory(snapshot, 'skill://visible/drafts')).toBeUndefined();
    expect(childrenOf(snapshot, 'skill://visible')?.map((child) => child.name)).toEqual([
      'SKILL.md',
      'guide.md',
      'keep.tmp',
    ]);
    expect(snapshot.diagnostics).toEqual([]);
  });

  it('a root .skillsignore can hide whole skills; a deeper one can re-include a name', async () => {
    const root = await tree({
      '.skillsignore': 'experimental/\n*.secret\n',
      'experimental/SKILL.md': skillMd('experimental', 'Not ready.'),
      'stable/SKILL.md': skillMd('stable', 'Ready.'),
      'stable/a.secret': 'hidden\n',
      'stable/sub/.skillsignore': '!b.secret\n',
      'stable/sub/b.secret': 'shown\n',
    });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(snapshot.ordered.map((skill) => skill.uri)).toEqual(['skill://stable/SKILL.md']);
    expect(uris(snapshot, 'skill://stable/SKILL.md')).toEqual([
      'skill://stable/SKILL.md',
      'skill://stable/sub/b.secret',
    ]);
  });

  it('a partial rebuild of one region applies the .skillsignore files above it exactly as a full build does', async () => {
    const root = await tree({
      '.skillsignore': 'secret.md\n',
      'group/.skillsignore': 'draft.md\n',
      'group/one/SKILL.md': skillMd('one', 'One.'),
      'group/one/secret.md': 'x\n',
      'group/one/draft.md': 'y\n',
      'group/one/ok.md': 'z\n',
    });
    const builder = new IndexBuilder([{ dir: root, prefix: [] }]);
    const full = await builder.buildAll();
    const partial = await builder.rebuild([{ rootIndex: 0, rel: 'group/one' }]);
    const expected = ['skill://group/one/SKILL.md', 'skill://group/one/ok.md'];
    expect(uris(full, 'skill://group/one/SKILL.md')).toEqual(expected);
    expect(uris(partial, 'skill://group/one/SKILL.md')).toEqual(expected);
  });
});

describe('--symlinks', () => {
  async function linkedTree(): Promise<{ root: string; outside: string }> {
    const outside = await temps.tempDir();
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with links.'),
      's/real.md': 'real\n',
      's/inside.md': { symlink: 'real.md' },
      's/outside.md': { symlink: path.join(outside, 'secret.md') },
    });
    await writeFile(path.join(outside, 'secret.md'), 'outside\n');
    return { root, outside };
  }

  it.each([
    ['within', ['skill://s/SKILL.md', 'skill://s/inside.md', 'skill://s/real.md'], ['symlink-outside-root']],
    ['skip', ['skill://s/SKILL.md', 'skill://s/real.md'], ['symlink-skipped', 'symlink-skipped']],
    ['follow', ['skill://s/SKILL.md', 'skill://s/inside.md', 'skill://s/outside.md', 'skill://s/real.md'], []],
  ] as const)('%s', async (policy, expected, rules) => {
    const { root } = await linkedTree();
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }], { symlinks: policy });
    expect(uris(snapshot, 'skill://s/SKILL.md')).toEqual(expected);
    expect(snapshot.diagnostics.map((diagnostic) => diagnostic.rule)).toEqual(rules);
  });
});
