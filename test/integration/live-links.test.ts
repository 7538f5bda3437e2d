/**
 * A change behind a symlink reaches every skill that serves the file under another name: the watcher reports it at
 * the target's own path, and the live index rebuilds the regions linking to it (real trees, real builder).
 */
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot, IndexBuilder } from '../../src/index/build.js';
import { digestOf } from '../../src/index/record.js';
import { findFile } from '../../src/index/snapshot.js';
import { SnapshotStore } from '../../src/index/store.js';
import type { Snapshot } from '../../src/index/types.js';
import { LiveIndex } from '../../src/watch/live-index.js';
import { sha256 } from '../helpers/disk.js';
import { skillMd, tempTrees } from '../helpers/tree.js';

const temps = tempTrees();
afterEach(() => temps.removeAll());

it('rebuilds the skills that link to a changed file, a file outside every skill, and a linked directory', async () => {
  const root = await temps.tree({
    'shared/common.md': 'v1\n',
    'shared/dir/deep.md': 'deep v1\n',
    's/SKILL.md': skillMd('s', 'Links to shared files.'),
    's/common.md': { symlink: '../shared/common.md' },
    's/dir': { symlink: '../shared/dir' },
    's/own.md': 'own v1\n',
    't/SKILL.md': skillMd('t', 'Links into skill s.'),
    't/peer.md': { symlink: '../s/own.md' },
  });
  const store = new SnapshotStore((error) => {
    throw error;
  });
  const live = new LiveIndex(new IndexBuilder([{ dir: root, prefix: [] }]), store, () => undefined);
  await live.buildAll();
  const served = (uri: string): string | undefined => {
    const file = findFile(store.current, uri);
    return file === undefined ? undefined : digestOf(file.node);
  };

  await writeFile(path.join(root, 'shared/common.md'), 'v2 longer\n');
  await live.apply([{ rootIndex: 0, kind: 'change', rel: 'shared/common.md' }]);
  expect(served('skill://s/common.md')).toBe(sha256('v2 longer\n'));

  await writeFile(path.join(root, 'shared/dir/deep.md'), 'deep v2\n');
  await live.apply([{ rootIndex: 0, kind: 'change', rel: 'shared/dir/deep.md' }]);
  expect(served('skill://s/dir/deep.md')).toBe(sha256('deep v2\n'));

  await writeFile(path.join(root, 'shared/dir/new.md'), 'new\n');
  await live.apply([{ rootIndex: 0, kind: 'rename', rel: 'shared/dir/new.md' }]);
  expect(served('skill://s/dir/new.md')).toBe(sha256('new\n'));

  await writeFile(path.join(root, 's/own.md'), 'own v2\n');
  await live.apply([{ rootIndex: 0, kind: 'change', rel: 's/own.md' }]);
  expect(served('skill://s/own.md')).toBe(sha256('own v2\n'));
  expect(served('skill://t/peer.md')).toBe(sha256('own v2\n'));
});

describe.each(['within', 'skip'] as const)('a link that appears while serving, --symlinks %s', (symlinks) => {
  it('is judged as a full build judges it: a link to a folder outside the root, and a dangling one', async () => {
    const outside = await temps.tree({ 'secret-skill/SKILL.md': skillMd('secret-skill', 'Outside the root.') });
    const root = await temps.tree({ 'a/SKILL.md': skillMd('a', 'Inside the root.') });
    const store = new SnapshotStore((error) => {
      throw error;
    });
    const live = new LiveIndex(new IndexBuilder([{ dir: root, prefix: [] }], { symlinks }), store, () => undefined);
    await live.buildAll();

    await symlink(outside, path.join(root, 'pack'));
    await symlink('/nonexistent-skills-serve-target', path.join(root, 'dangling'));
    await live.apply([
      { rootIndex: 0, kind: 'rename', rel: 'pack' },
      { rootIndex: 0, kind: 'rename', rel: 'dangling' },
    ]);
    const fresh = await buildSnapshot([{ dir: root, prefix: [] }], { symlinks });
    const view = (snapshot: Snapshot): unknown => ({
      skills: snapshot.ordered.map((skill) => skill.uri),
      diagnostics: snapshot.diagnostics.map(({ rule, file }) => ({ rule, file })),
    });
    expect(view(store.current)).toEqual(view(fresh));
    expect(view(store.current)).toEqual({
      skills: ['skill://a/SKILL.md'],
      diagnostics: [
        {
          rule: symlinks === 'skip' ? 'symlink-skipped' : 'symlink-dangling',
          file: path.join(root, 'dangling'),
        },
        {
          rule: symlinks === 'skip' ? 'symlink-skipped' : 'symlink-outside-root',
          file: path.join(root, 'pack'),
        },
      ],
    });
  });
});
