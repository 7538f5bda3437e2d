/**
 * Per-skill limits (SEP-2640: at most 512 resources and 16 MiB in total), exactly at and one past the boundary,
 * and digests of files around the chunked-hashing boundary compared with sha256 of the bytes on disk.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { SYNC_HASH_MAX_BYTES } from '../../src/index/digest.js';
import { entryOf } from '../../src/index/entry.js';
import { findSkill } from '../../src/index/snapshot.js';
import { diskFiles, sha256 } from '../helpers/disk.js';
import type { TreeEntry } from '../helpers/tree.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import {
  buildOne,
  diagKeys,
  directoryUris,
  expectSnapshotMatchesDisk,
  resourcesOf,
  servedFileUris,
  skillUris,
} from './snapshot.js';

const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;

/** `count` small files `<dir>/files/f0000.txt`, … */
function smallFiles(dir: string, count: number): Record<string, TreeEntry> {
  const spec: Record<string, TreeEntry> = {};
  for (let index = 0; index < count; index++)
    spec[`${dir}/files/f${String(index).padStart(4, '0')}.txt`] = `file ${index}\n`;
  return spec;
}

describe('per-skill limits', () => {
  let root = '';
  afterEach(async () => {
    await removeTree(root);
  });

  it(`serves a skill of exactly ${MAX_FILES} files`, async () => {
    root = await makeTree({
      's/SKILL.md': skillMd('s', 'Skill at the file limit.'),
      ...smallFiles('s', MAX_FILES - 1),
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://s/SKILL.md']);
    const resources = resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'));
    expect(resources).toHaveLength(MAX_FILES);
    expect(resources).toEqual(diskFiles(path.join(root, 's'), 'skill://s'));
  });

  it(`leaves out a skill of ${MAX_FILES + 1} files with skill-too-many-files, serving its siblings`, async () => {
    root = await makeTree({
      's/SKILL.md': skillMd('s', 'Skill over the file limit.'),
      ...smallFiles('s', MAX_FILES),
      'ok/SKILL.md': skillMd('ok', 'A small sibling.'),
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'error', rule: 'skill-too-many-files', file: path.join(root, 's/SKILL.md') },
    ]);
    expect(skillUris(snapshot)).toEqual(['skill://ok/SKILL.md']);
    expect(servedFileUris(snapshot)).toEqual(['skill://ok/SKILL.md']);
    expect(directoryUris(snapshot)).toEqual(['skill://ok']);
    expectSnapshotMatchesDisk(snapshot);
  });

  it("counts a nested skill's files toward the enclosing skill only", async () => {
    root = await makeTree({
      'outer/SKILL.md': skillMd('outer', 'Outer skill, over the limit with its nested skill.'),
      ...smallFiles('outer', 300),
      'outer/inner/SKILL.md': skillMd('inner', 'Inner skill, within the limit.'),
      ...smallFiles('outer/inner', 300),
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'error', rule: 'skill-too-many-files', file: path.join(root, 'outer/SKILL.md') },
    ]);
    expect(skillUris(snapshot)).toEqual(['skill://outer/inner/SKILL.md']);
    expect(resourcesOf(findSkill(snapshot, 'skill://outer/inner/SKILL.md'))).toHaveLength(301);
  });

  it('serves a skill of exactly 16 MiB in total, digesting the large file correctly', async () => {
    const manifest = skillMd('s', 'Skill at the byte limit.');
    const big = randomBytes(MAX_BYTES - Buffer.byteLength(manifest));
    root = await makeTree({ 's/SKILL.md': manifest, 's/big.bin': big });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual([
      { uri: 'skill://s/SKILL.md', digest: sha256(manifest), size: Buffer.byteLength(manifest) },
      { uri: 'skill://s/big.bin', digest: sha256(big), size: big.length },
    ]);
  });

  it('leaves out a skill holding a 16 MiB + 1 byte file with skill-too-large', async () => {
    root = await makeTree({
      's/SKILL.md': skillMd('s', 'Skill over the byte limit.'),
      's/big.bin': new Uint8Array(MAX_BYTES + 1),
    });
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'error', rule: 'skill-too-large', file: path.join(root, 's/SKILL.md') },
    ]);
    expect(skillUris(snapshot)).toEqual([]);
    expect(servedFileUris(snapshot)).toEqual([]);
    expect(directoryUris(snapshot)).toEqual([]);
    expect(snapshot.fileCount).toBe(0);
  });

  it('reports both limits in one diagnostic when a skill breaks both', async () => {
    root = await makeTree({
      's/SKILL.md': skillMd('s', 'Skill over both limits.'),
      ...smallFiles('s', MAX_FILES),
      's/big.bin': new Uint8Array(MAX_BYTES),
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toHaveLength(1);
    expect(snapshot.diagnostics[0]?.rule.split(',').sort()).toEqual(['skill-too-large', 'skill-too-many-files']);
    expect(skillUris(snapshot)).toEqual([]);
  });
});

describe('digests around the chunked-read boundary', () => {
  let root = '';
  afterEach(async () => {
    await removeTree(root);
  });

  it('matches sha256 of the bytes on disk for sizes around SYNC_HASH_MAX_BYTES (read at once below, in chunks above)', async () => {
    expect(SYNC_HASH_MAX_BYTES).toBe(1024 * 1024);
    const sizes = [
      0,
      1,
      SYNC_HASH_MAX_BYTES - 1,
      SYNC_HASH_MAX_BYTES,
      SYNC_HASH_MAX_BYTES + 1,
      2 * SYNC_HASH_MAX_BYTES,
      3 * SYNC_HASH_MAX_BYTES + 7,
    ];
    const spec: Record<string, TreeEntry> = { 's/SKILL.md': skillMd('s', 'Skill with files of many sizes.') };
    for (const size of sizes) spec[`s/data/${size}.bin`] = randomBytes(size);
    root = await makeTree(spec);
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual(
      diskFiles(path.join(root, 's'), 'skill://s'),
    );
    expectSnapshotMatchesDisk(snapshot);
  });

  it('parses and digests a SKILL.md larger than SYNC_HASH_MAX_BYTES', async () => {
    const manifest =
      skillMd('s', 'Skill with a long body.') +
      'Long body line.\n'.repeat(Math.ceil((2 * SYNC_HASH_MAX_BYTES + 5) / 16));
    root = await makeTree({ 's/SKILL.md': manifest });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    const skill = findSkill(snapshot, 'skill://s/SKILL.md');
    expect(skill === undefined ? undefined : entryOf(skill).frontmatter).toEqual({
      name: 's',
      description: 'Skill with a long body.',
    });
    expect(resourcesOf(skill)).toEqual([
      { uri: 'skill://s/SKILL.md', digest: sha256(manifest), size: Buffer.byteLength(manifest) },
    ]);
    expect(skill?.manifestSize).toBe(Buffer.byteLength(manifest));
  });
});
