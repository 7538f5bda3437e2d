/**
 * `manifest --check` comparison (pure): diffManifests, manifestsMatch and formatManifestDiff give exact results for
 * every kind of change: skills added and removed, frontmatter keys added/removed/changed, files added, removed and
 * changed (digest or size), and combinations, all in code-unit URI order.
 */
import { describe, expect, it } from 'vitest';

import { parseManifest } from '../../src/commands/manifest.js';
import {
  diffManifests,
  formatManifestDiff,
  type ManifestDiff,
  manifestsMatch,
} from '../../src/commands/manifest-diff.js';
import type { SkillEntry } from '../../src/index/types.js';

const D = (char: string): string => `sha256:${char.repeat(64)}`;

/** A skill entry under `skill://<path>/` with `SKILL.md` first and the given extra files (name → [digest char, size]). */
function entry(
  skillPath: string,
  frontmatter: Record<string, unknown>,
  files: Record<string, [string, number]> = {},
): SkillEntry {
  const base = `skill://${skillPath}`;
  return {
    uri: `${base}/SKILL.md`,
    frontmatter: { name: skillPath.split('/').at(-1) ?? '', description: 'A skill.', ...frontmatter },
    resources: [
      { uri: `${base}/SKILL.md`, digest: D('0'), size: 100 },
      ...Object.entries(files).map(([name, [digest, size]]) => ({ uri: `${base}/${name}`, digest: D(digest), size })),
    ],
  };
}

const EMPTY: ManifestDiff = { added: [], removed: [], leftOut: [], changed: [] };

describe('diffManifests / manifestsMatch / formatManifestDiff', () => {
  it('reports nothing for identical manifests (and for the same skills in another order)', () => {
    const a = entry('alpha', {}, { 'x.md': ['1', 10] });
    const b = entry('acme/beta', { license: 'MIT' });
    const diff = diffManifests([a, b], [b, a]);
    expect(diff).toEqual(EMPTY);
    expect(manifestsMatch(diff)).toBe(true);
    expect(formatManifestDiff(diff)).toBe('0 skill(s) differ: 0 added, 0 removed, 0 left out, 0 changed\n');
    expect(manifestsMatch(diffManifests([], []))).toBe(true);
  });

  it('reports skills added, sorted by URI', () => {
    const diff = diffManifests([entry('m', {})], [entry('z', {}), entry('m', {}), entry('acme/a', {})]);
    expect(diff).toEqual({
      added: ['skill://acme/a/SKILL.md', 'skill://z/SKILL.md'],
      removed: [],
      leftOut: [],
      changed: [],
    });
    expect(manifestsMatch(diff)).toBe(false);
    expect(formatManifestDiff(diff)).toBe(
      '+ skill://acme/a/SKILL.md (skill added)\n+ skill://z/SKILL.md (skill added)\n2 skill(s) differ: 2 added, 0 removed, 0 left out, 0 changed\n',
    );
  });

  it('reports skills removed, sorted by URI', () => {
    const diff = diffManifests([entry('b', {}), entry('a', {}), entry('keep', {})], [entry('keep', {})]);
    expect(diff).toEqual({
      added: [],
      removed: ['skill://a/SKILL.md', 'skill://b/SKILL.md'],
      leftOut: [],
      changed: [],
    });
    expect(manifestsMatch(diff)).toBe(false);
    expect(formatManifestDiff(diff)).toBe(
      '- skill://a/SKILL.md (skill removed)\n- skill://b/SKILL.md (skill removed)\n2 skill(s) differ: 0 added, 2 removed, 0 left out, 0 changed\n',
    );
  });

  it('reports frontmatter keys changed, added and removed, sorted, including nested values', () => {
    const before = entry('alpha', {
      description: 'Old.',
      license: 'MIT',
      metadata: { team: 'a' },
      compatibility: 'any',
    });
    const after = entry('alpha', {
      description: 'New.',
      license: 'MIT',
      metadata: { team: 'b' },
      'allowed-tools': 'Bash',
    });
    const diff = diffManifests([before], [after]);
    expect(diff).toEqual({
      added: [],
      removed: [],
      leftOut: [],
      changed: [
        {
          uri: 'skill://alpha/SKILL.md',
          frontmatter: ['allowed-tools', 'compatibility', 'description', 'metadata'],
          filesAdded: [],
          filesRemoved: [],
          filesChanged: [],
          meta: [],
        },
      ],
    });
    expect(formatManifestDiff(diff)).toBe(
      '~ skill://alpha/SKILL.md: frontmatter changed (allowed-tools, compatibility, description, metadata)\n' +
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed\n',
    );
  });

  it('reports a file added', () => {
    const diff = diffManifests([entry('alpha', {})], [entry('alpha', {}, { 'references/new.md': ['2', 5] })]);
    expect(diff.changed).toEqual([
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: [],
        filesAdded: ['skill://alpha/references/new.md'],
        filesRemoved: [],
        filesChanged: [],
        meta: [],
      },
    ]);
    expect(formatManifestDiff(diff)).toBe(
      '~ skill://alpha/SKILL.md: 1 file(s) added\n    + skill://alpha/references/new.md\n1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed\n',
    );
  });

  it('reports a file removed', () => {
    const diff = diffManifests([entry('alpha', {}, { 'old.md': ['3', 7] })], [entry('alpha', {})]);
    expect(diff.changed).toEqual([
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: [],
        filesAdded: [],
        filesRemoved: ['skill://alpha/old.md'],
        filesChanged: [],
        meta: [],
      },
    ]);
    expect(formatManifestDiff(diff)).toBe(
      '~ skill://alpha/SKILL.md: 1 file(s) removed\n    - skill://alpha/old.md\n1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed\n',
    );
  });

  it('reports a file changed when only its digest differs, and when only its size differs', () => {
    const before = entry('alpha', {}, { 'a.md': ['1', 10], 'b.md': ['2', 20], 'c.md': ['3', 30] });
    const after = entry('alpha', {}, { 'a.md': ['9', 10], 'b.md': ['2', 21], 'c.md': ['3', 30] });
    const diff = diffManifests([before], [after]);
    expect(diff.changed).toEqual([
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: [],
        filesAdded: [],
        filesRemoved: [],
        filesChanged: ['skill://alpha/a.md', 'skill://alpha/b.md'],
        meta: [],
      },
    ]);
    expect(formatManifestDiff(diff)).toBe(
      '~ skill://alpha/SKILL.md: 2 file(s) changed\n    ~ skill://alpha/a.md\n    ~ skill://alpha/b.md\n' +
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed\n',
    );
  });

  it('treats a renamed file as one removed and one added', () => {
    const diff = diffManifests(
      [entry('alpha', {}, { 'old name.md': ['4', 4] })],
      [entry('alpha', {}, { 'new-name.md': ['4', 4] })],
    );
    expect(diff.changed).toEqual([
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: [],
        filesAdded: ['skill://alpha/new-name.md'],
        filesRemoved: ['skill://alpha/old name.md'],
        filesChanged: [],
        meta: [],
      },
    ]);
  });

  it('combines every kind of change, in the documented order: +, -, then ~ with files indented', () => {
    const before = [
      entry('gone', {}),
      entry('b-skill', { description: 'Before.' }, { 'keep.md': ['1', 1], 'drop.md': ['2', 2], 'edit.md': ['3', 3] }),
      entry('a-skill', { license: 'MIT' }),
      entry('same', {}, { 'x.md': ['5', 5] }),
    ];
    const after = [
      entry('same', {}, { 'x.md': ['5', 5] }),
      entry('a-skill', { license: 'Apache-2.0' }),
      entry(
        'b-skill',
        { description: 'After.' },
        { 'keep.md': ['1', 1], 'edit.md': ['4', 3], 'z-new.md': ['6', 6], 'a-new.md': ['7', 7] },
      ),
      entry('new', {}),
    ];
    const diff = diffManifests(before, after);
    expect(diff).toEqual({
      added: ['skill://new/SKILL.md'],
      removed: ['skill://gone/SKILL.md'],
      leftOut: [],
      changed: [
        {
          uri: 'skill://a-skill/SKILL.md',
          frontmatter: ['license'],
          filesAdded: [],
          filesRemoved: [],
          filesChanged: [],
          meta: [],
        },
        {
          uri: 'skill://b-skill/SKILL.md',
          frontmatter: ['description'],
          filesAdded: ['skill://b-skill/a-new.md', 'skill://b-skill/z-new.md'],
          filesRemoved: ['skill://b-skill/drop.md'],
          filesChanged: ['skill://b-skill/edit.md'],
          meta: [],
        },
      ],
    });
    expect(manifestsMatch(diff)).toBe(false);
    expect(formatManifestDiff(diff)).toBe(
      [
        '+ skill://new/SKILL.md (skill added)',
        '- skill://gone/SKILL.md (skill removed)',
        '~ skill://a-skill/SKILL.md: frontmatter changed (license)',
        '~ skill://b-skill/SKILL.md: frontmatter changed (description), 2 file(s) added, 1 file(s) removed, 1 file(s) changed',
        '    + skill://b-skill/a-new.md',
        '    + skill://b-skill/z-new.md',
        '    - skill://b-skill/drop.md',
        '    ~ skill://b-skill/edit.md',
        '4 skill(s) differ: 1 added, 1 removed, 0 left out, 2 changed',
        '',
      ].join('\n'),
    );
  });

  it('sorts in code-unit order (uppercase before lowercase, "-" before "/")', () => {
    const diff = diffManifests([], [entry('b', {}), entry('B', {}), entry('a/b', {}), entry('a-b', {})]);
    expect(diff.added).toEqual([
      'skill://B/SKILL.md',
      'skill://a-b/SKILL.md',
      'skill://a/b/SKILL.md',
      'skill://b/SKILL.md',
    ]);
  });

  it('a saved "dynamic" entry is parsed as no files: switching to a file list adds every file', () => {
    // A saved manifest may hold a `"dynamic"` entry from another server; this server's own entries never do.
    const saved = parseManifest(JSON.stringify({ skills: [{ ...entry('alpha', {}), resources: 'dynamic' }] }));
    expect(saved.skills).toEqual([{ ...entry('alpha', {}), resources: [] }]);
    const dynamic = saved.skills[0] as SkillEntry;
    const listed = entry('alpha', {}, { 'a.md': ['1', 1] });
    expect(diffManifests([dynamic], [listed]).changed).toEqual([
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: [],
        filesAdded: ['skill://alpha/SKILL.md', 'skill://alpha/a.md'],
        filesRemoved: [],
        filesChanged: [],
        meta: [],
      },
    ]);
    expect(manifestsMatch(diffManifests([dynamic], [dynamic]))).toBe(true);
  });

  it('does not mutate its inputs', () => {
    const before = [entry('b', {}), entry('a', {}, { 'z.md': ['1', 1], 'a.md': ['2', 2] })];
    const after = [entry('a', {}, { 'a.md': ['3', 2] })];
    const snapshot = JSON.stringify([before, after]);
    diffManifests(before, after);
    expect(JSON.stringify([before, after])).toBe(snapshot);
  });
});
