import { describe, expect, it, vi } from 'vitest';

import type { Region } from '../../src/index/region.js';
import { eventPath, isIgnoredEventName, regionOf, regionsOf, type WatchEvent } from '../../src/watch/classify.js';

type Kind = WatchEvent['kind'];
/** Every kind `fs.watch` reports, plus the watcher's own `rescan`. */
const KINDS: readonly Kind[] = ['change', 'rename', 'rescan'];
/** The kinds a filesystem entry can report (a rescan is not about one entry). */
const ENTRY_KINDS: readonly Kind[] = ['change', 'rename'];

const event = (kind: Kind, rel: string, rootIndex = 0): WatchEvent => ({ rootIndex, kind, rel });
/** Candidate skill directories, as a list so that test titles show them. */
type Dirs = readonly string[];
const candidates = (...dirs: string[]): Dirs => dirs;
/** `regionOf` for one event of root 0. */
const region = (kind: Kind, rel: string, dirs: Dirs): string | undefined => regionOf(event(kind, rel), new Set(dirs));
/** Regions of root 0, as `regionsOf` returns them. */
const r0 = (...rels: string[]): Region[] => rels.map((rel) => ({ rootIndex: 0, rel }));

/** No skill anywhere in the root. */
const NONE = candidates();
/** Three nested skills: `a` ⊃ `a/b` ⊃ `a/b/c`. */
const NESTED = candidates('a', 'a/b', 'a/b/c');
/** A skill deep under grouping directories, with no enclosing skill. */
const DEEP = candidates('x/y/z');
/** The root is itself a skill, with a nested one. */
const ROOT_SKILL = candidates('', 'x');
/** A skill whose name is a prefix of other names in the root. */
const A_ONLY = candidates('a');

describe('regionOf: the root itself', () => {
  it.each([
    ['root appears or vanishes', 'rename', NONE],
    ['root vanishes, skills inside', 'rename', NESTED],
    ['root vanishes, root is a skill', 'rename', ROOT_SKILL],
    ['attributes of the root change', 'change', DEEP],
    ['rescan of the root', 'rescan', NONE],
  ] as const)('%s (rel "") → ""', (_label, kind, dirs) => {
    expect(region(kind, '', dirs)).toBe('');
  });

  it.each(KINDS.flatMap((kind) => [NONE, NESTED, ROOT_SKILL, DEEP].map((dirs) => [kind, dirs] as const)))(
    'root SKILL.md, %s, candidates %j → ""',
    (kind, dirs) => {
      expect(region(kind, 'SKILL.md', dirs)).toBe('');
    },
  );

  it.each(KINDS.flatMap((kind) => [NONE, NESTED, DEEP].map((dirs) => [kind, dirs] as const)))(
    'root .skillsignore, %s, candidates %j → ""',
    (kind, dirs) => {
      expect(region(kind, '.skillsignore', dirs)).toBe('');
    },
  );

  it.each([
    ['skill.md', NONE],
    ['SKILL.MD', NONE],
    ['Skill.md', NESTED],
    ['SKILL.md.bak', NONE],
    ['SKILL.md~', NONE],
    ['SKILL', NONE],
    [' SKILL.md', NONE],
  ])(
    'root file %j is not the manifest: its content changing → undefined; it appearing → itself (walking a file finds nothing)',
    (rel, dirs) => {
      expect(region('change', rel, dirs)).toBeUndefined();
      expect(region('rename', rel, dirs)).toBe(rel);
    },
  );
});

describe('regionOf: rescan', () => {
  it.each([
    ['', NONE],
    ['a/x.md', NESTED],
    ['.git/HEAD', NESTED],
    ['node_modules/pkg', NONE],
    ['notes.md', NONE],
    ['x/y/z/f.md', DEEP],
    ['a/.skillsignore', A_ONLY],
  ] as const)('rescan naming %j with candidates %j → the whole root, whatever it names', (rel, dirs) => {
    expect(region('rescan', rel, dirs)).toBe('');
  });
});

describe('regionOf: ignored segments anywhere in the path', () => {
  it.each([
    ['.git', 'rename', NONE],
    ['.git', 'rename', ROOT_SKILL],
    ['.git', 'change', ROOT_SKILL],
    ['.git/HEAD', 'change', NONE],
    ['.git/x', 'rename', NESTED],
    ['.git/objects/ab/cdef', 'rename', ROOT_SKILL],
    ['.git/SKILL.md', 'rename', NONE],
    ['.git/.skillsignore', 'change', NONE],
    ['node_modules', 'rename', NONE],
    ['node_modules/a/b', 'rename', NONE],
    ['node_modules/a/b', 'change', NESTED],
    ['node_modules/pkg/SKILL.md', 'rename', NONE],
    ['node_modules/pkg', 'rename', ROOT_SKILL],
    ['node_modules/pkg/.skillsignore', 'rename', NONE],
    ['a/node_modules', 'rename', NESTED],
    ['a/node_modules/pkg/SKILL.md', 'rename', NESTED],
    ['a/node_modules/.skillsignore', 'change', NESTED],
    ['a/b/c/node_modules/x.js', 'change', NESTED],
    ['a/.cache/b', 'rename', NESTED],
    ['a/.cache/b', 'rename', NONE],
    ['a/.cache', 'rename', NESTED],
    ['a/.cache/.skillsignore', 'rename', NESTED],
    ['x/.hidden/SKILL.md', 'rename', NONE],
    ['x/y/.z/SKILL.md', 'rename', DEEP],
    ['x/y/z/.env', 'change', DEEP],
    ['a/.SKILL.md', 'rename', NONE],
    ['.SKILL.md', 'rename', NONE],
    ['.SKILL.md.swp', 'rename', NONE],
    ['.SKILL.md.swp', 'change', ROOT_SKILL],
    ['a/b/.SKILL.md.swp', 'change', NESTED],
    ['a/.guide.md.swp', 'rename', NESTED],
    ['a/b/c/.guide.md.swx', 'rename', NESTED],
    ['x/.DS_Store', 'rename', ROOT_SKILL],
    ['.', 'rename', NONE],
    ['a/..', 'rename', NESTED],
    ['a/../SKILL.md', 'rename', NONE],
  ] as const)('%j (%s) with candidates %j → undefined', (rel, kind, dirs) => {
    expect(region(kind, rel, dirs)).toBeUndefined();
  });

  it.each([
    ['a/x.swp', 'a'],
    ['a/SKILL.md.swp', 'a'],
    ['a/Node_Modules/x.md', 'a'],
    ['a/node_modules2/x.md', 'a'],
    ['a/_node_modules/x.md', 'a'],
    ['a/b/file.', 'a'],
    ['a/b/~backup.md', 'a'],
    ['a/b/c/4913', 'a'],
    ['a/x.git', 'a'],
    ['a/skillsignore', 'a'],
    ['a/.skillsignore.swp', undefined],
  ])('look-alike %j is not ignored: inside skill → %j', (rel, expected) => {
    expect(region('change', rel, NESTED)).toBe(expected);
    expect(region('rename', rel, NESTED)).toBe(expected);
  });
});

describe('regionOf: .skillsignore below the root → the region of its directory', () => {
  it.each([
    ['a/.skillsignore', NESTED, 'a'],
    ['a/b/.skillsignore', NESTED, 'a'],
    ['a/b/c/d/.skillsignore', NESTED, 'a'],
    ['x/y/z/.skillsignore', DEEP, 'x/y/z'],
    ['x/y/.skillsignore', DEEP, 'x/y'],
    ['x/.skillsignore', DEEP, 'x'],
    ['p/q/.skillsignore', NONE, 'p/q'],
    ['ab/.skillsignore', A_ONLY, 'ab'],
    ['x/.skillsignore', ROOT_SKILL, ''],
    ['deep/er/.skillsignore', candidates(''), ''],
  ] as const)('%j with candidates %j → %j, whether it changed or appeared', (rel, dirs, expected) => {
    expect(region('change', rel, dirs)).toBe(expected);
    expect(region('rename', rel, dirs)).toBe(expected);
  });
});

describe('regionOf: inside a skill → the outermost enclosing skill', () => {
  it.each([
    ['a/x.md', 'change', NESTED, 'a'],
    ['a/SKILL.md', 'change', NESTED, 'a'],
    ['a/SKILL.md', 'rename', NESTED, 'a'],
    ['a/b/x.md', 'rename', NESTED, 'a'],
    ['a/b/SKILL.md', 'change', NESTED, 'a'],
    ['a/b/c/x.md', 'change', NESTED, 'a'],
    ['a/b/c/x.md', 'rename', NESTED, 'a'],
    ['a/b/c/SKILL.md', 'rename', NESTED, 'a'],
    ['a/b/c/d/e/f.md', 'rename', NESTED, 'a'],
    ['a/b/c/new/SKILL.md', 'rename', NESTED, 'a'],
    ['a/b/c/d', 'rename', NESTED, 'a'],
    ['a/refs', 'rename', NESTED, 'a'],
    ['a/refs', 'change', NESTED, 'a'],
    ['a/b/refs', 'rename', NESTED, 'a'],
    ['x/y/z/f.md', 'change', DEEP, 'x/y/z'],
    ['x/y/z/r/f.md', 'rename', DEEP, 'x/y/z'],
    ['x/y/z/SKILL.md', 'change', DEEP, 'x/y/z'],
    ['x/y/z/SKILL.md', 'rename', DEEP, 'x/y/z'],
    ['x/y/z/new/SKILL.md', 'rename', DEEP, 'x/y/z'],
    ['p/q/r/f.md', 'change', candidates('p/q', 'p/q/r'), 'p/q'],
    ['p/q/r/f.md', 'change', candidates('p/q/r', 'p/q'), 'p/q'],
    ['a/x.md', 'change', A_ONLY, 'a'],
    ['café/é.md', 'change', candidates('café'), 'café'],
    ['a b/c d/x.md', 'change', candidates('a b'), 'a b'],
    ['a%2Fb/x.md', 'change', candidates('a%2Fb'), 'a%2Fb'],
  ] as const)('%j (%s) with candidates %j → %j', (rel, kind, dirs, expected) => {
    expect(region(kind, rel, dirs)).toBe(expected);
  });

  it.each([
    ['a', NESTED, 'a'],
    ['a/b', NESTED, 'a'],
    ['a/b/c', NESTED, 'a'],
    ['x/y/z', DEEP, 'x/y/z'],
    ['p/q/r', candidates('p/q/r', 'p/q/r/s'), 'p/q/r'],
    ['p/q/r/s', candidates('p/q/r', 'p/q/r/s'), 'p/q/r'],
  ] as const)('skill directory %j itself renamed or changed, candidates %j → %j', (rel, dirs, expected) => {
    expect(region('rename', rel, dirs)).toBe(expected);
    expect(region('change', rel, dirs)).toBe(expected);
  });

  it.each(
    ENTRY_KINDS.flatMap((kind) =>
      ['f.md', 'x', 'x/f.md', 'x/SKILL.md', 'y/SKILL.md', 'deep/er/x', 'a', 'a/b/c'].map((rel) => [rel, kind] as const),
    ),
  )('root is a skill: %j (%s) → ""', (rel, kind) => {
    expect(region(kind, rel, ROOT_SKILL)).toBe('');
    expect(region(kind, rel, candidates(''))).toBe('');
  });
});

describe('regionOf: outside every skill', () => {
  it.each([
    ['new/SKILL.md', 'rename', NONE, 'new'],
    ['new/SKILL.md', 'rename', NESTED, 'new'],
    ['p/q/r/SKILL.md', 'rename', NONE, 'p/q/r'],
    ['x/y/SKILL.md', 'rename', DEEP, 'x/y'],
    ['x/SKILL.md', 'rename', DEEP, 'x'],
    ['p/q/r/SKILL.md', 'rename', candidates('p/q/r/s'), 'p/q/r'],
    ['ab/SKILL.md', 'rename', A_ONLY, 'ab'],
    ['b/SKILL.md', 'rename', NESTED, 'b'],
    ['b/c/SKILL.md', 'rename', NESTED, 'b/c'],
    ['x/SKILL.md', 'change', NONE, 'x'],
    ['x/SKILL.md', 'rename', NONE, 'x'],
    ['x/SKILL.md', 'change', DEEP, 'x'],
  ] as const)('SKILL.md %j (%s) with candidates %j → its directory %j', (rel, kind, dirs, expected) => {
    expect(region(kind, rel, dirs)).toBe(expected);
  });

  it.each([
    ['notes.md', NONE],
    ['notes.md', NESTED],
    ['docs/readme.md', NESTED],
    ['x/y/z.md', NONE],
    ['x/y/f.md', DEEP],
    ['x/f.md', DEEP],
    ['x/y/zz/f.md', DEEP],
    ['x/y/z2/f.md', DEEP],
    ['b/x.md', NESTED],
    ['b/c/x.md', NESTED],
    ['ab/x', A_ONLY],
    ['a-b/x', A_ONLY],
    ['a.b/x', A_ONLY],
    ['a b/x', A_ONLY],
    ['A/x', A_ONLY],
    ['x/skill.md', NONE],
    ['x/SKILL.md.bak', NONE],
    ['x/SKILL.md/y', NONE],
    ['x/SKILL', NONE],
  ] as const)(
    'plain file %j with candidates %j: content change → undefined (never served); appearing → itself',
    (rel, dirs) => {
      expect(region('change', rel, dirs)).toBeUndefined();
      expect(region('rename', rel, dirs)).toBe(rel);
    },
  );

  it.each([
    ['new', NONE],
    ['new', NESTED],
    ['p/q', NONE],
    ['p/q/r/s/t', NONE],
    ['gone', NESTED],
    ['b', NESTED],
    ['b/c', NESTED],
    ['ab', A_ONLY],
    ['a-b', A_ONLY],
    ['aa/a', A_ONLY],
    ['x', DEEP],
    ['x/y', DEEP],
    ['x/y/zz', DEEP],
    ['x/y/z2', DEEP],
  ] as const)(
    'directory %j with candidates %j: renamed → the directory itself; attributes changed → undefined',
    (rel, dirs) => {
      expect(region('rename', rel, dirs)).toBe(rel);
      expect(region('change', rel, dirs)).toBeUndefined();
    },
  );

  it('a directory named SKILL.md outside every skill → the directory holding it (which covers it)', () => {
    expect(region('rename', 'x/SKILL.md', NONE)).toBe('x');
  });

  it.each([
    ['ab/x', 'change', candidates('a'), undefined],
    ['ab', 'rename', candidates('a'), 'ab'],
    ['a/bc/x.md', 'change', candidates('a/b'), undefined],
    ['a/bc', 'rename', candidates('a/b'), 'a/bc'],
    ['a/b/x.md', 'change', candidates('a/b'), 'a/b'],
    ['a/bc/SKILL.md', 'rename', candidates('a/b'), 'a/bc'],
    ['a', 'rename', candidates('a/b'), 'a'],
    ['a/x.md', 'change', candidates('a/b'), undefined],
    ['a/x.md', 'rename', candidates('a/b'), 'a/x.md'],
    ['aa/x.md', 'change', candidates('a', 'a/a'), undefined],
    ['b/a/x.md', 'change', candidates('a'), undefined],
    ['b/a/x.md', 'rename', candidates('a'), 'b/a/x.md'],
  ] as const)('prefix names: %j (%s) with candidates %j → %j', (rel, kind, dirs, expected) => {
    expect(region(kind, rel, dirs)).toBe(expected);
  });
});

describe('regionOf: invariants over every combination', () => {
  const sets: readonly Dirs[] = [
    NONE,
    NESTED,
    DEEP,
    ROOT_SKILL,
    A_ONLY,
    candidates('a/b'),
    candidates('p/q/r', 'p/q/r/s'),
  ];
  const rels = [
    '',
    'SKILL.md',
    '.skillsignore',
    'a',
    'a/x.md',
    'a/SKILL.md',
    'a/.skillsignore',
    'a/b',
    'a/b/x.md',
    'a/b/SKILL.md',
    'a/b/c',
    'a/b/c/d/x.md',
    'ab',
    'ab/x',
    'ab/SKILL.md',
    'ab/.skillsignore',
    'x',
    'x/y',
    'x/y/z',
    'x/y/z/f',
    'x/y/zz/SKILL.md',
    'p/q/r/s/t.md',
    'p/q/SKILL.md',
    '.git/x',
    'a/.cache/b',
    'a/node_modules/SKILL.md',
    'node_modules/.skillsignore',
  ];
  const inside = (rel: string, dir: string): boolean => dir === '' || rel === dir || rel.startsWith(`${dir}/`);

  it.each(sets.map((dirs) => [dirs] as const))(
    'candidates %j: paths inside skills always rebuild a region that covers them and lies strictly inside no skill',
    (dirs) => {
      const violations: string[] = [];
      for (const rel of rels) {
        for (const kind of KINDS) {
          const got = region(kind, rel, dirs);
          const ignored = rel
            .split('/')
            .some((segment) => (segment.startsWith('.') && segment !== '.skillsignore') || segment === 'node_modules');
          if (got === undefined) {
            // A served path inside a skill is never dropped, nor is a rescan.
            if (kind === 'rescan') violations.push(`rescan ${rel} → undefined`);
            if (!ignored && dirs.some((dir) => inside(rel, dir)))
              violations.push(`${kind} ${rel} → undefined inside a skill`);
            continue;
          }
          if (kind === 'rescan' && got !== '') violations.push(`rescan ${rel} → ${got}: not the whole root`);
          if (ignored && kind !== 'rescan') violations.push(`${kind} ${rel} → ${got}: ignored name rebuilt`);
          // The region contains the event's path (whole segments), or, for a .skillsignore, the directory it governs.
          const governed = rel.endsWith('.skillsignore') ? rel.slice(0, Math.max(0, rel.lastIndexOf('/'))) : rel;
          if (!inside(governed, got)) violations.push(`${kind} ${rel} → ${got}: does not contain the path`);
          // A region never lies strictly inside a skill (the builder's precondition).
          for (const dir of dirs)
            if (got !== dir && inside(got, dir))
              violations.push(`${kind} ${rel} → ${got}: strictly inside skill ${dir}`);
        }
      }
      expect(violations).toEqual([]);
    },
  );

  it('is pure: does not mutate the candidate set and gives the same answer twice', () => {
    const dirs = new Set(['a', 'a/b']);
    const e = event('change', 'a/b/x.md');
    expect(regionOf(e, dirs)).toBe('a');
    expect(regionOf(e, dirs)).toBe('a');
    expect([...dirs]).toEqual(['a', 'a/b']);
    expect(e).toEqual({ rootIndex: 0, kind: 'change', rel: 'a/b/x.md' });
  });
});

describe('regionsOf', () => {
  it.each([
    ['no events', [], () => new Set(NESTED)],
    [
      'only ignored names',
      [
        event('rename', '.git/x'),
        event('change', 'a/.cache/b'),
        event('rename', 'node_modules'),
        event('change', 'a/.SKILL.md.swp'),
      ],
      () => new Set(NESTED),
    ],
    [
      'only content changes outside skills',
      [event('change', 'notes.md'), event('change', 'ab/x'), event('change', 'b/x.md')],
      () => new Set(NESTED),
    ],
    [
      'irrelevant events on several roots',
      [event('change', 'x.md', 0), event('change', '.git/HEAD', 1), event('change', 'q/r.md', 7)],
      () => new Set(NONE),
    ],
  ] as const)('%s → no regions', (_label, events, candidatesOf) => {
    expect(regionsOf(events, candidatesOf)).toEqual([]);
  });

  it.each([
    [
      'several events in one skill',
      [event('change', 'a/x.md'), event('rename', 'a/b/y.md'), event('rename', 'a/b/c/z.md')],
      NESTED,
      r0('a'),
    ],
    ['the same event twice', [event('change', 'a/x.md'), event('change', 'a/x.md')], NESTED, r0('a')],
    ['a region inside another is dropped', [event('change', 'x/y/z/f.md'), event('rename', 'x')], DEEP, r0('x')],
    [
      'inner region arriving after the outer one',
      [event('rename', 'p'), event('rename', 'p/q'), event('rename', 'p/q/SKILL.md')],
      NONE,
      r0('p'),
    ],
    [
      '"" swallows everything',
      [event('change', 'a/x.md'), event('rename', 'new'), event('change', 'SKILL.md'), event('rename', 'q/SKILL.md')],
      NESTED,
      r0(''),
    ],
    [
      '"" from the root vanishing',
      [event('rename', 'a/x.md'), event('rename', 'a'), event('rename', '')],
      NESTED,
      r0(''),
    ],
    ['"" from a rescan', [event('change', 'a/x.md'), event('rescan', ''), event('rename', 'new')], NESTED, r0('')],
    ['"" when the root is a skill', [event('change', 'f.md'), event('change', 'x/g.md')], ROOT_SKILL, r0('')],
    [
      'a .skillsignore below the root',
      [event('change', 'p/q/.skillsignore'), event('rename', 'p/q/r/SKILL.md')],
      NONE,
      r0('p/q'),
    ],
    [
      'prefix-sharing siblings are kept, sorted',
      [
        event('rename', 'b'),
        event('rename', 'ab'),
        event('rename', 'a-b'),
        event('change', 'a/x.md'),
        event('rename', 'a.b'),
        event('rename', 'aa'),
      ],
      A_ONLY,
      r0('a', 'a-b', 'a.b', 'aa', 'ab', 'b'),
    ],
    [
      'a sibling sorting between a region and its child',
      [event('rename', 'a/b'), event('rename', 'a-b'), event('rename', 'a')],
      NONE,
      r0('a', 'a-b'),
    ],
    [
      'deep siblings',
      [event('rename', 'x/y/SKILL.md'), event('rename', 'x/yy'), event('rename', 'x/y/new')],
      DEEP,
      r0('x/y', 'x/yy'),
    ],
    [
      'irrelevant events mixed in',
      [event('rename', '.git/x'), event('change', 'a/x.md'), event('change', 'notes.md')],
      A_ONLY,
      r0('a'),
    ],
    [
      'a file appearing outside skills is walked (and finds nothing)',
      [event('rename', 'notes.md'), event('change', 'a/x.md')],
      A_ONLY,
      r0('a', 'notes.md'),
    ],
  ] as const)('%s', (_label, events, dirs, expected) => {
    expect(regionsOf(events, () => new Set(dirs))).toEqual(expected);
  });

  it('keeps separate roots apart, each judged against its own candidates, sorted by root', () => {
    const perRoot: Record<number, Dirs> = { 0: candidates('a'), 1: NONE, 2: candidates(''), 3: candidates('a') };
    const candidatesOf = vi.fn((rootIndex: number) => new Set(perRoot[rootIndex] ?? NONE));
    const events = [
      event('change', 'a/x.md', 1), // a content change outside skills in root 1
      event('change', 'a/x.md', 0),
      event('change', 'f.md', 2),
      event('rename', 'new', 1),
      event('rename', '', 3),
      event('rename', 'ab/SKILL.md', 0),
      event('change', '.git/x', 4),
    ];
    expect(regionsOf(events, candidatesOf)).toEqual([
      { rootIndex: 0, rel: 'a' },
      { rootIndex: 0, rel: 'ab' },
      { rootIndex: 1, rel: 'new' },
      { rootIndex: 2, rel: '' },
      { rootIndex: 3, rel: '' },
    ]);
    expect(candidatesOf.mock.calls.map(([rootIndex]) => rootIndex)).toEqual([1, 0, 2, 1, 3, 0, 4]);
  });

  it('does not let root 0\'s "" swallow root 1\'s regions', () => {
    const result = regionsOf(
      [event('change', 'SKILL.md', 0), event('change', 'a/x.md', 1), event('rename', 'b', 1)],
      () => new Set(A_ONLY),
    );
    expect(result).toEqual([
      { rootIndex: 0, rel: '' },
      { rootIndex: 1, rel: 'a' },
      { rootIndex: 1, rel: 'b' },
    ]);
  });

  it('a rescan of one root rebuilds only that root', () => {
    const result = regionsOf(
      [event('rescan', '', 1), event('change', 'a/x.md', 0), event('change', 'a/x.md', 1)],
      () => new Set(A_ONLY),
    );
    expect(result).toEqual([
      { rootIndex: 0, rel: 'a' },
      { rootIndex: 1, rel: '' },
    ]);
  });

  it('leaves out a root whose events are all irrelevant', () => {
    const result = regionsOf([event('change', 'notes.md', 0), event('change', 'a/x.md', 1)], () => new Set(A_ONLY));
    expect(result).toEqual([{ rootIndex: 1, rel: 'a' }]);
  });

  it('agrees with regionOf event by event, minus nested and duplicate regions', () => {
    const events = [
      event('change', 'a/b/c/x.md'),
      event('rename', 'new/SKILL.md'),
      event('rename', 'new/refs'),
      event('change', 'new/refs/r.md'),
      event('rename', 'x'),
      event('change', 'notes.md'),
    ];
    const single = events.map((e) => regionOf(e, new Set(NESTED)));
    expect(single).toEqual(['a', 'new', 'new/refs', undefined, 'x', undefined]);
    expect(regionsOf(events, () => new Set(NESTED))).toEqual(r0('a', 'new', 'x'));
  });
});

describe('eventPath: what a directory watch reports → a root-relative path', () => {
  it.each([
    ['', 'a.md', 'a.md'],
    ['s', 'a.md', 's/a.md'],
    ['s/refs', 'deep.md', 's/refs/deep.md'],
    ['s', null, 's'],
    ['', null, ''],
    ['s', '', 's'],
    ['s', 'sub/x.md', 's/sub/x.md'],
    ['s', './x.md', 's/x.md'],
    ['s', 'a//b', 's/a/b'],
    ['s', '/', 's'],
    ['s', '.', 's'],
    ['s', '..', 's'],
    ['s', '../t/x.md', 's'],
    ['s', 'a/../../x', 's'],
    ['s', '...', 's/...'],
    ['s', '.hidden', 's/.hidden'],
    ['', 'café 1.md', 'café 1.md'],
    ['a b', 'c%2Fd', 'a b/c%2Fd'],
  ] as const)('either platform: eventPath(%j, %j) → %j', (dirRel, name, expected) => {
    expect(eventPath(dirRel, name, 'posix')).toBe(expected);
    expect(eventPath(dirRel, name, 'win32')).toBe(expected);
  });

  it.each([
    // Windows reports paths with `\`; POSIX names may hold `\` as an ordinary character (`a\b.md` is one file there).
    ['s', 'sub\\x.md', 's/sub\\x.md', 's/sub/x.md'],
    ['', 'sub\\x.md', 'sub\\x.md', 'sub/x.md'],
    ['s', 'a\\b/c.md', 's/a\\b/c.md', 's/a/b/c.md'],
    ['s', 'a\\\\b', 's/a\\\\b', 's/a/b'],
    ['s', '.\\x.md', 's/.\\x.md', 's/x.md'],
    ['s', '\\', 's/\\', 's'],
    ['s', '..\\x', 's/..\\x', 's'],
    ['s', 'a\\..\\..\\x', 's/a\\..\\..\\x', 's'],
    ['s', '..\\', 's/..\\', 's'],
    // A directory whose own (POSIX) name holds `\` stays one segment: only `name` is split.
    ['g\\h', 'SKILL.md', 'g\\h/SKILL.md', 'g\\h/SKILL.md'],
  ] as const)('eventPath(%j, %j) → %j on POSIX, %j on Windows', (dirRel, name, posix, win32) => {
    expect(eventPath(dirRel, name, 'posix')).toBe(posix);
    expect(eventPath(dirRel, name, 'win32')).toBe(win32);
  });
});

describe('isIgnoredEventName: events the watcher drops before batching', () => {
  it.each([
    // [name, ignored on POSIX, ignored on Windows]
    [null, false, false],
    ['notes.md', false, false],
    ['SKILL.md', false, false],
    ['.skillsignore', false, false],
    ['sub/.skillsignore', false, false],
    ['sub\\.skillsignore', false, false],
    ['.git', true, true],
    ['.x.md.swp', true, true],
    ['node_modules', true, true],
    ['.git/HEAD', true, true],
    ['.git\\HEAD', true, true],
    ['node_modules/pkg/SKILL.md', true, true],
    ['node_modules\\pkg\\SKILL.md', false, true],
    ['sub/.x.tmp-1', true, true],
    ['sub\\.x.tmp-1', false, true],
    ['.git/.skillsignore', true, true],
    ['.skillsignore/x', true, true],
    ['a\\b', false, false],
    ['...', true, true],
  ] as const)('%j → POSIX %j, Windows %j (the same rule as regionOf)', (name, posix, win32) => {
    expect(isIgnoredEventName(name, 'posix')).toBe(posix);
    expect(isIgnoredEventName(name, 'win32')).toBe(win32);
    // What the watcher keeps, regionOf may still leave alone; what it drops, regionOf never rebuilds.
    for (const separators of ['posix', 'win32'] as const) {
      if (name === null || !isIgnoredEventName(name, separators)) continue;
      expect(region('rename', eventPath('s', name, separators), NESTED)).toBeUndefined();
    }
  });
});
