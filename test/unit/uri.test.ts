import { describe, expect, it } from 'vitest';

import {
  buildSkillUri,
  canonicalSkillUri,
  compareUris,
  encodeSegment,
  MAX_URI_LENGTH,
  parseSkillUri,
  SKILL_SCHEME,
} from '../../src/index/uri.js';

describe('encodeSegment', () => {
  it.each([
    ['SKILL.md', 'SKILL.md'],
    ['a b', 'a%20b'],
    ['a#b', 'a%23b'],
    ['a?b', 'a%3Fb'],
    ['100%', '100%25'],
    ['a/b', 'a%2Fb'],
    ['a\\b', 'a%5Cb'],
    ['a+b&c~d', 'a+b&c~d'],
    ["it's (1)|[2]", "it's%20(1)|[2]"],
    ['café', 'caf%C3%A9'],
    ['日本語', '%E6%97%A5%E6%9C%AC%E8%AA%9E'],
    ['😀', '%F0%9F%98%80'],
    ['a"b<c>d', 'a%22b%3Cc%3Ed'],
    ['^`{}', '%5E%60%7B%7D'],
    ['\t\n\0', '%09%0A%00'],
    ['.', '%2E'],
    ['..', '%2E%2E'],
    ['...', '...'],
    ['.hidden', '.hidden'],
  ])('encodeSegment(%j) === %j', (segment, expected) => {
    expect(encodeSegment(segment)).toBe(expected);
  });

  it('throws URIError on a lone surrogate', () => {
    expect(() => encodeSegment('a\uD800')).toThrow(URIError);
  });
});

describe('buildSkillUri', () => {
  it.each([
    [['acme', 'refunds', 'SKILL.md'], 'skill://acme/refunds/SKILL.md'],
    [['pdf'], 'skill://pdf'],
    [['my skill', 'a b.md'], 'skill://my%20skill/a%20b.md'],
    [['a#b', 'c?d'], 'skill://a%23b/c%3Fd'],
    [['50%', '50%'], 'skill://50%25/50%25'],
    // The authority is encoded strictly (encodeURIComponent), the path only where WHATWG needs it.
    [['a+b&c', 'a+b&c'], 'skill://a%2Bb%26c/a+b&c'],
    [['x~y', 'x~y'], 'skill://x~y/x~y'],
    [["o'(|[", "o'(|["], "skill://o'(%7C%5B/o'(|["],
    [['café', '日本語', '😀.png'], 'skill://caf%C3%A9/%E6%97%A5%E6%9C%AC%E8%AA%9E/%F0%9F%98%80.png'],
    [['.', 'x'], 'skill://%2E/x'],
    [['..', 'x'], 'skill://%2E%2E/x'],
    [['a:1', 'b@c'], 'skill://a%3A1/b@c'],
    [['UPPER', 'Case'], 'skill://UPPER/Case'],
  ])('buildSkillUri(%j) === %j', (segments, expected) => {
    expect(buildSkillUri(segments)).toBe(expected);
  });

  it('throws RangeError for no segments', () => {
    expect(() => buildSkillUri([])).toThrow(RangeError);
  });
});

/** Names whose URIs must be canonical and round-trip (every one a name a directory listing can return). */
const TRICKY_NAMES = [
  'a b',
  'a#b',
  'a?b',
  '%',
  '%41',
  'a+b',
  'a&b',
  'a~b',
  'café',
  '日本語',
  '😀',
  "it's",
  '(x)',
  'a|b',
  '[x]',
  'a]b',
  '...',
  '.git',
  'x.',
  'a;b=c',
  'a,b',
  'a:b',
  'a@b',
  '$!*',
  'a"b',
  '<>',
  '^',
  '`',
  '{}',
  'a\\b',
  '\t',
  'ÅÄÖ',
  '\u0301',
  '\uFEFF',
  '\u00A0',
  'a%2Fb',
  '%2E',
  '%2e%2e',
  'SKILL.md',
  '-',
  '_',
];

describe('built URIs are canonical and round-trip', () => {
  it.each(TRICKY_NAMES.map((name) => [name]))('as authority and file name: %j', (name) => {
    for (const segments of [[name], [name, 'SKILL.md'], ['acme', name], ['acme', name, name]]) {
      const uri = buildSkillUri(segments);
      expect(new URL(uri).href).toBe(uri);
      expect(parseSkillUri(uri)).toEqual(segments);
      expect(canonicalSkillUri(uri)).toBe(uri);
    }
  });

  it.each([['.'], ['..']])('%j as the authority stays canonical but is rejected on parse', (name) => {
    const uri = buildSkillUri([name, 'x']);
    expect(new URL(uri).href).toBe(uri);
    expect(parseSkillUri(uri)).toBeUndefined();
  });

  it.each([
    [['a', '.'], 'skill://a/%2E'],
    [['a', '..', 'b'], 'skill://a/%2E%2E/b'],
  ])('%j as a path segment is encoded as dots and is never parsed back', (segments, uri) => {
    // WHATWG treats %2E / %2E%2E path segments as dot segments, so no spelling of these names survives a URL
    // library; parseSkillUri therefore rejects them (and such names never come out of a directory listing).
    expect(buildSkillUri(segments)).toBe(uri);
    expect(parseSkillUri(uri)).toBeUndefined();
  });
});

describe('parseSkillUri / canonicalSkillUri: alternative spellings', () => {
  it.each([
    ['skill://a/%7E', 'skill://a/~', ['a', '~']],
    ['skill://a/%7e', 'skill://a/~', ['a', '~']],
    ['skill://a/%26', 'skill://a/&', ['a', '&']],
    ['skill://a~/x', 'skill://a~/x', ['a~', 'x']],
    ['skill://a%7E/x', 'skill://a~/x', ['a~', 'x']],
    ['skill://a&b/x', 'skill://a%26b/x', ['a&b', 'x']],
    ['skill://a%26b/x', 'skill://a%26b/x', ['a&b', 'x']],
    ['skill://caf%c3%a9/caf%c3%a9', 'skill://caf%C3%A9/caf%C3%A9', ['café', 'café']],
    ['skill://café/café', 'skill://caf%C3%A9/caf%C3%A9', ['café', 'café']],
    ['skill://a/b%20c', 'skill://a/b%20c', ['a', 'b c']],
    ['skill://a/%41%42', 'skill://a/AB', ['a', 'AB']],
    ['skill://a/%5b%5D', 'skill://a/[]', ['a', '[]']],
    ['skill://a/%2e%2e%2e', 'skill://a/...', ['a', '...']],
    ['skill://a/%2ex', 'skill://a/.x', ['a', '.x']],
    ['skill://%41/SKILL.md', 'skill://A/SKILL.md', ['A', 'SKILL.md']],
    ['skill://a:80/x', 'skill://a%3A80/x', ['a:80', 'x']],
    ['skill://u@h/x', 'skill://u%40h/x', ['u@h', 'x']],
  ])('%j → %j', (input, canonical, segments) => {
    expect(parseSkillUri(input)).toEqual(segments);
    expect(canonicalSkillUri(input)).toBe(canonical);
    expect(canonicalSkillUri(canonical)).toBe(canonical);
  });
});

describe('parseSkillUri rejects', () => {
  const longest = `${SKILL_SCHEME}a/${'x'.repeat(MAX_URI_LENGTH - SKILL_SCHEME.length - 2)}`;
  it.each([
    ['another scheme: file', 'file:///etc/passwd'],
    ['another scheme: http', 'http://x'],
    ['upper-case scheme', 'SKILL://a/b'],
    ['scheme alone', 'skill://'],
    ['scheme without slashes', 'skill:a/b'],
    ['empty string', ''],
    ['query', 'skill://a/b?x=1'],
    ['empty query', 'skill://a/b?'],
    ['fragment', 'skill://a/b#top'],
    ['empty authority', 'skill:///a'],
    ['empty segment', 'skill://a//b'],
    ['trailing slash', 'skill://a/b/'],
    ['authority then slash', 'skill://a/'],
    ['literal dot', 'skill://a/./b'],
    ['literal dot-dot', 'skill://a/../b'],
    ['dot-dot authority', 'skill://../b'],
    ['encoded dot-dot lower', 'skill://a/%2e%2e/b'],
    ['encoded dot-dot upper', 'skill://a/%2E%2E'],
    ['encoded dot-dot mixed', 'skill://a/.%2E'],
    ['encoded dot', 'skill://a/%2E'],
    ['encoded dot authority', 'skill://%2e/b'],
    ['encoded slash', 'skill://a/b%2Fc'],
    ['encoded slash lower', 'skill://a%2f..%2fetc/x'],
    ['encoded NUL', 'skill://a/b%00'],
    ['malformed escape %zz', 'skill://a/%zz'],
    ['truncated escape', 'skill://a/b%4'],
    ['lone percent', 'skill://a/%'],
    ['invalid UTF-8 %E9 alone', 'skill://a/caf%E9'],
    ['encoded lone surrogate', 'skill://a/%ED%A0%80'],
    ['overlong UTF-8 slash', 'skill://a/%C0%AF'],
    ['one over MAX_URI_LENGTH', `${longest}x`],
    ['a raw space (RFC 3986: never unescaped)', 'skill://a/b c'],
    ['a raw tab', 'skill://a/b\tc'],
    ['a raw backslash', 'skill://a/b\\c'],
  ])('%s: %j', (_label, uri) => {
    expect(parseSkillUri(uri)).toBeUndefined();
    expect(canonicalSkillUri(uri)).toBeUndefined();
  });

  it.each([[42], [null], [undefined], [{}], [['skill://a']], [new String('skill://a/b')]])(
    'non-string input %j',
    (value) => {
      expect(parseSkillUri(value as unknown as string)).toBeUndefined();
      expect(canonicalSkillUri(value as unknown as string)).toBeUndefined();
    },
  );

  it('accepts a URI of exactly MAX_URI_LENGTH', () => {
    expect(longest.length).toBe(MAX_URI_LENGTH);
    expect(canonicalSkillUri(longest)).toBe(longest);
  });

  // Regression: a raw lone surrogate (which decodeURIComponent leaves alone) used to reach encodeURIComponent
  // and throw a URIError (an internal error) instead of "not a skill URI" (-32602).
  it.each([['skill://a/b\uD800'], ['skill://\uDC00/x']])('a raw lone surrogate is rejected, not thrown: %j', (uri) => {
    expect(canonicalSkillUri(uri)).toBeUndefined();
  });
});

describe('compareUris', () => {
  it.each([
    ['skill://a', 'skill://a', 0],
    ['skill://a', 'skill://b', -1],
    ['skill://b', 'skill://a', 1],
    ['skill://a', 'skill://a/SKILL.md', -1],
    ['skill://A', 'skill://a', -1],
    ['skill://a/%C3%A9', 'skill://a/B', -1],
    ['skill://a/~', 'skill://a/z', 1],
    ['skill://a-b/x', 'skill://a/x', -1],
    ['skill://a/\uFFFF', 'skill://a/\u{1F600}', 1],
  ])('compareUris(%j, %j) === %i', (a, b, expected) => {
    expect(compareUris(a, b)).toBe(expected);
    expect(compareUris(b, a)).toBe(-expected || 0);
  });
});

describe('property: pseudo-random names (fixed-seed LCG)', () => {
  const ALPHABET = [
    'a',
    'Z',
    '0',
    '-',
    '_',
    '.',
    ' ',
    '#',
    '?',
    '%',
    '+',
    '&',
    '~',
    "'",
    '(',
    ')',
    '|',
    '[',
    ']',
    '@',
    ':',
    ';',
    '=',
    ',',
    '!',
    '$',
    '*',
    '"',
    '<',
    '>',
    '^',
    '`',
    '{',
    '}',
    '\\',
    '\t',
    'é',
    'ß',
    '日',
    '語',
    '😀',
    '\u{10FFFF}',
    '\uFEFF',
    '\u0000',
  ];
  let state = 0x2640;
  const next = (bound: number): number => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % bound;
  };
  const randomName = (): string => {
    let name = '';
    const length = 1 + next(8);
    for (let index = 0; index < length; index++) name += ALPHABET[next(ALPHABET.length)];
    return name;
  };
  const spellLoosely = (segment: string): string =>
    [...new TextEncoder().encode(segment)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

  it('round-trips 400 random segment lists in canonical form, and every spelling canonicalizes to them', () => {
    let checked = 0;
    for (let run = 0; run < 400; run++) {
      const segments = Array.from({ length: 1 + next(4) }, randomName);
      const usable = segments.every((segment) => segment !== '.' && segment !== '..' && !segment.includes('\0'));
      const uri = buildSkillUri(segments);
      if (!usable) {
        expect(parseSkillUri(uri)).toBeUndefined();
        continue;
      }
      checked++;
      expect(new URL(uri).href).toBe(uri);
      expect(parseSkillUri(uri)).toEqual(segments);
      expect(canonicalSkillUri(uri)).toBe(uri);
      expect(canonicalSkillUri(SKILL_SCHEME + segments.map(spellLoosely).join('/'))).toBe(uri);
    }
    expect(checked).toBeGreaterThan(300);
  });
});
