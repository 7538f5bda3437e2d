/**
 * `diffSnapshots` on snapshots built from real temporary trees, both by full builds and by the builder's incremental
 * rebuild of the regions the filesystem events call for (as the live index does): which notifications a change calls
 * for (`list_changed`, `resources/updated`, changed skills), in code-unit order, and that incremental rebuilds reuse
 * what they did not touch and agree with full builds.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot, IndexBuilder } from '../../src/index/build.js';
import { diffSnapshots, type SnapshotDiff } from '../../src/index/diff.js';
import { EMPTY_SNAPSHOT, findDirectory, findFile } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { regionsOf, type WatchEvent } from '../../src/watch/classify.js';
import { sha256 } from '../helpers/disk.js';
import { addToTree, makeTree, removeTree, skillMd, tempTrees, type TreeEntry } from '../helpers/tree.js';

/** A diff without its `appeared` list, which {@link expectDiff} derives from the snapshots' entries. */
type Expected = Omit<SnapshotDiff, 'appeared'>;
const NO_CHANGE: Expected = { listChanged: false, updated: [], skillsChanged: [] };

/** The file URIs a snapshot serves: its skills' resources. */
function fileUris(snapshot: Snapshot): Set<string> {
  const uris = new Set<string>();
  for (const skill of snapshot.ordered) {
    const entry = JSON.parse(skill.json) as { resources: { uri: string }[] | 'dynamic' };
    if (entry.resources !== 'dynamic') for (const resource of entry.resources) uris.add(resource.uri);
  }
  return uris;
}

/**
 * Asserts `diffSnapshots(from, to)` is `want`, with `appeared` the file URIs `to` serves and `from` does not (none
 * against the empty snapshot before a first build).
 */
function expectDiff(from: Snapshot, to: Snapshot, want: Expected): void {
  const before = fileUris(from);
  const appeared = from.generation === 0 ? [] : [...fileUris(to)].filter((uri) => !before.has(uri)).sort();
  expect(diffSnapshots(from, to)).toStrictEqual({ ...want, appeared });
}

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

/**
 * The events per-directory `fs.watch` watches report for `mutation` on the tree at `root` (computed before it is
 * applied): `rename` for an entry appearing in a watched directory (for a new directory, only its topmost one: nothing
 * watches inside it yet), `change` for a rewritten file, `rename` for every entry removed.
 */
async function eventsFor(root: string, mutation: Mutation): Promise<WatchEvent[]> {
  const exists = async (rel: string): Promise<boolean> =>
    fsp.lstat(path.join(root, rel)).then(
      () => true,
      () => false,
    );
  const events: WatchEvent[] = [];
  const newDirs = new Set<string>();
  for (const rel of Object.keys(mutation.write ?? {})) {
    const segments = rel.split('/');
    let insideNew = false;
    for (let depth = 1; depth < segments.length && !insideNew; depth++) {
      const dir = segments.slice(0, depth).join('/');
      if (newDirs.has(dir)) insideNew = true;
      else if (!(await exists(dir))) {
        newDirs.add(dir);
        events.push({ rootIndex: 0, kind: 'rename', rel: dir });
        insideNew = true;
      }
    }
    if (!insideNew) events.push({ rootIndex: 0, kind: (await exists(rel)) ? 'change' : 'rename', rel });
  }
  for (const rel of mutation.remove ?? []) {
    const walk = async (current: string): Promise<void> => {
      const stat = await fsp.lstat(path.join(root, current));
      if (stat.isDirectory())
        for (const name of await fsp.readdir(path.join(root, current))) await walk(`${current}/${name}`);
      events.push({ rootIndex: 0, kind: 'rename', rel: current });
    };
    await walk(rel);
  }
  return events;
}

async function applyMutation(root: string, mutation: Mutation): Promise<void> {
  if (mutation.write !== undefined) await addToTree(root, mutation.write);
  for (const rel of mutation.remove ?? []) await fsp.rm(path.join(root, rel), { recursive: true, force: true });
}

/** What a snapshot serves, compared between builds: every entry's JSON, in list order, and every diagnostic. */
function served(snapshot: Snapshot): { entries: string[]; diagnostics: string[] } {
  return {
    entries: snapshot.ordered.map((skill) => skill.json),
    diagnostics: snapshot.diagnostics.map(
      (diagnostic) => `${diagnostic.severity} ${diagnostic.rule} ${diagnostic.file}`,
    ),
  };
}

describe('diffSnapshots on snapshots built from real trees', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  /**
   * Builds `spec`, applies `mutation`, and returns the snapshot before, the one after rebuilt from scratch, and the
   * one after rebuilt incrementally from the regions the mutation's events call for (as the live index does).
   */
  async function snapshots(
    spec: Record<string, TreeEntry>,
    mutation: Mutation,
  ): Promise<{ before: Snapshot; full: Snapshot; incremental: Snapshot }> {
    const root = await temps.tree(spec);
    const roots = [{ dir: root, prefix: [] }];
    const builder = new IndexBuilder(roots);
    const before = await builder.buildAll();
    const events = await eventsFor(root, mutation);
    await applyMutation(root, mutation);
    // Same-size rewrites within one timestamp tick would keep a cached digest; the cache is not under test here.
    for (const rel of Object.keys(mutation.write ?? {})) builder.distrust(path.join(root, ...rel.split('/')));
    const regions = regionsOf(events, (rootIndex) => builder.candidates(rootIndex));
    const incremental = regions.length === 0 ? before : await builder.rebuild(regions);
    const full = await buildSnapshot(roots);
    return { before, full, incremental };
  }

  it.each<[string, Record<string, TreeEntry>, Mutation, Expected]>([
    ['nothing changed on disk', BASE, {}, NO_CHANGE],
    ['a file rewritten with the same bytes', BASE, { write: { 'z/notes.md': 'Notes.\n' } }, NO_CHANGE],
    [
      'SKILL.md rewritten with the same bytes',
      BASE,
      { write: { 'a/b/SKILL.md': skillMd('b', 'Inner skill.') } },
      NO_CHANGE,
    ],
    [
      'an ignored file added inside a skill',
      BASE,
      { write: { 'z/.hidden.md': 'x', 'a/node_modules/m.js': 'x' } },
      NO_CHANGE,
    ],
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
      {
        listChanged: false,
        updated: ['skill://a/b/ref.md', 'skill://a/guide.md', 'skill://z/notes.md'],
        skillsChanged: [A, B, Z],
      },
    ],
    ['file added', BASE, { write: { 'z/new.md': 'New.\n' } }, { listChanged: true, updated: [], skillsChanged: [Z] }],
    [
      'file added in a new subdirectory of a nested skill',
      BASE,
      { write: { 'a/b/assets/logo.svg': '<svg/>' } },
      { listChanged: true, updated: [], skillsChanged: [A, B] },
    ],
    ['file removed', BASE, { remove: ['z/notes.md'] }, { listChanged: true, updated: [], skillsChanged: [Z] }],
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
    ['skill removed', BASE, { remove: ['z'] }, { listChanged: true, updated: [], skillsChanged: [Z] }],
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
      {
        write: { 'a/b/c/SKILL.md': skillMd('c', 'Innermost skill.'), 'a/b/SKILL.md': skillMd('wrong', 'Inner skill.') },
      },
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
      {
        write: {
          'z/notes.md': 'Notes v2.\n',
          'm/SKILL.md': skillMd('m', 'Middle skill.'),
          'a/guide.md': 'Guide v2.\n',
        },
        remove: ['a/b'],
      },
      {
        listChanged: true,
        updated: ['skill://a/guide.md', 'skill://z/notes.md'],
        skillsChanged: [A, B, 'skill://m/SKILL.md', Z],
      },
    ],
  ])('%s', async (_label, spec, mutation, expected) => {
    const { before, full, incremental } = await snapshots(spec, mutation);
    expectDiff(before, full, expected);
    expectDiff(before, incremental, expected);
    // Going back is the mirror image: the same URIs change, and the list changes in both directions or neither.
    expectDiff(full, before, expected);
    // The incremental rebuild serves exactly what a full build serves, and the two do not differ.
    expect(served(incremental)).toEqual(served(full));
    expectDiff(incremental, full, NO_CHANGE);
  });

  it('names the files that appeared: a file created again, a skill added, none against a first build', async () => {
    const root = await temps.tree(BASE);
    const roots = [{ dir: root, prefix: [] }];
    const builder = new IndexBuilder(roots);
    const first = await builder.buildAll();
    expect(diffSnapshots(EMPTY_SNAPSHOT, first).appeared).toEqual([]);
    await fsp.rm(path.join(root, 'z', 'notes.md'));
    const gone = await builder.rebuild([{ rootIndex: 0, rel: 'z' }]);
    expect(diffSnapshots(first, gone).appeared).toEqual([]);
    await addToTree(root, {
      'z/notes.md': 'Notes, written again.\n',
      'n/SKILL.md': skillMd('n', 'New skill.'),
      'n/refs/one.md': 'One.\n',
    });
    const back = await builder.rebuild([
      { rootIndex: 0, rel: 'z' },
      { rootIndex: 0, rel: 'n' },
    ]);
    expect(diffSnapshots(gone, back).appeared).toEqual([
      'skill://n/SKILL.md',
      'skill://n/refs/one.md',
      'skill://z/notes.md',
    ]);
  });

  it('a snapshot compared with itself, or with an identical rebuild, has no changes', async () => {
    const root = await temps.tree(BASE);
    const first = await buildSnapshot([{ dir: root, prefix: [] }]);
    const second = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(second.skills.get(A)).not.toBe(first.skills.get(A));
    expect(second.root).not.toBe(first.root);
    expectDiff(first, first, NO_CHANGE);
    expectDiff(first, second, NO_CHANGE);
    expectDiff(second, first, NO_CHANGE);
  });

  it('a root that disappears withdraws everything; its return brings everything back', async () => {
    const root = await temps.tree(BASE);
    const roots = [{ dir: root, prefix: [] }];
    const present = await buildSnapshot(roots);
    await removeTree(root);
    const gone = await buildSnapshot(roots);
    expect(gone.skills.size).toBe(0);
    expectDiff(present, gone, { listChanged: true, updated: [], skillsChanged: [A, B, Z] });
    expectDiff(gone, present, { listChanged: true, updated: [], skillsChanged: [A, B, Z] });
    expectDiff(gone, gone, NO_CHANGE);
  });

  it('the winner of a conflict between roots changing hands is an entry change at the same URIs', async () => {
    const shared = { 'dup/SKILL.md': skillMd('dup', 'Shared description.'), 'dup/same.md': 'Same bytes.\n' };
    const first = await temps.tree({
      ...shared,
      'dup/first.md': 'Only in the first root.\n',
      'dup/differs.md': 'First.\n',
    });
    const second = await temps.tree({
      ...shared,
      'dup/second.md': 'Only in the second root.\n',
      'dup/differs.md': 'Second!\n',
    });
    const roots = [
      { dir: first, prefix: [] },
      { dir: second, prefix: [] },
    ];
    const before = await buildSnapshot(roots);
    await removeTree(path.join(first, 'dup'));
    const after = await buildSnapshot(roots);
    expect(after.skills.get('skill://dup/SKILL.md')?.rootIndex).toBe(1);
    expectDiff(before, after, {
      listChanged: true,
      updated: ['skill://dup/differs.md'],
      skillsChanged: ['skill://dup/SKILL.md'],
    });
  });

  it('a prefix-mounted root reports the prefixed URIs', async () => {
    const root = await temps.tree(BASE);
    const roots = [{ dir: root, prefix: ['acme', 'tools'] }];
    const before = await buildSnapshot(roots);
    await addToTree(root, { 'a/b/ref.md': 'Ref, longer now.\n' });
    const after = await buildSnapshot(roots);
    expectDiff(before, after, {
      listChanged: false,
      updated: ['skill://acme/tools/a/b/ref.md'],
      skillsChanged: ['skill://acme/tools/a/SKILL.md', 'skill://acme/tools/a/b/SKILL.md'],
    });
  });
});

describe('diffSnapshots output order', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  // File names whose tree order (names sorted, depth first) and localeCompare order both differ from URI order.
  const NAMES = ['~x.md', 'a/b.md', 'a.md', 'a-b.md', 'B.md', 'é.md'];
  const SORTED = [
    'skill://s/%C3%A9.md',
    'skill://s/B.md',
    'skill://s/a-b.md',
    'skill://s/a.md',
    'skill://s/a/b.md',
    'skill://s/~x.md',
  ];

  /** `a`, `a-b` (whose directory sorts after `a` though its URIs sort before), `b`, `s` (with NAMES) and `z`. */
  function spec(version: 1 | 2): Record<string, TreeEntry> {
    const tree: Record<string, TreeEntry> = {
      'a-b/SKILL.md': skillMd('a-b', 'A skill.'),
      'a-b/x.md': `x${version}`,
      'b/SKILL.md': skillMd('b', version === 1 ? 'A skill.' : 'Now different.'),
      'b/b.md': 'b1',
      's/SKILL.md': skillMd('s', 'A skill.'),
      'z/SKILL.md': skillMd('z', 'A skill.'),
      'z/z.md': `z${version}`,
    };
    for (const name of NAMES) tree[`s/${name}`] = `${name} v${version}`;
    if (version === 1) Object.assign(tree, { 'a/SKILL.md': skillMd('a', 'A skill.'), 'a/a.md': 'a1' });
    return tree;
  }

  const EXPECTED: Expected = {
    listChanged: true,
    updated: ['skill://a-b/x.md', 'skill://b/SKILL.md', ...SORTED, 'skill://z/z.md'],
    skillsChanged: [
      'skill://a-b/SKILL.md',
      'skill://a/SKILL.md',
      'skill://b/SKILL.md',
      'skill://s/SKILL.md',
      'skill://z/SKILL.md',
    ],
  };

  it('the names really are in different orders (so the sort is under test)', () => {
    const treeOrder = (names: readonly string[]): string[] => {
      const sortedNames = [...new Set(names.map((name) => name.split('/')[0] as string))].sort();
      return sortedNames.flatMap((head) =>
        names.includes(head)
          ? [head]
          : treeOrder(
              names.filter((name) => name.startsWith(`${head}/`)).map((name) => name.slice(head.length + 1)),
            ).map((rest) => `${head}/${rest}`),
      );
    };
    const uri = (name: string): string => `skill://s/${name.split('/').map(encodeURIComponent).join('/')}`;
    expect(NAMES.map(uri).sort()).toEqual(SORTED);
    expect(treeOrder(NAMES).map(uri)).not.toEqual(SORTED);
    expect(NAMES.map(uri).toSorted((x, y) => x.localeCompare(y))).not.toEqual(SORTED);
    expect(['a', 'a-b'].map((name) => `skill://${name}/SKILL.md`).sort()).toEqual([
      'skill://a-b/SKILL.md',
      'skill://a/SKILL.md',
    ]);
  });

  it('sorts updated and skillsChanged by code unit, for full builds and for incremental rebuilds alike', async () => {
    const root = await temps.tree(spec(1));
    const roots = [{ dir: root, prefix: [] }];
    const builder = new IndexBuilder(roots);
    const before = await builder.buildAll();
    await removeTree(path.join(root, 'a'));
    await addToTree(root, spec(2));
    const after = await buildSnapshot(roots);
    expectDiff(before, after, EXPECTED);
    // Regions in an order that is neither URI order nor tree order.
    const incremental = await builder.rebuild(['z', 's', 'b', 'a-b', 'a'].map((rel) => ({ rootIndex: 0, rel })));
    expectDiff(before, incremental, EXPECTED);
  });

  it('empty snapshots: nothing to diff', async () => {
    expect(diffSnapshots(await buildSnapshot([]), await buildSnapshot([]))).toStrictEqual({
      ...NO_CHANGE,
      appeared: [],
    });
    expect(diffSnapshots(EMPTY_SNAPSHOT, await buildSnapshot([]))).toStrictEqual({ ...NO_CHANGE, appeared: [] });
    const empty = await temps.tree({ 'readme.md': 'No skills.\n' });
    expect(diffSnapshots(EMPTY_SNAPSHOT, await buildSnapshot([{ dir: empty, prefix: [] }]))).toStrictEqual({
      ...NO_CHANGE,
      appeared: [],
    });
  });
});

describe('incremental rebuilds reuse what they did not change', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  const SPEC: Record<string, TreeEntry> = {
    'k/SKILL.md': skillMd('k', 'Kept skill.'),
    'k/k.md': 'k\n',
    'r/SKILL.md': skillMd('r', 'Rebuilt skill.'),
    'r/r.md': 'r\n',
    'r/other.md': 'other\n',
    'r/sub/deep.md': 'deep\n',
  };

  async function built(): Promise<{ root: string; builder: IndexBuilder; before: Snapshot }> {
    const root = await temps.tree(SPEC);
    const builder = new IndexBuilder([{ dir: root, prefix: [] }]);
    return { root, builder, before: await builder.buildAll() };
  }

  it('a region outside every skill: every record, node and the namespace are the same objects; nothing to notify', async () => {
    const { root, builder, before } = await built();
    await fsp.mkdir(path.join(root, 'new-group'));
    const after = await builder.rebuild(
      regionsOf([{ rootIndex: 0, kind: 'rename', rel: 'new-group' }], (index) => builder.candidates(index)),
    );
    expect(after.generation).toBe(before.generation + 1);
    expect(after.skills.get('skill://k/SKILL.md')).toBe(before.skills.get('skill://k/SKILL.md'));
    expect(after.skills.get('skill://r/SKILL.md')).toBe(before.skills.get('skill://r/SKILL.md'));
    expect(after.root).toBe(before.root);
    expectDiff(before, after, NO_CHANGE);
  });

  it('a file changed in one skill: the other skill is reused; in the rebuilt one, unchanged files and directories keep their nodes', async () => {
    const { root, builder, before } = await built();
    await fsp.writeFile(path.join(root, 'r/r.md'), 'r, rewritten\n');
    const after = await builder.rebuild(
      regionsOf([{ rootIndex: 0, kind: 'change', rel: 'r/r.md' }], (index) => builder.candidates(index)),
    );
    expect(after.skills.get('skill://k/SKILL.md')).toBe(before.skills.get('skill://k/SKILL.md'));
    expect(after.skills.get('skill://r/SKILL.md')).not.toBe(before.skills.get('skill://r/SKILL.md'));
    expect(findFile(after, 'skill://k/k.md')?.node).toBe(findFile(before, 'skill://k/k.md')?.node);
    expect(findFile(after, 'skill://r/other.md')?.node).toBe(findFile(before, 'skill://r/other.md')?.node);
    expect(findFile(after, 'skill://r/SKILL.md')?.node).toBe(findFile(before, 'skill://r/SKILL.md')?.node);
    expect(findDirectory(after, 'skill://r/sub')?.node).toBe(findDirectory(before, 'skill://r/sub')?.node);
    expect(findFile(after, 'skill://r/r.md')?.node).not.toBe(findFile(before, 'skill://r/r.md')?.node);
    expect(findFile(after, 'skill://r/r.md')?.node.size).toBe(Buffer.byteLength('r, rewritten\n'));
    const rebuilt = after.skills.get('skill://r/SKILL.md');
    expect((JSON.parse(rebuilt?.json ?? 'null') as { resources: unknown }).resources).toContainEqual({
      uri: 'skill://r/r.md',
      digest: sha256('r, rewritten\n'),
      size: Buffer.byteLength('r, rewritten\n'),
    });
    expectDiff(before, after, {
      listChanged: false,
      updated: ['skill://r/r.md'],
      skillsChanged: ['skill://r/SKILL.md'],
    });
    expect(served(after)).toEqual(served(await buildSnapshot([{ dir: root, prefix: [] }])));
  });

  it('a file rewritten with the same bytes: a new node for the new identity, an equal entry, nothing to notify', async () => {
    const { root, builder, before } = await built();
    await fsp.writeFile(path.join(root, 'r/r.md'), 'r\n');
    const after = await builder.rebuild([{ rootIndex: 0, rel: 'r' }]);
    expect(after.skills.get('skill://r/SKILL.md')?.json).toBe(before.skills.get('skill://r/SKILL.md')?.json);
    expectDiff(before, after, NO_CHANGE);
  });

  it('a file appearing outside every skill is walked and finds nothing: no skill, no diagnostic', async () => {
    const { root, builder, before } = await built();
    await fsp.writeFile(path.join(root, 'loose.md'), 'Not in a skill.\n');
    const regions = regionsOf([{ rootIndex: 0, kind: 'rename', rel: 'loose.md' }], (index) =>
      builder.candidates(index),
    );
    expect(regions).toEqual([{ rootIndex: 0, rel: 'loose.md' }]);
    const after = await builder.rebuild(regions);
    expectDiff(before, after, NO_CHANGE);
    expect(after.diagnostics).toEqual([]);
  });

  it('the previous snapshot is left as it was', async () => {
    const { root, builder, before } = await built();
    const json = before.ordered.map((skill) => skill.json);
    const uris = before.ordered.map((skill) => skill.uri);
    await fsp.writeFile(path.join(root, 'r/r.md'), 'changed\n');
    await fsp.rm(path.join(root, 'k'), { recursive: true });
    const after = await builder.rebuild([
      { rootIndex: 0, rel: 'r' },
      { rootIndex: 0, rel: 'k' },
    ]);
    expect(after.ordered.map((skill) => skill.uri)).toEqual(['skill://r/SKILL.md']);
    expect(before.ordered.map((skill) => skill.json)).toEqual(json);
    expect(before.ordered.map((skill) => skill.uri)).toEqual(uris);
    expect(findFile(before, 'skill://k/k.md')?.node.size).toBe(2);
    expect(findFile(before, 'skill://r/r.md')?.node.size).toBe(2);
  });
});

describe('directory resources', () => {
  it('an empty directory created inside a skill is a published URI appearing: list_changed', async () => {
    const root = await makeTree({ 'z/SKILL.md': skillMd('z', 'Z.') });
    try {
      const before = await buildSnapshot([{ dir: root, prefix: [] }]);
      await fsp.mkdir(path.join(root, 'z', 'empty'));
      const after = await buildSnapshot([{ dir: root, prefix: [] }]);
      expectDiff(before, after, { listChanged: true, updated: [], skillsChanged: [] });
      expectDiff(after, before, { listChanged: true, updated: [], skillsChanged: [] });
    } finally {
      await removeTree(root);
    }
  });
});
