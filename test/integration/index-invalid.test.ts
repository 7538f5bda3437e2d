/**
 * Invalid skills are left out with exactly one error diagnostic each (rule id, SKILL.md path, line when known),
 * and the rest of the catalog is served: the `invalid` fixture, and invalid skills nested in valid ones (and back).
 */
import path from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { diskFiles, fileOnDisk } from '../helpers/disk.js';
import { FIXTURES_DIR, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import {
  buildOne,
  childrenOf,
  diagKey,
  directoryUris,
  expectSnapshotMatchesDisk,
  lineStartingWith,
  resourcesOf,
  servedFileUris,
  skillUris,
} from './snapshot.js';

const ROOT = path.join(FIXTURES_DIR, 'invalid');
const manifest = (skill: string): string => path.join(ROOT, skill, 'SKILL.md');

/** Invalid fixture skill → the rule id it must be reported under, and the frontmatter key line (if any). */
const EXPECTED: readonly [skill: string, rule: string, linePrefix?: string][] = [
  ['Bad_Name', 'name-format', 'name:'],
  ['bad-yaml', 'frontmatter-syntax', 'description: Use when: things happen'],
  ['duplicate-key', 'frontmatter-syntax', 'description: Second description.'],
  ['empty-skill-md', 'frontmatter-missing'],
  ['long-compatibility', 'compatibility-length', 'compatibility:'],
  ['long-description', 'description-length', 'description:'],
  ['metadata-list', 'metadata-values', '  tags:'],
  ['missing-description', 'required-fields'],
  ['name-mismatch', 'name-mismatch', 'name:'],
  ['no-frontmatter', 'frontmatter-missing'],
  ['not-utf8', 'encoding'],
  ['unclosed', 'frontmatter-unclosed'],
];

describe('invalid fixture', () => {
  let snapshot: Snapshot;
  beforeAll(async () => {
    snapshot = await buildOne(ROOT);
  });

  it('serves only `good`, with its files and nothing of the invalid skills', async () => {
    expect(skillUris(snapshot)).toEqual(['skill://good/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://good/SKILL.md'))).toEqual(
      diskFiles(path.join(ROOT, 'good'), 'skill://good'),
    );
    expect(servedFileUris(snapshot)).toEqual(['skill://good/SKILL.md']);
    expect(directoryUris(snapshot)).toEqual(['skill://good']);
    expectSnapshotMatchesDisk(snapshot);
    expect(findFile(snapshot, 'skill://bad-yaml/SKILL.md')).toBeUndefined();
    expect(findDirectory(snapshot, 'skill://bad-yaml')).toBeUndefined();
  });

  it('reports exactly one error per invalid skill, on its SKILL.md, and nothing else', () => {
    expect(snapshot.diagnostics).toHaveLength(EXPECTED.length);
    expect(snapshot.diagnostics.every((diagnostic) => diagnostic.severity === 'error')).toBe(true);
    expect(snapshot.diagnostics.map((diagnostic) => diagnostic.file).sort()).toEqual(
      EXPECTED.map(([skill]) => manifest(skill)).sort(),
    );
    for (const diagnostic of snapshot.diagnostics) {
      expect(diagnostic.message.length).toBeGreaterThan(0);
      expect(diagnostic.hint.length).toBeGreaterThan(0);
    }
  });

  it.each(EXPECTED)('%s → %s', async (skill, rule, linePrefix) => {
    const found = snapshot.diagnostics.filter((diagnostic) => diagnostic.file === manifest(skill));
    expect(found).toHaveLength(1);
    const expected = { severity: 'error', rule, file: manifest(skill) };
    const actual = diagKey(found[0]!);
    if (linePrefix === undefined) {
      expect({ severity: actual.severity, rule: actual.rule, file: actual.file }).toEqual(expected);
    } else {
      expect(actual).toEqual({ ...expected, line: await lineStartingWith(manifest(skill), linePrefix) });
    }
    expect(findSkill(snapshot, `skill://${skill}/SKILL.md`)).toBeUndefined();
  });

  it('reports the bad-yaml problem on line 3 of the file, the line with the unquoted ": "', async () => {
    expect(await lineStartingWith(manifest('bad-yaml'), 'description: Use when: things happen')).toBe(3);
    expect(snapshot.diagnostics.find((diagnostic) => diagnostic.file === manifest('bad-yaml'))?.line).toBe(3);
  });

  it('gives no line for problems that have none (missing field, bad encoding)', () => {
    for (const skill of ['missing-description', 'not-utf8']) {
      expect(
        snapshot.diagnostics.find((diagnostic) => diagnostic.file === manifest(skill))?.line,
        skill,
      ).toBeUndefined();
    }
  });
});

describe('invalid skills nested in valid ones, and back', () => {
  let root = '';
  afterEach(async () => {
    await removeTree(root);
  });

  it('serves a valid outer skill, listing the files of an invalid inner one, which is left out', async () => {
    root = await makeTree({
      'outer/SKILL.md': skillMd('outer', 'Valid outer skill.'),
      'outer/guide.md': 'Outer guide.\n',
      'outer/inner/SKILL.md': skillMd('not-inner', 'Name does not match its folder.'),
      'outer/inner/ref.md': 'Inner reference.\n',
    });
    const snapshot = await buildOne(root);
    expect(skillUris(snapshot)).toEqual(['skill://outer/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://outer/SKILL.md'))).toEqual([
      fileOnDisk('skill://outer/SKILL.md', path.join(root, 'outer/SKILL.md')),
      fileOnDisk('skill://outer/guide.md', path.join(root, 'outer/guide.md')),
      fileOnDisk('skill://outer/inner/SKILL.md', path.join(root, 'outer/inner/SKILL.md')),
      fileOnDisk('skill://outer/inner/ref.md', path.join(root, 'outer/inner/ref.md')),
    ]);
    expect(findSkill(snapshot, 'skill://outer/inner/SKILL.md')).toBeUndefined();
    expect(findFile(snapshot, 'skill://outer/inner/ref.md')?.path).toBe(path.join(root, 'outer/inner/ref.md'));
    expect(childrenOf(snapshot, 'skill://outer/inner')?.map((child) => child.uri)).toEqual([
      'skill://outer/inner/SKILL.md',
      'skill://outer/inner/ref.md',
    ]);
    expect(snapshot.diagnostics.map(diagKey)).toEqual([
      { severity: 'error', rule: 'name-mismatch', file: path.join(root, 'outer/inner/SKILL.md'), line: 2 },
    ]);
  });

  it('serves a valid inner skill of an invalid outer one; skill://outer only groups the inner folder', async () => {
    root = await makeTree({
      'outer/SKILL.md': '---\nname: outer\n---\n\nNo description.\n',
      'outer/guide.md': 'Outer guide.\n',
      'outer/inner/SKILL.md': skillMd('inner', 'Valid inner skill.'),
      'outer/inner/ref.md': 'Inner reference.\n',
    });
    const snapshot = await buildOne(root);
    expect(skillUris(snapshot)).toEqual(['skill://outer/inner/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://outer/inner/SKILL.md'))).toEqual(
      diskFiles(path.join(root, 'outer/inner'), 'skill://outer/inner'),
    );
    expect(childrenOf(snapshot, 'skill://outer')).toEqual([
      { uri: 'skill://outer/inner', name: 'inner', mimeType: 'inode/directory' },
    ]);
    expect(findFile(snapshot, 'skill://outer/SKILL.md')).toBeUndefined();
    expect(findFile(snapshot, 'skill://outer/guide.md')).toBeUndefined();
    expect(servedFileUris(snapshot)).toEqual(['skill://outer/inner/SKILL.md', 'skill://outer/inner/ref.md']);
    expect(directoryUris(snapshot)).toEqual(['skill://outer', 'skill://outer/inner']);
    expectSnapshotMatchesDisk(snapshot);
    expect(snapshot.diagnostics.map(diagKey)).toEqual([
      { severity: 'error', rule: 'required-fields', file: path.join(root, 'outer/SKILL.md') },
    ]);
  });

  it('keeps serving valid siblings when one skill is invalid', async () => {
    root = await makeTree({
      'a/SKILL.md': skillMd('a', 'First valid skill.'),
      'b/SKILL.md': '---\nname: b\ndescription: [unclosed\n---\n',
      'c/SKILL.md': skillMd('c', 'Second valid skill.'),
    });
    const snapshot = await buildOne(root);
    expect(skillUris(snapshot)).toEqual(['skill://a/SKILL.md', 'skill://c/SKILL.md']);
    expect(snapshot.diagnostics).toHaveLength(1);
    expect(snapshot.diagnostics[0]?.file).toBe(path.join(root, 'b/SKILL.md'));
    expect(snapshot.diagnostics[0]?.severity).toBe('error');
  });
});
