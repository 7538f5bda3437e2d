import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assembleSnapshot, type PublishedSkill } from '../../src/index/assemble.js';
import { buildSnapshot, IndexBuilder } from '../../src/index/build.js';
import { diffSnapshots, type SnapshotDiff } from '../../src/index/diff.js';
import { buildEntry } from '../../src/index/entry.js';
import { mimeTypeFor } from '../../src/index/mime.js';
import type { FileRecord, Snapshot } from '../../src/index/types.js';
import { buildSkillUri } from '../../src/index/uri.js';
import { regionsOf, type WatchEvent } from '../../src/watch/classify.js';
import { addToTree, makeTree, removeTree, skillMd, tempTrees, type TreeEntry } from '../helpers/tree.js';

const NO_CHANGE: SnapshotDiff = { listChanged: false, updated: [], skillsChanged: [] };

/** `a` (with nested `a/b`) and `z`: two top-level skills, one with a nested skill. */
const BASE: Record<string, TreeEntry> = {
  'a/SKILL.md': skillMd('a', 'Outer skill.'),
  'a/guide.md': 'Guide.\n',
  'a/b/SKILL.md': skillMd('b', 'Inner skill.'),
  'a/b/ref.md': 'Ref.\n',
  'z/SKILL.md': skillMd('z', 'Other skill.'),
  'z/notes.md': 'Notes.\n',
  'z/refs/deep.md': 'Deep.\n',
};

const A = 'skill://a/SKILL.md';
const B = 'skill://a/b/SKILL.md';
const Z = 'skill://z/SKILL.md';

/** What to do to the tree between the two builds: write entries (in order), then remove paths (recursively). */
interface Mutation {
  readonly write?: Record<string, TreeEntry>;
  readonly remove?: readonly string[];
}

/** The events chokidar would report for `mutation` on the tree at `root` (computed before it is applied). */
async function eventsFor(root: string, mutation: Mutation): Promise<WatchEvent[]> {
  const exists = async (rel: string): Promise<boolean> => fsp.lstat(path.join(root, rel)).then(() => true, () => false);
  const events: WatchEvent[] = [];
  const newDirs = new Set<string>();
  for (const rel of Object.keys(mutation.write ?? {})) {
    const segments = rel.split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const dir = segments.slice(0, depth).join('/');
      if (!newDirs.has(dir) && !(await exists(dir))) {
        newDirs.add(dir);
        events.push({ rootIndex: 0, kind: 'addDir', rel: dir });
      }
    }
    events.push({ rootIndex: 0, kind: (await exists(rel)) ? 'change' : 'add', rel });
  }
  for (const rel of mutation.remove ?? []) {
    const walk = async (current: string): Promise<void> => {
      const stat = await fsp.lstat(path.join(root, current));
      if (!stat.isDirectory()) {
        events.push({ rootIndex: 0, kind: 'unlink', rel: current });
        return;
      }
      for (const name of await fsp.readdir(path.join(root, current))) await walk(`${current}/${name}`);
      events.push({ rootIndex: 0, kind: 'unlinkDir', rel: current });
    };
    await walk(rel);
  }
  return events;
}

async function applyMutation(root: string, mutation: Mutation): Promise<void> {
  if (mutation.write !== undefined) await addToTree(root, mutation.write);
  for (const rel of mutation.remove ?? []) await fsp.rm(path.join(root, rel), { recursive: true, force: true });
}

describe('diffSnapshots on snapshots built from real trees', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  /**
   * Builds `spec`, applies `mutation`, and returns the snapshot before, the one after rebuilt from scratch, and the
   * one after rebuilt incrementally from the regions the mutation's events call for (as the live index does).
   */
  async function snapshots(spec: Record<string, TreeEntry>, mutation: Mutation): Promise<{ before: Snapshot; full: Snapshot; incremental: Snapshot }> {
    const root = await temps.tree(spec);
    const roots = [{ dir: root, prefix: [] }];
    const builder = new IndexBuilder(roots);
    const before = await builder.buildAll();
    const events = await eventsFor(root, mutation);
    await applyMutation(root, mutation);
    // Same-size rewrites within one timestamp tick would keep a cached digest; the cache is not under test here.
    for (const rel of Object.keys(mutation.write ?? {})) builder.forget(path.join(root, rel));
    const regions = regionsOf(events, (rootIndex) => builder.candidates(rootIndex));
    const incremental = regions.size === 0 ? before : await builder.rebuild(regions);
    const full = await buildSnapshot(roots, before.generation + 1);
    return { before, full, incremental };
  }

  it.each<[string, Record<string, TreeEntry>, Mutation, SnapshotDiff]>([
    ['nothing changed on disk', BASE, {}, NO_CHANGE],
    ['a file rewritten with the same bytes', BASE, { write: { 'z/notes.md': 'Notes.\n' } }, NO_CHANGE],
    ['SKILL.md rewritten with the same bytes', BASE, { write: { 'a/b/SKILL.md': skillMd('b', 'Inner skill.') } }, NO_CHANGE],
    ['an ignored file added inside a skill', BASE, { write: { 'z/.hidden.md': 'x', 'a/node_modules/m.js': 'x' } }, NO_CHANGE],
    ['a file added outside every skill', BASE, { write: { 'loose.md': 'x', 'group/loose.md': 'x' } }, NO_CHANGE],
    [
      'file content changed, same size',
      BASE,
      { write: { 'z/notes.md': 'Notez.\n' } },
      { listChanged: false, updated: ['skill://z/notes.md'], skillsChanged: [Z] },
    ],
    [
      'file content changed, new size',
      BASE,
      { write: { 'z/refs/deep.md': 'Deeper than before.\n' } },
      { listChanged: false, updated: ['skill://z/refs/deep.md'], skillsChanged: [Z] },
    ],
    [
      'file emptied',
      BASE,
      { write: { 'z/notes.md': '' } },
      { listChanged: false, updated: ['skill://z/notes.md'], skillsChanged: [Z] },
    ],
    [
      'outer skill file changed: the nested skill is untouched',
      BASE,
      { write: { 'a/guide.md': 'Guide v2.\n' } },
      { listChanged: false, updated: ['skill://a/guide.md'], skillsChanged: [A] },
    ],
    [
      'nested skill file changed: the enclosing skill changes too',
      BASE,
      { write: { 'a/b/ref.md': 'Ref v2.\n' } },
      { listChanged: false, updated: ['skill://a/b/ref.md'], skillsChanged: [A, B] },
    ],
    [
      'files changed in several skills',
      BASE,
      { write: { 'z/notes.md': 'Notes v2.\n', 'a/b/ref.md': 'Ref v2.\n', 'a/guide.md': 'Guide v2.\n' } },
      { listChanged: false, updated: ['skill://a/b/ref.md', 'skill://a/guide.md', 'skill://z/notes.md'], skillsChanged: [A, B, Z] },
    ],
    [
      'file added',
      BASE,
      { write: { 'z/new.md': 'New.\n' } },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'file added in a new subdirectory of a nested skill',
      BASE,
      { write: { 'a/b/assets/logo.svg': '<svg/>' } },
      { listChanged: true, updated: [], skillsChanged: [A, B] },
    ],
    [
      'file removed',
      BASE,
      { remove: ['z/notes.md'] },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'nested skill file removed',
      BASE,
      { remove: ['a/b/ref.md'] },
      { listChanged: true, updated: [], skillsChanged: [A, B] },
    ],
    [
      'file renamed: same number of files, one URI swapped',
      BASE,
      { write: { 'z/notes2.md': 'Notes.\n' }, remove: ['z/notes.md'] },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'a file moved between skills, same number of files',
      BASE,
      { write: { 'a/notes.md': 'Notes.\n' }, remove: ['z/notes.md'] },
      { listChanged: true, updated: [], skillsChanged: [A, Z] },
    ],
    [
      'skill description changed',
      BASE,
      { write: { 'z/SKILL.md': skillMd('z', 'Other skilL.') } },
      { listChanged: true, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'nested skill description changed',
      BASE,
      { write: { 'a/b/SKILL.md': skillMd('b', 'Inner skill, reworded.') } },
      { listChanged: true, updated: [B], skillsChanged: [A, B] },
    ],
    [
      'license added',
      BASE,
      { write: { 'z/SKILL.md': skillMd('z', 'Other skill.', 'license: MIT') } },
      { listChanged: false, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'license changed in a nested skill',
      { ...BASE, 'a/b/SKILL.md': skillMd('b', 'Inner skill.', 'license: MIT') },
      { write: { 'a/b/SKILL.md': skillMd('b', 'Inner skill.', 'license: Apache-2.0') } },
      { listChanged: false, updated: [B], skillsChanged: [A, B] },
    ],
    [
      'metadata changed',
      { ...BASE, 'z/SKILL.md': skillMd('z', 'Other skill.', 'metadata:\n  version: "1"') },
      { write: { 'z/SKILL.md': skillMd('z', 'Other skill.', 'metadata:\n  version: "2"') } },
      { listChanged: false, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'description quoted differently, same value',
      BASE,
      { write: { 'z/SKILL.md': skillMd('z', '"Other skill."') } },
      { listChanged: false, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'frontmatter keys reordered',
      BASE,
      { write: { 'z/SKILL.md': '---\ndescription: Other skill.\nname: z\n---\n\n# z\n\nTest skill.\n' } },
      { listChanged: false, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'SKILL.md body changed only',
      BASE,
      { write: { 'z/SKILL.md': `${skillMd('z', 'Other skill.')}More body.\n` } },
      { listChanged: false, updated: [Z], skillsChanged: [Z] },
    ],
    [
      'skill added',
      BASE,
      { write: { 'm/SKILL.md': skillMd('m', 'Middle skill.'), 'm/x.md': 'X.\n' } },
      { listChanged: true, updated: [], skillsChanged: ['skill://m/SKILL.md'] },
    ],
    [
      'skill added under grouping directories',
      BASE,
      { write: { 'g/h/k/SKILL.md': skillMd('k', 'Grouped skill.') } },
      { listChanged: true, updated: [], skillsChanged: ['skill://g/h/k/SKILL.md'] },
    ],
    [
      'skill removed',
      BASE,
      { remove: ['z'] },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'skill with a nested skill removed',
      BASE,
      { remove: ['a'] },
      { listChanged: true, updated: [], skillsChanged: [A, B] },
    ],
    [
      'nested skill added',
      BASE,
      { write: { 'a/b/c/SKILL.md': skillMd('c', 'Innermost skill.') } },
      { listChanged: true, updated: [], skillsChanged: [A, B, 'skill://a/b/c/SKILL.md'] },
    ],
    [
      'nested skill demoted to a plain folder (its SKILL.md removed)',
      BASE,
      { remove: ['a/b/SKILL.md'] },
      { listChanged: true, updated: [], skillsChanged: [A, B] },
    ],
    [
      'outer skill demoted: the nested one stays',
      BASE,
      { remove: ['a/SKILL.md'] },
      { listChanged: true, updated: [], skillsChanged: [A] },
    ],
    [
      'skill made invalid (name no longer matches its directory)',
      BASE,
      { write: { 'z/SKILL.md': skillMd('zz', 'Other skill.') } },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'invalid skill fixed',
      { ...BASE, 'z/SKILL.md': skillMd('zz', 'Other skill.') },
      { write: { 'z/SKILL.md': skillMd('z', 'Other skill.') } },
      { listChanged: true, updated: [], skillsChanged: [Z] },
    ],
    [
      'invalid nested skill fixed: its SKILL.md was already served by the enclosing skill',
      { ...BASE, 'a/b/SKILL.md': skillMd('wrong', 'Inner skill.') },
      { write: { 'a/b/SKILL.md': skillMd('b', 'Inner skill.') } },
      { listChanged: true, updated: [B], skillsChanged: [A, B] },
    ],
    [
      'nested skills swap validity: same files, same skill count, different skill URIs',
      { ...BASE, 'a/b/c/SKILL.md': skillMd('wrong', 'Innermost skill.') },
      { write: { 'a/b/c/SKILL.md': skillMd('c', 'Innermost skill.'), 'a/b/SKILL.md': skillMd('wrong', 'Inner skill.') } },
      { listChanged: true, updated: [B, 'skill://a/b/c/SKILL.md'], skillsChanged: [A, B, 'skill://a/b/c/SKILL.md'] },
    ],
    [
      'first skill in an empty root',
      { 'readme.md': 'No skills yet.\n' },
      { write: { 's/SKILL.md': skillMd('s', 'First.') } },
      { listChanged: true, updated: [], skillsChanged: ['skill://s/SKILL.md'] },
    ],
    [
      'a skill removed, another changed, one added: every list sorted',
      BASE,
      { write: { 'z/notes.md': 'Notes v2.\n', 'm/SKILL.md': skillMd('m', 'Middle skill.'), 'a/guide.md': 'Guide v2.\n' }, remove: ['a/b'] },
      { listChanged: true, updated: ['skill://a/guide.md', 'skill://z/notes.md'], skillsChanged: [A, B, 'skill://m/SKILL.md', Z] },
    ],
  ])('%s', async (_label, spec, mutation, expected) => {
    const { before, full, incremental } = await snapshots(spec, mutation);
    expect(diffSnapshots(before, full)).toStrictEqual(expected);
    expect(diffSnapshots(before, incremental)).toStrictEqual(expected);
    // Going back is the mirror image: the same URIs change, and the list changes in both directions or neither.
    expect(diffSnapshots(full, before)).toStrictEqual(expected);
  });

  it('a snapshot compared with itself, or with an identical rebuild, has no changes', async () => {
    const root = await temps.tree(BASE);
    const first = await buildSnapshot([{ dir: root, prefix: [] }], 1);
    const second = await buildSnapshot([{ dir: root, prefix: [] }], 2);
    expect(second.skills.get(A)?.entry).not.toBe(first.skills.get(A)?.entry);
    expect(diffSnapshots(first, first)).toStrictEqual(NO_CHANGE);
    expect(diffSnapshots(first, second)).toStrictEqual(NO_CHANGE);
    expect(diffSnapshots(second, first)).toStrictEqual(NO_CHANGE);
  });

  it('a root that disappears withdraws everything; its return brings everything back', async () => {
    const root = await temps.tree(BASE);
    const roots = [{ dir: root, prefix: [] }];
    const present = await buildSnapshot(roots, 1);
    await removeTree(root);
    const gone = await buildSnapshot(roots, 2);
    expect(gone.skills.size).toBe(0);
    expect(diffSnapshots(present, gone)).toStrictEqual({ listChanged: true, updated: [], skillsChanged: [A, B, Z] });
    expect(diffSnapshots(gone, present)).toStrictEqual({ listChanged: true, updated: [], skillsChanged: [A, B, Z] });
    expect(diffSnapshots(gone, gone)).toStrictEqual(NO_CHANGE);
  });

  it('the winner of a conflict between roots changing hands is an entry change at the same URIs', async () => {
    const shared = { 'dup/SKILL.md': skillMd('dup', 'Shared description.'), 'dup/same.md': 'Same bytes.\n' };
    const first = await temps.tree({ ...shared, 'dup/first.md': 'Only in the first root.\n', 'dup/differs.md': 'First.\n' });
    const second = await temps.tree({ ...shared, 'dup/second.md': 'Only in the second root.\n', 'dup/differs.md': 'Second!\n' });
    const roots = [{ dir: first, prefix: [] }, { dir: second, prefix: [] }];
    const before = await buildSnapshot(roots, 1);
    await removeTree(path.join(first, 'dup'));
    const after = await buildSnapshot(roots, 2);
    expect(after.skills.get('skill://dup/SKILL.md')?.rootIndex).toBe(1);
    expect(diffSnapshots(before, after)).toStrictEqual({
      listChanged: true,
      updated: ['skill://dup/differs.md'],
      skillsChanged: ['skill://dup/SKILL.md'],
    });
  });

  it('a prefix-mounted root reports the prefixed URIs', async () => {
    const root = await temps.tree(BASE);
    const roots = [{ dir: root, prefix: ['acme', 'tools'] }];
    const before = await buildSnapshot(roots, 1);
    await addToTree(root, { 'a/b/ref.md': 'Ref, longer now.\n' });
    const after = await buildSnapshot(roots, 2);
    expect(diffSnapshots(before, after)).toStrictEqual({
      listChanged: false,
      updated: ['skill://acme/tools/a/b/ref.md'],
      skillsChanged: ['skill://acme/tools/a/SKILL.md', 'skill://acme/tools/a/b/SKILL.md'],
    });
  });
});

/** A published skill made the way the builder makes one, with its files in the given order (not sorted). */
async function publish(segments: readonly string[], files: readonly [string, string][], description = 'A skill.'): Promise<PublishedSkill> {
  const name = segments.at(-1) ?? '';
  const manifest = skillMd(name, description);
  const all: [string, string][] = [...files, ['SKILL.md', manifest]];
  const dir = `/srv/skills/${segments.join('/')}`;
  const records: FileRecord[] = all.map(([rel, text]) => {
    const bytes = new TextEncoder().encode(text);
    const fileName = rel.slice(rel.lastIndexOf('/') + 1);
    return Object.freeze({
      uri: buildSkillUri([...segments, ...rel.split('/')]),
      path: `${dir}/${rel}`,
      name: fileName,
      digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
      size: bytes.byteLength,
      mtimeMs: 1_700_000_000_000,
      ctimeMs: 1_700_000_000_000,
      ino: 1,
      dev: 1,
      mimeType: mimeTypeFor(fileName),
      rootIndex: 0,
      rel: `${segments.join('/')}/${rel}`,
    });
  });
  const result = await buildEntry({ segments, manifestPath: `${dir}/SKILL.md`, manifestBytes: new TextEncoder().encode(manifest), files: records });
  if (!('built' in result)) throw new Error(JSON.stringify(result));
  const subdirs = new Set(all.flatMap(([rel]) => (rel.includes('/') ? [rel.slice(0, rel.lastIndexOf('/'))] : [])));
  return {
    rootIndex: 0,
    rootDir: '/srv/skills',
    segments,
    dir,
    built: result.built,
    manifestSize: Buffer.byteLength(manifest),
    files: records,
    dirUris: [buildSkillUri(segments), ...[...subdirs].map((sub) => buildSkillUri([...segments, ...sub.split('/')]))],
  };
}

describe('diffSnapshots output order', () => {
  // Listed so that map iteration order is the reverse of code-unit order, and localeCompare order differs from both.
  const NAMES = ['~x.md', 'a/b.md', 'a.md', 'a-b.md', 'B.md', 'é.md'];
  const SORTED = ['skill://s/%C3%A9.md', 'skill://s/B.md', 'skill://s/a-b.md', 'skill://s/a.md', 'skill://s/a/b.md', 'skill://s/~x.md'];

  it('sorts updated and skillsChanged by code unit, whatever the snapshot iteration order', async () => {
    const before = await assembleSnapshot(
      [
        await publish(['z'], [['z.md', 'z1']]),
        await publish(['s'], NAMES.map((name) => [name, `${name} v1`])),
        await publish(['b'], [['b.md', 'b1']]),
        await publish(['a'], [['a.md', 'a1']]),
      ],
      [],
      1,
    );
    const after = await assembleSnapshot(
      [
        await publish(['z'], [['z.md', 'z2']]),
        await publish(['s'], NAMES.map((name) => [name, `${name} v2`])),
        await publish(['b'], [['b.md', 'b1']], 'Now different.'),
      ],
      [],
      2,
    );
    expect([...after.files.keys()].slice(0, 3)).toEqual(['skill://z/z.md', 'skill://z/SKILL.md', 'skill://s/~x.md']);
    expect(diffSnapshots(before, after)).toStrictEqual({
      listChanged: true,
      updated: ['skill://b/SKILL.md', ...SORTED, 'skill://z/z.md'],
      skillsChanged: ['skill://a/SKILL.md', 'skill://b/SKILL.md', 'skill://s/SKILL.md', 'skill://z/SKILL.md'],
    });
    expect(SORTED.toSorted((x, y) => x.localeCompare(y))).not.toEqual(SORTED);
  });

  it('empty snapshots: nothing to diff', async () => {
    const empty = await assembleSnapshot([], [], 1);
    expect(diffSnapshots(empty, await assembleSnapshot([], [], 2))).toStrictEqual(NO_CHANGE);
  });

  it('reused records (an incremental rebuild outside a skill) are not reported, rebuilt equal ones neither', async () => {
    const kept = await publish(['k'], [['k.md', 'k']]);
    const rebuilt = await publish(['r'], [['r.md', 'r']]);
    const before = await assembleSnapshot([kept, rebuilt], [], 1);
    const after = await assembleSnapshot([kept, await publish(['r'], [['r.md', 'r']])], [], 2);
    expect(after.skills.get('skill://k/SKILL.md')?.entry).toBe(before.skills.get('skill://k/SKILL.md')?.entry);
    expect(after.skills.get('skill://r/SKILL.md')?.entry).not.toBe(before.skills.get('skill://r/SKILL.md')?.entry);
    expect(diffSnapshots(before, after)).toStrictEqual(NO_CHANGE);
  });
});

describe('directory resources', () => {
  it('an empty directory created inside a skill is a published URI appearing: list_changed', async () => {
    const root = await makeTree({ 'z/SKILL.md': skillMd('z', 'Z.') });
    try {
      const before = await buildSnapshot([{ dir: root, prefix: [] }], 1);
      await fsp.mkdir(path.join(root, 'z', 'empty'));
      const after = await buildSnapshot([{ dir: root, prefix: [] }], 2);
      expect(diffSnapshots(before, after)).toEqual({ listChanged: true, updated: [], skillsChanged: [] });
      expect(diffSnapshots(after, before)).toEqual({ listChanged: true, updated: [], skillsChanged: [] });
    } finally {
      await removeTree(root);
    }
  });
});
