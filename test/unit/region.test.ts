/** Regions, the unit of rebuilding: containment by whole path segments, and the outermost regions of a batch. */
import { describe, expect, it } from 'vitest';

import { outermostRegions, type Region, regionContains } from '../../src/index/region.js';

const regions = (rootIndex: number, ...rels: string[]): Region[] => rels.map((rel) => ({ rootIndex, rel }));

describe('regionContains', () => {
  it.each([
    ['', '', true],
    ['', 'a/b', true],
    ['a', 'a', true],
    ['a', 'a/b', true],
    ['a/b', 'a/b/c/d', true],
    ['a', 'ab', false],
    ['a', 'a-b', false],
    ['a', 'a.b/c', false],
    ['a/b', 'a/bc', false],
    ['a/b', 'a', false],
    ['a', '', false],
    ['b', 'a/b', false],
  ])('regionContains(%j, %j) === %s', (outer, rel, expected) => {
    expect(regionContains(outer, rel)).toBe(expected);
  });
});

describe('outermostRegions', () => {
  it.each([
    ['nothing', [], []],
    ['duplicates collapse', regions(0, 'a', 'a', 'a'), regions(0, 'a')],
    ['an inner region is dropped, in either order', [...regions(0, 'a/b/c'), ...regions(0, 'a')], regions(0, 'a')],
    ['"" takes the whole root', regions(0, 'x', '', 'a/b'), regions(0, '')],
    [
      'prefix-sharing siblings stay, in code-unit order',
      regions(0, 'ab', 'a/b', 'a-b', 'a', 'a.b', 'B'),
      regions(0, 'B', 'a', 'a-b', 'a.b', 'ab'),
    ],
    [
      'roots are kept apart, by root index',
      [...regions(2, 'x'), ...regions(0, ''), ...regions(1, 'a/b'), ...regions(1, 'a'), ...regions(0, 'y')],
      [...regions(0, ''), ...regions(1, 'a'), ...regions(2, 'x')],
    ],
  ] as const)('%s', (_label, input, expected) => {
    const before = JSON.stringify(input);
    expect(outermostRegions(input)).toEqual(expected);
    expect(JSON.stringify(input)).toBe(before);
  });
});
