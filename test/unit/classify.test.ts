import { describe, expect, it, vi } from 'vitest';
import { regionOf, regionsOf, type WatchEvent } from '../../src/watch/classify.js';

type Kind = WatchEvent['kind'];
const KINDS: readonly Kind[] = ['add', 'change', 'unlink', 'addDir', 'unlinkDir'];
const FILE_KINDS: readonly Kind[] = ['add', 'change', 'unlink'];
const DIR_KINDS: readonly Kind[] = ['addDir', 'unlinkDir'];

const event = (kind: Kind, rel: string, rootIndex = 0): WatchEvent => ({ rootIndex, kind, rel });
/** Candidate skill directories, as a list so that test titles show them. */
type Dirs = readonly string[];
const candidates = (...dirs: string[]): Dirs => dirs;
/** `regionOf` for one event of root 0. */
const region = (kind: Kind, rel: string, dirs: Dirs): string | undefined => regionOf(event(kind, rel), new Set(dirs));

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
    ['root appears', 'addDir', NONE],
    ['root vanishes', 'unlinkDir', NONE],
    ['root vanishes, skills inside', 'unlinkDir', NESTED],
    ['root vanishes, root is a skill', 'unlinkDir', ROOT_SKILL],
    ['odd file-kind event for the root', 'change', DEEP],
  ] as const)('%s (rel "") → ""', (_label, kind, dirs) => {
    expect(region(kind, '', dirs)).toBe('');
  });

  it.each(KINDS.flatMap((kind) => [NONE, NESTED, ROOT_SKILL, DEEP].map((dirs) => [kind, dirs] as const)))(
    'root SKILL.md, %s, candidates %j → ""',
    (kind, dirs) => {
      expect(region(kind, 'SKILL.md', dirs)).toBe('');
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
  ])('root file %j is not the manifest: a plain file outside every skill → undefined', (rel, dirs) => {
    expect(region('add', rel, dirs)).toBeUndefined();
    expect(region('change', rel, dirs)).toBeUndefined();
    expect(region('unlink', rel, dirs)).toBeUndefined();
  });
});

describe('regionOf: ignored segments anywhere in the path', () => {
  it.each([
    ['.git', 'addDir', NONE],
    ['.git', 'unlinkDir', ROOT_SKILL],
    ['.git/HEAD', 'change', NONE],
    ['.git/x', 'add', NESTED],
    ['.git/objects/ab/cdef', 'add', ROOT_SKILL],
    ['.git/SKILL.md', 'add', NONE],
    ['node_modules', 'addDir', NONE],
    ['node_modules/a/b', 'add', NONE],
    ['node_modules/a/b', 'add', NESTED],
    ['node_modules/pkg/SKILL.md', 'add', NONE],
    ['node_modules/pkg', 'addDir', ROOT_SKILL],
    ['a/node_modules', 'addDir', NESTED],
    ['a/node_modules/pkg/SKILL.md', 'add', NESTED],
    ['a/b/c/node_modules/x.js', 'change', NESTED],
    ['a/.cache/b', 'add', NESTED],
    ['a/.cache/b', 'add', NONE],
    ['a/.cache', 'unlinkDir', NESTED],
    ['x/.hidden/SKILL.md', 'add', NONE],
    ['x/y/.z/SKILL.md', 'add', DEEP],
    ['x/y/z/.env', 'change', DEEP],
    ['a/.SKILL.md', 'add', NONE],
    ['.SKILL.md', 'add', NONE],
    ['.SKILL.md.swp', 'add', NONE],
    ['.SKILL.md.swp', 'change', ROOT_SKILL],
    ['a/b/.SKILL.md.swp', 'change', NESTED],
    ['a/.guide.md.swp', 'unlink', NESTED],
    ['a/b/c/.guide.md.swx', 'add', NESTED],
    ['x/.DS_Store', 'add', ROOT_SKILL],
    ['.', 'addDir', NONE],
    ['a/..', 'addDir', NESTED],
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
  ])('look-alike %j is not ignored: inside skill → %j', (rel, expected) => {
    expect(region('change', rel, NESTED)).toBe(expected);
  });
});

describe('regionOf: inside a skill → the outermost enclosing skill', () => {
  it.each([
    ['a/x.md', 'change', NESTED, 'a'],
    ['a/SKILL.md', 'change', NESTED, 'a'],
    ['a/SKILL.md', 'unlink', NESTED, 'a'],
    ['a/b/x.md', 'add', NESTED, 'a'],
    ['a/b/SKILL.md', 'change', NESTED, 'a'],
    ['a/b/c/x.md', 'change', NESTED, 'a'],
    ['a/b/c/x.md', 'unlink', NESTED, 'a'],
    ['a/b/c/SKILL.md', 'unlink', NESTED, 'a'],
    ['a/b/c/d/e/f.md', 'add', NESTED, 'a'],
    ['a/b/c/new/SKILL.md', 'add', NESTED, 'a'],
    ['a/b/c/d', 'addDir', NESTED, 'a'],
    ['a/refs', 'addDir', NESTED, 'a'],
    ['a/b/refs', 'unlinkDir', NESTED, 'a'],
    ['x/y/z/f.md', 'change', DEEP, 'x/y/z'],
    ['x/y/z/r/f.md', 'add', DEEP, 'x/y/z'],
    ['x/y/z/SKILL.md', 'change', DEEP, 'x/y/z'],
    ['x/y/z/SKILL.md', 'unlink', DEEP, 'x/y/z'],
    ['x/y/z/new/SKILL.md', 'add', DEEP, 'x/y/z'],
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
  ] as const)('unlinkDir of skill directory %j with candidates %j → %j', (rel, dirs, expected) => {
    expect(region('unlinkDir', rel, dirs)).toBe(expected);
    expect(region('addDir', rel, dirs)).toBe(expected);
  });

  it.each(KINDS.flatMap((kind) => ['f.md', 'x', 'x/f.md', 'x/SKILL.md', 'y/SKILL.md', 'deep/er/x', 'a', 'a/b/c'].map((rel) => [rel, kind] as const)))(
    'root is a skill: %j (%s) → ""',
    (rel, kind) => {
      expect(region(kind, rel, ROOT_SKILL)).toBe('');
      expect(region(kind, rel, candidates(''))).toBe('');
    },
  );
});

describe('regionOf: outside every skill', () => {
  it.each([
    ['new/SKILL.md', 'add', NONE, 'new'],
    ['new/SKILL.md', 'add', NESTED, 'new'],
    ['p/q/r/SKILL.md', 'add', NONE, 'p/q/r'],
    ['x/y/SKILL.md', 'add', DEEP, 'x/y'],
    ['x/SKILL.md', 'add', DEEP, 'x'],
    ['p/q/r/SKILL.md', 'add', candidates('p/q/r/s'), 'p/q/r'],
    ['ab/SKILL.md', 'add', A_ONLY, 'ab'],
    ['b/SKILL.md', 'add', NESTED, 'b'],
    ['b/c/SKILL.md', 'add', NESTED, 'b/c'],
    ['x/SKILL.md', 'change', NONE, 'x'],
    ['x/SKILL.md', 'unlink', NONE, 'x'],
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
  ] as const)('plain file %j with candidates %j → undefined', (rel, dirs) => {
    for (const kind of FILE_KINDS) expect(region(kind, rel, dirs)).toBeUndefined();
  });

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
    ['x/SKILL.md', NONE],
  ] as const)('directory %j with candidates %j → the directory itself', (rel, dirs) => {
    for (const kind of DIR_KINDS) expect(region(kind, rel, dirs)).toBe(rel);
  });

  it.each([
    ['ab/x', 'change', candidates('a'), undefined],
    ['ab', 'addDir', candidates('a'), 'ab'],
    ['a/bc/x.md', 'change', candidates('a/b'), undefined],
    ['a/bc', 'unlinkDir', candidates('a/b'), 'a/bc'],
    ['a/b/x.md', 'change', candidates('a/b'), 'a/b'],
    ['a/bc/SKILL.md', 'add', candidates('a/b'), 'a/bc'],
    ['a', 'unlinkDir', candidates('a/b'), 'a'],
    ['a/x.md', 'change', candidates('a/b'), undefined],
    ['aa/x.md', 'change', candidates('a', 'a/a'), undefined],
    ['b/a/x.md', 'change', candidates('a'), undefined],
  ] as const)('prefix names: %j (%s) with candidates %j → %j', (rel, kind, dirs, expected) => {
    expect(region(kind, rel, dirs)).toBe(expected);
  });
});

describe('regionOf: invariants over every combination', () => {
  const sets: readonly Dirs[] = [NONE, NESTED, DEEP, ROOT_SKILL, A_ONLY, candidates('a/b'), candidates('p/q/r', 'p/q/r/s')];
  const rels = [
    '', 'SKILL.md', 'a', 'a/x.md', 'a/SKILL.md', 'a/b', 'a/b/x.md', 'a/b/SKILL.md', 'a/b/c', 'a/b/c/d/x.md', 'ab', 'ab/x', 'ab/SKILL.md',
    'x', 'x/y', 'x/y/z', 'x/y/z/f', 'x/y/zz/SKILL.md', 'p/q/r/s/t.md', 'p/q/SKILL.md', '.git/x', 'a/.cache/b', 'a/node_modules/SKILL.md',
  ];
  const inside = (rel: string, dir: string): boolean => dir === '' || rel === dir || rel.startsWith(`${dir}/`);

  it.each(sets.map((dirs) => [dirs] as const))('candidates %j: paths inside skills always rebuild a region that covers them and lies strictly inside no skill', (dirs) => {
    const violations: string[] = [];
    for (const rel of rels) {
      for (const kind of KINDS) {
        const got = region(kind, rel, dirs);
        const ignored = rel.split('/').some((segment) => segment.startsWith('.') || segment === 'node_modules');
        if (got === undefined) {
          // A served path inside a skill is never dropped.
          if (!ignored && dirs.some((dir) => inside(rel, dir))) violations.push(`${kind} ${rel} → undefined inside a skill`);
          continue;
        }
        if (ignored) violations.push(`${kind} ${rel} → ${got}: ignored name rebuilt`);
        // The region contains the event's path (whole segments), so every skill containing the path is rebuilt.
        if (!inside(rel, got)) violations.push(`${kind} ${rel} → ${got}: does not contain the path`);
        // A region never lies strictly inside a skill (the builder's precondition).
        for (const dir of dirs) if (got !== dir && inside(got, dir)) violations.push(`${kind} ${rel} → ${got}: strictly inside skill ${dir}`);
      }
    }
    expect(violations).toEqual([]);
  });

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
  const entries = (map: Map<number, string[]>): [number, string[]][] => [...map.entries()];

  it.each([
    ['no events', [], () => new Set(NESTED)],
    ['only ignored names', [event('add', '.git/x'), event('change', 'a/.cache/b'), event('addDir', 'node_modules'), event('change', 'a/.SKILL.md.swp')], () => new Set(NESTED)],
    ['only plain files outside skills', [event('add', 'notes.md'), event('change', 'ab/x'), event('unlink', 'b/x.md')], () => new Set(NESTED)],
    ['irrelevant events on several roots', [event('add', 'x.md', 0), event('change', '.git/HEAD', 1), event('unlink', 'q/r.md', 7)], () => new Set(NONE)],
  ] as const)('%s → empty map', (_label, events, candidatesOf) => {
    const result = regionsOf(events, candidatesOf);
    expect(result).toBeInstanceOf(Map);
    expect(result.size).toBe(0);
  });

  it.each([
    ['several events in one skill', [event('change', 'a/x.md'), event('add', 'a/b/y.md'), event('unlink', 'a/b/c/z.md')], NESTED, [[0, ['a']]]],
    ['the same event twice', [event('change', 'a/x.md'), event('change', 'a/x.md')], NESTED, [[0, ['a']]]],
    ['a region inside another is dropped', [event('change', 'x/y/z/f.md'), event('unlinkDir', 'x')], DEEP, [[0, ['x']]]],
    ['inner region arriving after the outer one', [event('addDir', 'p'), event('addDir', 'p/q'), event('add', 'p/q/SKILL.md')], NONE, [[0, ['p']]]],
    ['"" swallows everything', [event('change', 'a/x.md'), event('addDir', 'new'), event('change', 'SKILL.md'), event('add', 'q/SKILL.md')], NESTED, [[0, ['']]]],
    ['"" from the root vanishing', [event('unlink', 'a/x.md'), event('unlinkDir', 'a'), event('unlinkDir', '')], NESTED, [[0, ['']]]],
    ['"" when the root is a skill', [event('change', 'f.md'), event('change', 'x/g.md')], ROOT_SKILL, [[0, ['']]]],
    ['prefix-sharing siblings are kept, sorted', [event('addDir', 'b'), event('addDir', 'ab'), event('addDir', 'a-b'), event('change', 'a/x.md'), event('addDir', 'a.b'), event('addDir', 'aa')], A_ONLY, [[0, ['a', 'a-b', 'a.b', 'aa', 'ab', 'b']]]],
    ['a sibling sorting between a region and its child', [event('addDir', 'a/b'), event('addDir', 'a-b'), event('addDir', 'a')], NONE, [[0, ['a', 'a-b']]]],
    ['deep siblings', [event('add', 'x/y/SKILL.md'), event('addDir', 'x/yy'), event('addDir', 'x/y/new')], DEEP, [[0, ['x/y', 'x/yy']]]],
    ['irrelevant events mixed in', [event('add', '.git/x'), event('change', 'a/x.md'), event('add', 'notes.md')], A_ONLY, [[0, ['a']]]],
  ] as const)('%s', (_label, events, dirs, expected) => {
    expect(entries(regionsOf(events, () => new Set(dirs)))).toEqual(expected);
  });

  it('keeps separate roots apart, each judged against its own candidates', () => {
    const perRoot: Record<number, Dirs> = { 0: candidates('a'), 1: NONE, 2: candidates(''), 3: candidates('a') };
    const candidatesOf = vi.fn((rootIndex: number) => new Set(perRoot[rootIndex] ?? NONE));
    const events = [
      event('change', 'a/x.md', 1), // plain file outside skills in root 1
      event('change', 'a/x.md', 0),
      event('change', 'f.md', 2),
      event('addDir', 'new', 1),
      event('unlinkDir', '', 3),
      event('add', 'ab/SKILL.md', 0),
      event('change', '.git/x', 4),
    ];
    const result = regionsOf(events, candidatesOf);
    expect(entries(result)).toEqual([
      [0, ['a', 'ab']],
      [2, ['']],
      [1, ['new']],
      [3, ['']],
    ]);
    expect(candidatesOf.mock.calls.map(([rootIndex]) => rootIndex)).toEqual([1, 0, 2, 1, 3, 0, 4]);
  });

  it('does not let root 0\'s "" swallow root 1\'s regions', () => {
    const result = regionsOf([event('change', 'SKILL.md', 0), event('change', 'a/x.md', 1), event('addDir', 'b', 1)], () => new Set(A_ONLY));
    expect(entries(result)).toEqual([
      [0, ['']],
      [1, ['a', 'b']],
    ]);
  });

  it('leaves out a root whose events are all irrelevant (no empty list)', () => {
    const result = regionsOf([event('add', 'notes.md', 0), event('change', 'a/x.md', 1)], () => new Set(A_ONLY));
    expect(entries(result)).toEqual([[1, ['a']]]);
    expect(result.has(0)).toBe(false);
  });

  it('agrees with regionOf event by event, minus nested and duplicate regions', () => {
    const events = [
      event('change', 'a/b/c/x.md'),
      event('add', 'new/SKILL.md'),
      event('addDir', 'new/refs'),
      event('add', 'new/refs/r.md'),
      event('unlinkDir', 'x'),
      event('add', 'notes.md'),
    ];
    const single = events.map((e) => regionOf(e, new Set(NESTED)));
    expect(single).toEqual(['a', 'new', 'new/refs', undefined, 'x', undefined]);
    expect(entries(regionsOf(events, () => new Set(NESTED)))).toEqual([[0, ['a', 'new', 'x']]]);
  });
});
