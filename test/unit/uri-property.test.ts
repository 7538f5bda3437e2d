/**
 * Property tests of `skill://` URI building and parsing (SEP-2640 "URIs").
 *
 * Every name the index can serve must round-trip (`parse(build(segments))` gives the segments back, and the URI is
 * already WHATWG-canonical so a client's URL library cannot respell it); whatever a client sends must never throw and
 * never produce a segment that could climb out of a directory (`.`, `..`, `/`, NUL) if some future code joined it
 * onto a host path. Runs are reproducible: a fixed seed, ~500 runs each.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { buildSkillUri, canonicalSkillUri, MAX_URI_LENGTH, parseSkillUri, SKILL_SCHEME } from '../../src/index/uri.js';

const SEED = 20_260_728;
const RUNS = 500;
const PARAMS = { seed: SEED, numRuns: RUNS } as const;

/** One astral code point: always a UTF-16 surrogate pair. */
const astral = fc.integer({ min: 0x1_00_00, max: 0x10_ff_ff }).map((code) => String.fromCodePoint(code));
/** One UTF-16 code unit, lone surrogates included: what a hostile client may put in a JSON string. */
const codeUnit = fc.integer({ min: 0, max: 0xff_ff }).map((code) => String.fromCharCode(code));
/** Characters that are special somewhere in URI handling, to make collisions with the encoder likely. */
const special = fc.constantFrom(
  '%',
  '.',
  '\\',
  ':',
  '@',
  '?',
  '#',
  '[',
  ']',
  '|',
  '~',
  ' ',
  '+',
  '&',
  '=',
  "'",
  '^',
  '`',
  '{',
  '}',
  '"',
  '<',
  '>',
  '\t',
  '\n',
  '\u00a0',
  '\ufeff',
  '\u200b',
);

/** A file or directory name the walker could report: non-empty, no `/` or NUL, not `.` or `..`, well-formed UTF-16. */
const nameSegment = fc
  .string({
    unit: fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      astral,
      special,
    ),
    minLength: 1,
    maxLength: 12,
  })
  .filter((segment) => !segment.includes('/') && !segment.includes('\0') && segment !== '.' && segment !== '..');

const segmentsArb = fc.array(nameSegment, { minLength: 1, maxLength: 8 });

describe('buildSkillUri → parseSkillUri round trip', () => {
  it('the generator really produces surrogate pairs, specials and multi-segment paths (so the property is not vacuous)', () => {
    const sample = fc.sample(segmentsArb, { seed: SEED, numRuns: RUNS });
    const flat = sample.flat();
    expect(flat.some((segment) => [...segment].some((char) => (char.codePointAt(0) ?? 0) > 0xff_ff))).toBe(true);
    expect(flat.some((segment) => segment.includes('%'))).toBe(true);
    expect(flat.some((segment) => segment.includes('\\'))).toBe(true);
    expect(flat.some((segment) => /^\.+$/u.test(segment) === false && segment.startsWith('.'))).toBe(true);
    expect(sample.some((segments) => segments.length >= 4)).toBe(true);
  });

  it('parse(build(segments)) deep-equals segments, and the URI is WHATWG-canonical', () => {
    fc.assert(
      fc.property(segmentsArb, (segments) => {
        const uri = buildSkillUri(segments);
        expect(uri.startsWith(SKILL_SCHEME)).toBe(true);
        if (uri.length <= MAX_URI_LENGTH) expect(parseSkillUri(uri)).toEqual(segments);
        expect(new URL(uri).href).toBe(uri);
        expect(canonicalSkillUri(uri) ?? uri).toBe(uri);
      }),
      PARAMS,
    );
  });

  it('a URI read back through a URL library (WHATWG URL) still parses to the same segments', () => {
    fc.assert(
      fc.property(segmentsArb, (segments) => {
        const uri = buildSkillUri(segments);
        const respelled = new URL(uri).toString();
        expect(parseSkillUri(respelled)).toEqual(segments);
      }),
      PARAMS,
    );
  });
});

/** Checks the safety invariant of a parse result. */
function expectSafeSegments(segments: readonly string[] | undefined): void {
  if (segments === undefined) return;
  expect(segments.length).toBeGreaterThan(0);
  for (const segment of segments) {
    expect(segment).not.toBe('');
    expect(segment).not.toBe('.');
    expect(segment).not.toBe('..');
    expect(segment.includes('/')).toBe(false);
    expect(segment.includes('\0')).toBe(false);
    expect(segment.isWellFormed()).toBe(true);
  }
}

/** `parse` → `build` → `parse` is a fixed point whenever the first parse succeeds. */
function expectStableParse(input: string): void {
  let segments: string[] | undefined;
  expect(() => {
    segments = parseSkillUri(input);
  }).not.toThrow();
  expectSafeSegments(segments);
  if (segments === undefined) return;
  const rebuilt = buildSkillUri(segments);
  expect(parseSkillUri(rebuilt)).toEqual(segments);
  expect(new URL(rebuilt).href).toBe(rebuilt);
  const canonical = canonicalSkillUri(input);
  expect(canonical).toBe(rebuilt);
  expect(canonicalSkillUri(canonical as string)).toBe(canonical);
}

describe('parseSkillUri on arbitrary input', () => {
  const anyString = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 64 }),
    fc.string({ unit: codeUnit, maxLength: 64 }),
    fc.string({ unit: codeUnit, maxLength: 64 }).map((rest) => SKILL_SCHEME + rest),
    fc
      .string({ unit: fc.oneof(codeUnit, special, fc.constant('/'), fc.constant('%2')), maxLength: 64 })
      .map((rest) => SKILL_SCHEME + rest),
  );

  it('never throws; undefined or segments that rebuild to a URI parsing to the same segments', () => {
    fc.assert(fc.property(anyString, expectStableParse), PARAMS);
  });

  it('accepts every spelling a client may use for a served URI: parse(respelled) === parse(canonical)', () => {
    // Percent-encode any subset of the literal characters of a canonical URI's path: the same resource.
    fc.assert(
      fc.property(segmentsArb, fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), (segments, flips) => {
        const uri = buildSkillUri(segments);
        const rest = uri.slice(SKILL_SCHEME.length);
        let index = 0;
        // Existing escapes stay as they are (in either case); literal characters are escaped or not at random.
        const respelled = rest.replace(/%[\dA-F]{2}|[\w!$&'()*+,.:;=@[\]|~-]/gu, (token) => {
          const flip = flips[index++ % flips.length] === true;
          if (token.startsWith('%')) return flip ? token.toLowerCase() : token;
          return flip ? `%${token.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : token;
        });
        const candidate = SKILL_SCHEME + respelled;
        if (candidate.length > MAX_URI_LENGTH) return;
        expect(parseSkillUri(candidate)).toEqual(segments);
        expect(canonicalSkillUri(candidate)).toBe(uri);
      }),
      PARAMS,
    );
  });
});

describe('hostile URIs never yield a dangerous segment', () => {
  /** Pieces of traversal, encoding and separator tricks, joined at random. */
  const token = fc.constantFrom(
    '..',
    '.',
    '%2e',
    '%2E',
    '%2e%2e',
    '%2E%2E',
    '.%2e',
    '%2e.',
    '%2F',
    '%2f',
    '%5C',
    '%5c',
    '\\',
    '/',
    '//',
    '%00',
    '\0',
    '%c0%ae',
    '%c0%af',
    '%e0%80%ae',
    '%252e',
    '%25',
    '%',
    '%%',
    '%zz',
    '%2',
    '%ED%A0%80',
    '\uff0e',
    '\u2024',
    ';',
    '?',
    '#',
    'a',
    'SKILL.md',
    'secret.txt',
    'etc',
    'passwd',
  );
  const hostile = fc.oneof(
    fc.array(token, { minLength: 1, maxLength: 24 }).map((parts) => SKILL_SCHEME + parts.join('')),
    fc.array(token, { minLength: 1, maxLength: 12 }).map((parts) => `${SKILL_SCHEME}s/${parts.join('/')}`),
    fc.array(token, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('/')),
    fc.constantFrom(
      'file:///etc/passwd',
      'skill:',
      'skill:/',
      'skill://',
      'skill:///',
      'skill:////',
      'SKILL://s/SKILL.md',
      'skill:s/SKILL.md',
      ' skill://s/SKILL.md',
    ),
    // Huge: around the length limit, and far above it.
    fc
      .integer({ min: MAX_URI_LENGTH - 16, max: MAX_URI_LENGTH + 16 })
      .map((length) => (SKILL_SCHEME + 's/' + '../'.repeat(length)).slice(0, length)),
    fc
      .integer({ min: MAX_URI_LENGTH - 16, max: MAX_URI_LENGTH + 16 })
      .map((length) => (SKILL_SCHEME + 's/' + 'a'.repeat(length)).slice(0, length)),
    fc.constant(SKILL_SCHEME + 's/' + '%2e%2e/'.repeat(20_000)),
  );

  it('parse results are undefined or safe, and stable under rebuild', () => {
    fc.assert(fc.property(hostile, expectStableParse), PARAMS);
  });

  it.each([
    'skill://s/..%2F..%2Fsecret.txt',
    'skill://s/%2e%2e/%2e%2e/secret.txt',
    'skill://s/%2E%2E/secret.txt',
    'skill://s/.%2e/secret.txt',
    'skill://s/%2e./secret.txt',
    'skill://s/../../secret.txt',
    'skill://s/./SKILL.md',
    'skill://s/%2e/SKILL.md',
    'skill://s//SKILL.md',
    'skill://s/SKILL.md/',
    'skill:///s/SKILL.md',
    'skill://%2e%2e/secret.txt',
    'skill://s/notes.txt%00',
    'skill://s/notes.txt\u0000',
    'skill://s/%c0%ae%c0%ae/secret.txt',
    'skill://s/%ED%A0%80',
    'file:///etc/passwd',
    `skill://s/${'a'.repeat(MAX_URI_LENGTH)}`,
  ])('rejects %j', (uri) => {
    expect(parseSkillUri(uri)).toBeUndefined();
    expect(canonicalSkillUri(uri)).toBeUndefined();
  });

  it.each([
    // Encoded backslashes are literal name characters on POSIX; they can only match an indexed name. (Raw ones are
    // refused outright: some URL parsers turn them into "/".)
    ['skill://s/..%5C..%5Csecret.txt', ['s', '..\\..\\secret.txt']],
    // A double-encoded dot decodes once, to a literal `%2e` name.
    ['skill://s/%252e%252e/secret.txt', ['s', '%2e%2e', 'secret.txt']],
    // Look-alike dots are ordinary characters.
    ['skill://s/\uff0e\uff0e/secret.txt', ['s', '\uff0e\uff0e', 'secret.txt']],
  ])('parses %j to harmless literal names %j', (uri, expected) => {
    expect(parseSkillUri(uri)).toEqual(expected);
  });
});
