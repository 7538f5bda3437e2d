/**
 * Index build over the committed fixtures: encodings, odd names, three levels of nesting, a root that is itself a
 * skill, and ignored names (in a temporary copy with a `.git/` folder added).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { entryOf } from '../../src/index/entry.js';
import { digestOf } from '../../src/index/record.js';
import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import { diskFiles, fileOnDisk, sha256 } from '../helpers/disk.js';
import { addToTree, copyFixture, FIXTURES_DIR, removeTree, skillMd } from '../helpers/tree.js';
import {
  buildOne,
  childrenOf,
  directoryUris,
  expectSnapshotMatchesDisk,
  namespaceFileUris,
  resourcesOf,
  servedFileUris,
  skillsListing,
  skillUris,
} from './snapshot.js';

const fixture = (name: string): string => path.join(FIXTURES_DIR, name);

describe('encoding fixture', () => {
  const root = fixture('encoding');

  it('serves all four skills with digests of the raw bytes (BOM, CRLF, empty, Latin-1, binary)', async () => {
    const snapshot = await buildOne(root);
    expect(skillUris(snapshot)).toEqual([
      'skill://block-scalars/SKILL.md',
      'skill://bom-skill/SKILL.md',
      'skill://crlf-skill/SKILL.md',
      'skill://folded/SKILL.md',
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    for (const name of ['block-scalars', 'bom-skill', 'crlf-skill', 'folded']) {
      expect(resourcesOf(findSkill(snapshot, `skill://${name}/SKILL.md`))).toEqual(
        diskFiles(path.join(root, name), `skill://${name}`),
      );
    }
    expectSnapshotMatchesDisk(snapshot);
    const empty = findFile(snapshot, 'skill://bom-skill/data/empty.txt');
    expect(empty === undefined ? undefined : { digest: digestOf(empty.node), size: empty.node.size }).toEqual({
      digest: sha256(new Uint8Array()),
      size: 0,
    });
    const bom = await fsp.readFile(path.join(root, 'bom-skill/SKILL.md'));
    expect([...bom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(findSkill(snapshot, 'skill://bom-skill/SKILL.md')?.manifestSize).toBe(bom.length);
  });

  it('reads block scalars, folded scalars and CRLF frontmatter as YAML does', async () => {
    const snapshot = await buildOne(root);
    const frontmatterOf = (uri: string): unknown => {
      const skill = findSkill(snapshot, uri);
      return skill === undefined ? undefined : entryOf(skill).frontmatter;
    };
    expect(frontmatterOf('skill://block-scalars/SKILL.md')).toEqual({
      name: 'block-scalars',
      description: 'First line of a literal description.\nSecond line of a literal description.\n',
      metadata: { author: 'fixtures', version: '1.0' },
    });
    expect(frontmatterOf('skill://folded/SKILL.md')).toEqual({
      name: 'folded',
      description: 'A folded description that spans two source lines.',
    });
    expect(frontmatterOf('skill://crlf-skill/SKILL.md')).toEqual({
      name: 'crlf-skill',
      description: 'Skill whose files use CRLF line endings.',
      license: 'MIT',
    });
    expect(findSkill(snapshot, 'skill://bom-skill/SKILL.md')?.name).toBe('bom-skill');
  });
});

describe('names fixture', () => {
  const root = fixture('names');
  const dir = path.join(root, 'odd-names');

  it('percent-encodes every odd name into a canonical URI, digesting the file it names', async () => {
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://odd-names/SKILL.md']);
    const expected: [string, string][] = [
      ['skill://odd-names/%E6%97%A5%E6%9C%AC%E8%AA%9E.md', '日本語.md'],
      ['skill://odd-names/100%25.md', '100%.md'],
      ['skill://odd-names/SKILL.md', 'SKILL.md'],
      ['skill://odd-names/a+b.md', 'a+b.md'],
      ['skill://odd-names/caf%C3%A9.md', 'café.md'],
      ['skill://odd-names/emoji-%F0%9F%98%80.md', 'emoji-😀.md'],
      ['skill://odd-names/file%20with%20spaces.md', 'file with spaces.md'],
      ['skill://odd-names/hash%23tag.md', 'hash#tag.md'],
      ['skill://odd-names/sub%20dir/inner%20%231.md', 'sub dir/inner #1.md'],
      ['skill://odd-names/what%3F.md', 'what?.md'],
    ];
    const rows = expected.map(([uri, rel]) => fileOnDisk(uri, path.join(dir, ...rel.split('/'))));
    expect(resourcesOf(findSkill(snapshot, 'skill://odd-names/SKILL.md'))).toEqual(rows);
    for (const [uri] of expected) expect(new URL(uri).href).toBe(uri);
    expectSnapshotMatchesDisk(snapshot);
  });

  it('finds files under other spellings and lists decoded names', async () => {
    const snapshot = await buildOne(root);
    expect(findFile(snapshot, 'skill://odd-names/caf%c3%a9.md')?.uri).toBe('skill://odd-names/caf%C3%A9.md');
    expect(findFile(snapshot, 'skill://odd-names/a%2Bb.md')?.uri).toBe('skill://odd-names/a+b.md');
    expect(findFile(snapshot, 'skill://odd-names/what?.md')).toBeUndefined();
    const sub = fileOnDisk('', path.join(dir, 'sub dir', 'inner #1.md'));
    expect(childrenOf(snapshot, 'skill://odd-names/sub%20dir')).toEqual([
      {
        uri: 'skill://odd-names/sub%20dir/inner%20%231.md',
        name: 'inner #1.md',
        mimeType: 'text/markdown',
        size: sub.size,
      },
    ]);
    const names = childrenOf(snapshot, 'skill://odd-names')?.map((child) => child.name);
    expect(names).toEqual([
      '日本語.md',
      '100%.md',
      'SKILL.md',
      'a+b.md',
      'café.md',
      'emoji-😀.md',
      'file with spaces.md',
      'hash#tag.md',
      'sub dir',
      'what?.md',
    ]);
  });
});

describe('nested fixture', () => {
  it('serves outer, inner and deepest; each lists every file below it', async () => {
    const root = fixture('nested');
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual([
      'skill://outer/SKILL.md',
      'skill://outer/inner/SKILL.md',
      'skill://outer/inner/deepest/SKILL.md',
    ]);
    const outer = resourcesOf(findSkill(snapshot, 'skill://outer/SKILL.md'));
    expect(outer.map((row) => row.uri)).toEqual([
      'skill://outer/SKILL.md',
      'skill://outer/guide.md',
      'skill://outer/inner/SKILL.md',
      'skill://outer/inner/deepest/SKILL.md',
      'skill://outer/inner/ref.md',
    ]);
    expect(outer).toEqual(diskFiles(path.join(root, 'outer'), 'skill://outer'));
    expect(resourcesOf(findSkill(snapshot, 'skill://outer/inner/SKILL.md'))).toEqual(
      diskFiles(path.join(root, 'outer/inner'), 'skill://outer/inner'),
    );
    expect(resourcesOf(findSkill(snapshot, 'skill://outer/inner/deepest/SKILL.md'))).toEqual([
      fileOnDisk('skill://outer/inner/deepest/SKILL.md', path.join(root, 'outer/inner/deepest/SKILL.md')),
    ]);
    expect(skillsListing(snapshot, 'skill://outer/inner/deepest/SKILL.md')).toEqual(skillUris(snapshot));
    // Its region is the outermost skill's: a change to it rebuilds all three.
    expect(findFile(snapshot, 'skill://outer/inner/deepest/SKILL.md')?.top.uri).toBe('skill://outer/SKILL.md');
    expect(findFile(snapshot, 'skill://outer/inner/deepest/SKILL.md')?.rel).toBe('outer/inner/deepest/SKILL.md');
    expect(childrenOf(snapshot, 'skill://outer')?.map((child) => [child.uri, child.mimeType])).toEqual([
      ['skill://outer/SKILL.md', 'text/markdown'],
      ['skill://outer/guide.md', 'text/markdown'],
      ['skill://outer/inner', 'inode/directory'],
    ]);
    expectSnapshotMatchesDisk(snapshot);
  });
});

describe('root-skill fixture', () => {
  it('serves a root that is itself a skill under the folder name', async () => {
    const root = fixture('root-skill');
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://root-skill/SKILL.md']);
    const skill = findSkill(snapshot, 'skill://root-skill/SKILL.md');
    expect(skill?.rootUri).toBe('skill://root-skill');
    expect(skill?.segments).toEqual(['root-skill']);
    expect(resourcesOf(skill)).toEqual([
      fileOnDisk('skill://root-skill/SKILL.md', path.join(root, 'SKILL.md')),
      fileOnDisk('skill://root-skill/references/a.md', path.join(root, 'references/a.md')),
    ]);
    expect(directoryUris(snapshot)).toEqual(['skill://root-skill', 'skill://root-skill/references']);
    expectSnapshotMatchesDisk(snapshot);
  });
});

describe('ignored fixture (temporary copy with .git/)', () => {
  let root = '';
  afterEach(async () => {
    await removeTree(root);
  });

  it('serves only SKILL.md and notes.md from visible/, silently', async () => {
    root = await copyFixture('ignored');
    await addToTree(root, {
      'visible/.git/config': '[core]\n\trepositoryformatversion = 0\n',
      'visible/.git/HEAD': 'ref: refs/heads/main\n',
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://visible/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://visible/SKILL.md'))).toEqual([
      fileOnDisk('skill://visible/SKILL.md', path.join(root, 'visible/SKILL.md')),
      fileOnDisk('skill://visible/notes.md', path.join(root, 'visible/notes.md')),
    ]);
    expect(servedFileUris(snapshot)).toEqual(['skill://visible/SKILL.md', 'skill://visible/notes.md']);
    expect(namespaceFileUris(snapshot)).toEqual(['skill://visible/SKILL.md', 'skill://visible/notes.md']);
    expect(directoryUris(snapshot)).toEqual(['skill://visible', 'skill://visible/sub']);
    expect(childrenOf(snapshot, 'skill://visible/sub')).toEqual([]);
    for (const hidden of [
      'skill://visible/.git/config',
      'skill://visible/.hidden.md',
      'skill://visible/node_modules/pkg/index.js',
      'skill://visible/sub/.env.local',
    ]) {
      expect(findFile(snapshot, hidden)).toBeUndefined();
    }
    expect(findDirectory(snapshot, 'skill://visible/node_modules')).toBeUndefined();
  });

  it('does not discover a SKILL.md inside an ignored folder', async () => {
    root = await copyFixture('ignored');
    await addToTree(root, {
      'visible/node_modules/pkg/SKILL.md': skillMd('pkg', 'A skill hidden in node_modules.'),
      '.hidden-skill/SKILL.md': skillMd('hidden-skill', 'A skill in a dot folder.'),
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://visible/SKILL.md']);
  });
});
