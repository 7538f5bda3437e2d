/**
 * Several roots (first root wins a conflict; prefixes; links between roots; unusable roots) and the shape of the
 * snapshot itself: metadata only, never file contents, frozen, each entry serialized once.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot, IndexBuilder } from '../../src/index/build.js';
import { findFile, findSkill } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { diskFiles, fileOnDisk } from '../helpers/disk.js';
import { makeTree, removeTree, SAMPLE_SKILLS_DIR, skillMd, tempTrees } from '../helpers/tree.js';
import {
  childrenOf,
  diagKeys,
  directoryUris,
  expectSnapshotMatchesDisk,
  resourcesOf,
  servedFileUris,
  skillUris,
} from './snapshot.js';

describe('multiple roots', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());
  const { tree } = temps;

  it("serves the first root's `dup` and reports one skill-path-conflict naming both roots", async () => {
    const first = await tree({
      'dup/SKILL.md': skillMd('dup', "The first root's dup."),
      'dup/a.md': 'From the first root.\n',
    });
    const second = await tree({
      'dup/SKILL.md': skillMd('dup', "The second root's dup."),
      'dup/b.md': 'From the second root.\n',
      'other/SKILL.md': skillMd('other', 'Only in the second root.'),
    });
    const snapshot = await buildSnapshot([
      { dir: first, prefix: [] },
      { dir: second, prefix: [] },
    ]);
    expect(skillUris(snapshot)).toEqual(['skill://dup/SKILL.md', 'skill://other/SKILL.md']);
    const dup = findSkill(snapshot, 'skill://dup/SKILL.md');
    expect(dup?.rootIndex).toBe(0);
    expect(dup?.dirReal).toBe(path.join(first, 'dup'));
    expect(dup?.description).toBe("The first root's dup.");
    expect(resourcesOf(dup)).toEqual([
      fileOnDisk('skill://dup/SKILL.md', path.join(first, 'dup/SKILL.md')),
      fileOnDisk('skill://dup/a.md', path.join(first, 'dup/a.md')),
    ]);
    expect(findFile(snapshot, 'skill://dup/b.md')).toBeUndefined();
    expect(childrenOf(snapshot, 'skill://dup')?.map((child) => child.uri)).toEqual([
      'skill://dup/SKILL.md',
      'skill://dup/a.md',
    ]);
    expect(findSkill(snapshot, 'skill://other/SKILL.md')?.rootIndex).toBe(1);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'error', rule: 'skill-path-conflict', file: path.join(second, 'dup') },
    ]);
    const message = snapshot.diagnostics[0]?.message ?? '';
    expect(message).toContain(first);
    expect(message).toContain(second);
    expectSnapshotMatchesDisk(snapshot);
  });

  it.each([
    ['a later skill enclosing an earlier one', 'acme/refunds', 'acme', 'acme'],
    ['a later skill inside an earlier one', 'tools', 'tools/extra', 'tools/extra'],
  ])('drops %s', async (_case, firstPath, secondPath, droppedPath) => {
    const first = await tree({
      [`${firstPath}/SKILL.md`]: skillMd(firstPath.split('/').at(-1) ?? '', 'From the first root.'),
    });
    const second = await tree({
      [`${secondPath}/SKILL.md`]: skillMd(secondPath.split('/').at(-1) ?? '', 'From the second root.'),
    });
    const snapshot = await buildSnapshot([
      { dir: first, prefix: [] },
      { dir: second, prefix: [] },
    ]);
    expect(skillUris(snapshot)).toEqual([`skill://${firstPath}/SKILL.md`]);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'error', rule: 'skill-path-conflict', file: path.join(second, droppedPath) },
    ]);
  });

  it('keeps both when the second root is mounted under a prefix', async () => {
    const first = await tree({ 'dup/SKILL.md': skillMd('dup', 'First.') });
    const second = await tree({ 'dup/SKILL.md': skillMd('dup', 'Second.'), 'dup/b.md': 'B.\n' });
    const snapshot = await buildSnapshot([
      { dir: first, prefix: [] },
      { dir: second, prefix: ['team', 'x'] },
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://dup/SKILL.md', 'skill://team/x/dup/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://team/x/dup/SKILL.md'))).toEqual([
      fileOnDisk('skill://team/x/dup/SKILL.md', path.join(second, 'dup/SKILL.md')),
      fileOnDisk('skill://team/x/dup/b.md', path.join(second, 'dup/b.md')),
    ]);
    expect(childrenOf(snapshot, 'skill://team')).toEqual([
      { uri: 'skill://team/x', name: 'x', mimeType: 'inode/directory' },
    ]);
    expect(childrenOf(snapshot, 'skill://team/x')).toEqual([
      { uri: 'skill://team/x/dup', name: 'dup', mimeType: 'inode/directory' },
    ]);
    expect(directoryUris(snapshot)).toEqual(['skill://dup', 'skill://team', 'skill://team/x', 'skill://team/x/dup']);
    expectSnapshotMatchesDisk(snapshot);
  });

  it('follows a link from one root into another served root', async () => {
    const second = await tree({ 'shared/common.md': 'Shared between roots.\n' });
    const first = await tree({
      's/SKILL.md': skillMd('s', 'Links into the other root.'),
      's/common.md': { symlink: path.join(second, 'shared/common.md') },
    });
    const snapshot = await buildSnapshot([
      { dir: first, prefix: [] },
      { dir: second, prefix: [] },
    ]);
    // The second root serves no skill of its own: said once.
    expect(diagKeys(snapshot)).toEqual([{ severity: 'warning', rule: 'root-empty', file: second }]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toContainEqual(
      fileOnDisk('skill://s/common.md', path.join(second, 'shared/common.md')),
    );
  });

  it('reports an unusable root once and serves the others, keeping their root index', async () => {
    const missing = path.join(await temps.tempDir(), 'does-not-exist');
    const good = await tree({ 's/SKILL.md': skillMd('s', 'In the usable root.') });
    const snapshot = await buildSnapshot([
      { dir: missing, prefix: [] },
      { dir: good, prefix: [] },
    ]);
    expect(diagKeys(snapshot)).toEqual([{ severity: 'warning', rule: 'root-unusable', file: missing }]);
    expect(skillUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    expect(findSkill(snapshot, 'skill://s/SKILL.md')?.rootIndex).toBe(1);
    expect(findFile(snapshot, 'skill://s/SKILL.md')?.top.rootIndex).toBe(1);
  });

  it('a root that gains a skill loses its root-empty warning; one that loses its last skill gets it', async () => {
    const root = await tree({ 'notes/readme.md': 'No skills yet.\n' });
    const builder = new IndexBuilder([{ dir: root, prefix: [] }]);
    expect(diagKeys(await builder.buildAll())).toEqual([{ severity: 'warning', rule: 'root-empty', file: root }]);
    await mkdir(path.join(root, 'alpha'));
    await writeFile(path.join(root, 'alpha', 'SKILL.md'), skillMd('alpha', 'Alpha.'));
    const added = await builder.rebuild([{ rootIndex: 0, rel: 'alpha' }]);
    expect(diagKeys(added)).toEqual([]);
    expect(added.ordered.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    await rm(path.join(root, 'alpha'), { recursive: true });
    expect(diagKeys(await builder.rebuild([{ rootIndex: 0, rel: 'alpha' }]))).toEqual([
      { severity: 'warning', rule: 'root-empty', file: root },
    ]);
  });

  it('builds an empty snapshot for no roots and for a root without skills', async () => {
    const empty = await tree({ 'notes/readme.md': 'No skills here.\n' });
    for (const roots of [[], [{ dir: empty, prefix: [] }]]) {
      const snapshot = await buildSnapshot(roots);
      expect({
        skills: snapshot.skills.size,
        ordered: snapshot.ordered.length,
        files: servedFileUris(snapshot).length,
        fileCount: snapshot.fileCount,
        dirs: directoryUris(snapshot).length,
        diagnostics: diagKeys(snapshot),
        generation: snapshot.generation,
      }).toEqual({
        skills: 0,
        ordered: 0,
        files: 0,
        fileCount: 0,
        dirs: 0,
        // A root without skills is never silent.
        diagnostics: roots.length === 0 ? [] : [{ severity: 'warning', rule: 'root-empty', file: empty }],
        generation: 1,
      });
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

  /** Every string reachable from the snapshot (records, entries, nodes, names, keys), each once. */
  function strings(snapshot: Snapshot): string[] {
    const found: string[] = [];
    const seen = new Set<unknown>();
    const visit = (value: unknown): void => {
      if (typeof value === 'string') found.push(value);
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      for (const child of value instanceof Map ? [...value.entries()] : Object.values(value)) visit(child);
    };
    visit(snapshot);
    return found;
  }

  it('holds metadata only: no file bodies, no byte buffers', async () => {
    root = await makeTree({
      's/SKILL.md': `${skillMd('s', 'Skill whose body must not be kept.')}\n${BODY_SENTENCE}\n`,
      's/ref.md': `${FILE_SENTENCE}\n`,
    });
    const snapshot = await buildSnapshot([
      { dir: root, prefix: [] },
      { dir: SAMPLE_SKILLS_DIR, prefix: ['sample'] },
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    expect(snapshot.skills.size).toBe(7);
    const text = strings(snapshot);
    expect(text.length).toBeGreaterThan(100);
    expect(text.some((value) => value.includes('Skill whose body must not be kept.'))).toBe(true);
    expect(text.filter((value) => value.includes(BODY_SENTENCE) || value.includes(FILE_SENTENCE))).toEqual([]);
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

  it('freezes the snapshot, its skill list and its diagnostics (later snapshots share them)', async () => {
    root = await makeTree({ 's/SKILL.md': skillMd('s', 'Frozen skill.'), 't/SKILL.md': skillMd('t', 'Another.') });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect({
      snapshot: Object.isFrozen(snapshot),
      diagnostics: Object.isFrozen(snapshot.diagnostics),
      ordered: Object.isFrozen(snapshot.ordered),
    }).toEqual({
      snapshot: true,
      diagnostics: true,
      ordered: true,
    });
  });

  it('serializes each entry once, to exactly the entry the disk calls for', async () => {
    root = await makeTree({ 's/SKILL.md': skillMd('s', 'Frozen skill.', 'metadata:\n  team: core'), 's/a.md': 'A.\n' });
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    const skill = findSkill(snapshot, 'skill://s/SKILL.md');
    const expected = {
      uri: 'skill://s/SKILL.md',
      frontmatter: { name: 's', description: 'Frozen skill.', metadata: { team: 'core' } },
      resources: diskFiles(path.join(root, 's'), 'skill://s'),
    };
    expect(typeof skill?.json).toBe('string');
    expect(JSON.parse(skill?.json ?? 'null')).toStrictEqual(expected);
    expect(skill?.json).toBe(JSON.stringify(expected));
    expect(findFile(snapshot, 'skill://s/a.md')?.path).toBe(path.join(root, 's/a.md'));
  });
});
