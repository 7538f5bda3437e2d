/**
 * Several roots (first root wins a conflict; prefixes; links between roots; unusable roots) and the shape of the
 * snapshot itself: metadata only, never file contents, frozen.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/index/build.js';
import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { makeTree, removeTree, SAMPLE_SKILLS_DIR, skillMd, tempTrees } from '../helpers/tree.js';
import { diagKeys, expectSnapshotMatchesDisk, resourcesOf, rowOnDisk, skillUris } from './expect-disk.js';

describe('multiple roots', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());
  const { tree } = temps;

  it('serves the first root\'s `dup` and reports one skill-path-conflict naming both roots', async () => {
    const first = await tree({ 'dup/SKILL.md': skillMd('dup', 'The first root\'s dup.'), 'dup/a.md': 'From the first root.\n' });
    const second = await tree({
      'dup/SKILL.md': skillMd('dup', 'The second root\'s dup.'),
      'dup/b.md': 'From the second root.\n',
      'other/SKILL.md': skillMd('other', 'Only in the second root.'),
    });
    const snapshot = await buildSnapshot([{ dir: first, prefix: [] }, { dir: second, prefix: [] }], 1);
    expect(skillUris(snapshot)).toEqual(['skill://dup/SKILL.md', 'skill://other/SKILL.md']);
    const dup = findSkill(snapshot, 'skill://dup/SKILL.md');
    expect(dup?.rootIndex).toBe(0);
    expect(dup?.dir).toBe(path.join(first, 'dup'));
    expect(dup?.description).toBe('The first root\'s dup.');
    expect(resourcesOf(dup)).toEqual([
      await rowOnDisk('skill://dup/SKILL.md', path.join(first, 'dup/SKILL.md')),
      await rowOnDisk('skill://dup/a.md', path.join(first, 'dup/a.md')),
    ]);
    expect(findFile(snapshot, 'skill://dup/b.md')).toBeUndefined();
    expect(findDirectory(snapshot, 'skill://dup')?.map((child) => child.uri)).toEqual(['skill://dup/SKILL.md', 'skill://dup/a.md']);
    expect(findSkill(snapshot, 'skill://other/SKILL.md')?.rootIndex).toBe(1);
    expect(diagKeys(snapshot)).toEqual([{ severity: 'error', rule: 'skill-path-conflict', file: path.join(second, 'dup') }]);
    const message = snapshot.diagnostics[0]?.message ?? '';
    expect(message).toContain(first);
    expect(message).toContain(second);
    await expectSnapshotMatchesDisk(snapshot);
  });

  it.each([
    ['a later skill enclosing an earlier one', 'acme/refunds', 'acme', 'acme'],
    ['a later skill inside an earlier one', 'tools', 'tools/extra', 'tools/extra'],
  ])('drops %s', async (_case, firstPath, secondPath, droppedPath) => {
    const first = await tree({ [`${firstPath}/SKILL.md`]: skillMd(firstPath.split('/').at(-1) ?? '', 'From the first root.') });
    const second = await tree({ [`${secondPath}/SKILL.md`]: skillMd(secondPath.split('/').at(-1) ?? '', 'From the second root.') });
    const snapshot = await buildSnapshot([{ dir: first, prefix: [] }, { dir: second, prefix: [] }], 1);
    expect(skillUris(snapshot)).toEqual([`skill://${firstPath}/SKILL.md`]);
    expect(diagKeys(snapshot)).toEqual([{ severity: 'error', rule: 'skill-path-conflict', file: path.join(second, droppedPath) }]);
  });

  it('keeps both when the second root is mounted under a prefix', async () => {
    const first = await tree({ 'dup/SKILL.md': skillMd('dup', 'First.') });
    const second = await tree({ 'dup/SKILL.md': skillMd('dup', 'Second.'), 'dup/b.md': 'B.\n' });
    const snapshot = await buildSnapshot([{ dir: first, prefix: [] }, { dir: second, prefix: ['team', 'x'] }], 1);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://dup/SKILL.md', 'skill://team/x/dup/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://team/x/dup/SKILL.md'))).toEqual([
      await rowOnDisk('skill://team/x/dup/SKILL.md', path.join(second, 'dup/SKILL.md')),
      await rowOnDisk('skill://team/x/dup/b.md', path.join(second, 'dup/b.md')),
    ]);
    expect(findDirectory(snapshot, 'skill://team')).toEqual([{ uri: 'skill://team/x', name: 'x', mimeType: 'inode/directory' }]);
    expect(findDirectory(snapshot, 'skill://team/x')).toEqual([{ uri: 'skill://team/x/dup', name: 'dup', mimeType: 'inode/directory' }]);
  });

  it('follows a link from one root into another served root', async () => {
    const second = await tree({ 'shared/common.md': 'Shared between roots.\n' });
    const first = await tree({ 's/SKILL.md': skillMd('s', 'Links into the other root.'), 's/common.md': { symlink: path.join(second, 'shared/common.md') } });
    const snapshot = await buildSnapshot([{ dir: first, prefix: [] }, { dir: second, prefix: [] }], 1);
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toContainEqual(await rowOnDisk('skill://s/common.md', path.join(second, 'shared/common.md')));
  });

  it('reports an unusable root once and serves the others, keeping their root index', async () => {
    const missing = path.join(await temps.tempDir(), 'does-not-exist');
    const good = await tree({ 's/SKILL.md': skillMd('s', 'In the usable root.') });
    const snapshot = await buildSnapshot([{ dir: missing, prefix: [] }, { dir: good, prefix: [] }], 1);
    expect(diagKeys(snapshot)).toEqual([{ severity: 'warning', rule: 'root-unusable', file: missing }]);
    expect(skillUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    expect(findSkill(snapshot, 'skill://s/SKILL.md')?.rootIndex).toBe(1);
  });

  it('builds an empty snapshot for no roots and for a root without skills', async () => {
    const empty = await tree({ 'notes/readme.md': 'No skills here.\n' });
    for (const roots of [[], [{ dir: empty, prefix: [] }]]) {
      const snapshot = await buildSnapshot(roots, 3);
      expect({ skills: snapshot.skills.size, files: snapshot.files.size, dirs: snapshot.dirs.size, diagnostics: snapshot.diagnostics, generation: snapshot.generation })
        .toEqual({ skills: 0, files: 0, dirs: 0, diagnostics: [], generation: 3 });
    }
  });
});

describe('snapshot shape', () => {
  let root = '';
  afterEach(async () => {
    await removeTree(root);
  });

  const BODY_SENTENCE = 'The quick zebra audits seventeen ledgers before dawn.';
  const FILE_SENTENCE = 'Purple turbines hum quietly beneath the glacier.';

  function serialize(snapshot: Snapshot): string {
    return JSON.stringify({
      skills: [...snapshot.skills],
      ordered: snapshot.ordered,
      files: [...snapshot.files],
      dirs: [...snapshot.dirs],
      diagnostics: snapshot.diagnostics,
    });
  }

  it('holds metadata only: no file bodies, no byte buffers', async () => {
    root = await makeTree({
      's/SKILL.md': `${skillMd('s', 'Skill whose body must not be kept.')}\n${BODY_SENTENCE}\n`,
      's/ref.md': `${FILE_SENTENCE}\n`,
    });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }, { dir: SAMPLE_SKILLS_DIR, prefix: ['sample'] }], 1);
    expect(snapshot.diagnostics).toEqual([]);
    expect(snapshot.skills.size).toBe(7);
    const text = serialize(snapshot);
    expect(text).not.toContain(BODY_SENTENCE);
    expect(text).not.toContain(FILE_SENTENCE);
    expect(text).not.toContain('"type":"Buffer"');
    const seen = new Set<unknown>();
    const visit = (value: unknown): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      expect(ArrayBuffer.isView(value) || value instanceof ArrayBuffer).toBe(false);
      const children = value instanceof Map ? [...value.entries()] : Object.values(value);
      for (const child of children) visit(child);
    };
    visit(snapshot);
  });

  it('freezes the snapshot and every entry deeply', async () => {
    root = await makeTree({ 's/SKILL.md': skillMd('s', 'Frozen skill.', 'metadata:\n  team: core'), 's/a.md': 'A.\n' });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }], 1);
    const skill = findSkill(snapshot, 'skill://s/SKILL.md');
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(Object.isFrozen(snapshot.ordered)).toBe(true);
    expect(Object.isFrozen(skill)).toBe(true);
    expect(Object.isFrozen(skill?.entry)).toBe(true);
    expect(Object.isFrozen(skill?.entry.frontmatter)).toBe(true);
    expect(Object.isFrozen(skill?.entry.frontmatter['metadata'])).toBe(true);
    expect(Object.isFrozen(skill?.entry.resources)).toBe(true);
    expect(resourcesOf(skill).every((row) => Object.isFrozen(row))).toBe(true);
    expect(Object.isFrozen(findFile(snapshot, 'skill://s/a.md'))).toBe(true);
    expect(Object.isFrozen(findDirectory(snapshot, 'skill://s'))).toBe(true);
  });
});
