/**
 * `readFrontmatter` must give exactly what the SDK's `skillEntry()` gives (the reference hosts verify with): the same
 * frontmatter, key order included (the entry JSON is serialized from it), or the same problem messages. The plain
 * reader (`readPlainFrontmatter`) is a fast path for the common shape; anything it takes must be read exactly as
 * `skillEntry()` reads it, and anything it cannot read must be handed over.
 *
 * - A property test over generated frontmatter, plain shape and not (block scalars with every chomping indicator and
 *   blank lines, quoted strings with `''` escapes and backslashes, plain strings holding `#`, `:`, tabs and Unicode
 *   spaces, numbers, booleans, nulls, metadata maps, comments, duplicate keys, BOM, CRLF). Seeded, a few hundred runs.
 * - Example rows: inputs where a hand-written reader easily differs from the SDK (Unicode spaces, typed keys, …).
 * - Every `SKILL.md` of the shared corpus, of `sample-skills/` and of `test/fixtures/`.
 */
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { BLANK_DESCRIPTION, readFrontmatter, readPlainFrontmatter, splitSkillMd } from '../../src/index/frontmatter.js';
import { FIXTURES_DIR, SAMPLE_SKILLS_DIR } from '../helpers/tree.js';

const SEED = 20_261_201;
const RUNS = 500;
const PARAMS = { seed: SEED, numRuns: RUNS } as const;

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CORPUS = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills', 'skills');

/** What the SDK says about one `SKILL.md`: its frontmatter, or its problem messages. */
type Verdict = { readonly frontmatter: Record<string, unknown> } | { readonly problems: readonly string[] };

/**
 * The reference: the SDK's `skillEntry()` on the `SKILL.md` alone, plus the one rule the server adds (a description of
 * whitespace only is refused: `description-blank`).
 */
async function reference(segments: readonly string[], bytes: Uint8Array): Promise<Verdict> {
  try {
    const entry = await skillEntry(segments.join('/'), { 'SKILL.md': bytes });
    if (/^[\s\u0085]*$/u.test(entry.frontmatter.description)) return { problems: [BLANK_DESCRIPTION] };
    return { frontmatter: entry.frontmatter };
  } catch (error) {
    if (!SkillCatalogError.isInstance(error)) throw error;
    return { problems: error.problems.map((problem) => problem.message) };
  }
}

/** What `readFrontmatter` says, in the same shape. */
async function ours(
  segments: readonly string[],
  bytes: Uint8Array,
): Promise<Verdict & { name?: string; description?: string }> {
  const read = await readFrontmatter(segments, bytes);
  // The SDK's words, without what `check` adds to them (a measured length, the offending metadata key).
  const sdkWords = (message: string): string => message.replace(/: (?:it has \d+|"[^"]*" is [a-z ]+)$/u, '');
  if ('problems' in read) return { problems: read.problems.map((problem) => sdkWords(problem.message)) };
  return { frontmatter: read.frontmatter, name: read.name, description: read.description };
}

/** Every key path of a JSON value in order: equal values with keys in another order give another list. */
function keyOrder(value: unknown, at = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [`${at}/${key}`, ...keyOrder(inner, `${at}/${key}`)]);
}

/** Whether the plain reader takes this file (or hands it to `skillEntry()`). */
function plainMapping(bytes: Uint8Array): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  const split = splitSkillMd(text);
  return split === undefined ? undefined : readPlainFrontmatter(split.yaml);
}

/** Skill-path segments the plain reader reads itself (mirrors `frontmatter.ts`; others always go to the SDK). */
const PLAIN_SEGMENT = /^[\w.~-]+$/u;

/**
 * Checks one `SKILL.md` against the reference.
 *
 * @returns whether the plain reader read it and the skill is valid, i.e. `skillEntry()` was not needed.
 */
async function expectSameAsSdk(segments: readonly string[], bytes: Uint8Array): Promise<boolean> {
  const expected = await reference(segments, bytes);
  const actual = await ours(segments, bytes);
  const plain = plainMapping(bytes);
  if ('problems' in expected) {
    expect(actual).toStrictEqual(expected);
    // The plain reader may take YAML that breaks a rule (skillEntry() then reports it), never YAML the SDK cannot read.
    if (plain !== undefined)
      expect(expected.problems.filter((message) => message.startsWith('SKILL.md frontmatter: '))).toEqual([]);
    return false;
  }
  expect(actual).toStrictEqual({
    ...expected,
    name: expected.frontmatter['name'],
    description: expected.frontmatter['description'],
  });
  expect(keyOrder('frontmatter' in actual ? actual.frontmatter : undefined)).toEqual(keyOrder(expected.frontmatter));
  if (plain !== undefined) {
    expect(plain).toStrictEqual(expected.frontmatter);
    expect(keyOrder(plain)).toEqual(keyOrder(expected.frontmatter));
  }
  return plain !== undefined && segments.every((segment) => PLAIN_SEGMENT.test(segment));
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

// ---------------------------------------------------------------------------------------------------------------------
// Generators. A document is a list of lines between `---` lines; values come in every shape the SDK reads (and a few
// it refuses), mixed so that about half the documents keep to the plain shape and the rest do not.

const SKILL_NAMES = ['s', 'my-skill', 'pdf2', 'a-b-c'] as const;

/** Skill-path segments: the skill name last, sometimes under grouping folders, rarely one the plain reader leaves. */
const segmentsArb = fc
  .tuple(
    fc.constantFrom(...SKILL_NAMES),
    fc.oneof(
      { arbitrary: fc.constant([] as string[]), weight: 6 },
      { arbitrary: fc.constant(['acme']), weight: 2 },
      { arbitrary: fc.constant(['acme', 'billing']), weight: 1 },
      { arbitrary: fc.constant(['café']), weight: 1 },
    ),
  )
  .map(([name, groups]) => [...groups, name]);

const WORDS = [
  'Does',
  'things',
  'a',
  'B',
  'x1',
  'café',
  '日本語',
  'emoji😀',
  'use-when',
  'foo_bar',
  'v1.2',
  'http://x.y/z',
  'a#b',
  'C++',
  'x:y',
  '50%',
  'yes',
  'on',
  '2024-01-01',
  'inf',
  '"q"',
  "it's",
  'a\\b',
  '~',
];
const word = fc.constantFrom(...WORDS);
/** What goes between words of a plain value: mostly spaces; sometimes what makes YAML read it otherwise. */
const gap = fc.oneof(
  { arbitrary: fc.constant(' '), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      ': ',
      ' #',
      ' # comment',
      '\t',
      ':',
      '#',
      ', ',
      ' - ',
      '  ',
      '\u00a0',
      '\u3000',
      '\u2028',
    ),
    weight: 4,
  },
);
/** A plain value's first character, when it is special. */
const lead = fc.oneof(
  { arbitrary: fc.constant(''), weight: 14 },
  {
    arbitrary: fc.constantFrom(
      '-',
      '- ',
      '?',
      '? ',
      ':',
      '#',
      '&',
      '*',
      '!',
      '%',
      '@',
      '`',
      ',',
      '[',
      ']',
      '{',
      '}',
      '|',
      '>',
      '+',
      '.',
      '~',
      '\u00a0',
      '\ufeff',
    ),
    weight: 3,
  },
);
/** What may follow a value on its line. */
const tail = fc.oneof(
  { arbitrary: fc.constant(''), weight: 14 },
  {
    arbitrary: fc.constantFrom(' ', '  ', '\t', ':', ' # trailing comment', ' #', '\u00a0', '\u2003', '\r', '\v', ' x'),
    weight: 4,
  },
);

const plainText = fc
  .tuple(word, fc.array(fc.tuple(gap, word), { maxLength: 5 }))
  .map(([first, rest]) => first + rest.map(([between, next]) => between + next).join(''));

/** A plain scalar, possibly typed or broken by its first or last character. */
const plainScalar = fc.tuple(lead, plainText, tail).map(([before, text, after]) => before + text + after);

/** Scalars YAML 1.2 core types (and look-alikes it does not). */
const typedScalar = fc.constantFrom(
  '12',
  '012',
  '-3',
  '+4',
  '1.5',
  '.5',
  '1e3',
  '1E-2',
  '0o17',
  '0o8',
  '0x1F',
  '0x1g',
  '.inf',
  '-.Inf',
  '.nan',
  'NaN',
  'true',
  'True',
  'TRUE',
  'tRue',
  'false',
  'FALSE',
  'null',
  'Null',
  'NULL',
  '~',
  'yes',
  'No',
  'off',
  '1:30',
  '1_000',
  '0b101',
  '2024-01-01',
  '12 # twelve',
  '1e400',
);

const quotedChar = fc.constantFrom(
  'a',
  'B',
  ' ',
  ' ',
  '#',
  ' #',
  ': ',
  ':',
  "'",
  '"',
  '\\',
  '\\n',
  '\\"',
  '\\t',
  '\\u00e9',
  '\\x41',
  '\\q',
  'é',
  '😀',
  '\t',
  '\u00a0',
);
const quotedBody = fc.array(quotedChar, { minLength: 0, maxLength: 8 }).map((chars) => chars.join(''));

/** A single-quoted scalar: `''` escapes (sometimes a lone `'`), sometimes unclosed or followed by text. */
const singleQuoted = fc
  .tuple(
    quotedBody,
    fc.oneof({ arbitrary: fc.constant(true), weight: 5 }, { arbitrary: fc.constant(false), weight: 1 }),
    fc.oneof({ arbitrary: fc.constant("'"), weight: 9 }, { arbitrary: fc.constant(''), weight: 1 }),
    tail,
  )
  .map(([body, escape, close, after]) => `'${escape ? body.replaceAll("'", "''") : body}${close}${after}`);

/** A double-quoted scalar, with or without backslash escapes (valid and not). */
const doubleQuoted = fc
  .tuple(
    quotedBody,
    fc.boolean(),
    fc.oneof({ arbitrary: fc.constant('"'), weight: 9 }, { arbitrary: fc.constant(''), weight: 1 }),
    tail,
  )
  .map(([body, escapeQuotes, close, after]) => `"${escapeQuotes ? body.replaceAll('"', '\\"') : body}${close}${after}`);

/** One line of a block scalar's content, before indentation is applied. */
type BlockLine =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'deeper'; readonly text: string; readonly extra: number }
  | { readonly kind: 'blank' }
  | { readonly kind: 'spaces'; readonly count: number }
  | { readonly kind: 'tab'; readonly text: string }
  | { readonly kind: 'shallower'; readonly text: string };

const blockText = fc.oneof(
  plainText,
  fc.constantFrom('# not a comment', '- item', 'key: value', '  ', "'quoted'", '"dq"', '---x', 'end.'),
);
const blockLine: fc.Arbitrary<BlockLine> = fc.oneof(
  { arbitrary: blockText.map((text) => ({ kind: 'text', text }) as const), weight: 10 },
  {
    arbitrary: fc
      .tuple(blockText, fc.integer({ min: 1, max: 3 }))
      .map(([text, extra]) => ({ kind: 'deeper', text, extra }) as const),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: 'blank' } as const), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 6 }).map((count) => ({ kind: 'spaces', count }) as const), weight: 2 },
  { arbitrary: blockText.map((text) => ({ kind: 'tab', text }) as const), weight: 1 },
  { arbitrary: blockText.map((text) => ({ kind: 'shallower', text }) as const), weight: 1 },
);

/**
 * A block scalar: header (every style and chomping, sometimes with a comment or an indentation indicator) and lines.
 */
const blockScalar = fc
  .record({
    style: fc.constantFrom('|', '>'),
    chomp: fc.constantFrom('', '-', '+'),
    extra: fc.oneof(
      { arbitrary: fc.constant(''), weight: 8 },
      { arbitrary: fc.constantFrom(' # header comment', '2', ' ', '\t', '\u00a0'), weight: 1 },
    ),
    indent: fc.integer({ min: 1, max: 4 }),
    leading: fc.oneof(
      { arbitrary: fc.constant([] as BlockLine[]), weight: 6 },
      {
        arbitrary: fc.array(
          fc.oneof(
            fc.constant({ kind: 'blank' } as const),
            fc.integer({ min: 1, max: 6 }).map((count) => ({ kind: 'spaces', count }) as const),
          ),
          { minLength: 1, maxLength: 2 },
        ),
        weight: 1,
      },
    ),
    first: blockText,
    lines: fc.array(blockLine, { maxLength: 6 }),
    trailing: fc.array(
      fc.oneof(
        fc.constant({ kind: 'blank' } as const),
        fc.integer({ min: 1, max: 6 }).map((count) => ({ kind: 'spaces', count }) as const),
      ),
      { maxLength: 3 },
    ),
  })
  .map(({ style, chomp, extra, indent, leading, first, lines, trailing }) => {
    const pad = ' '.repeat(indent);
    const render = (line: BlockLine): string => {
      switch (line.kind) {
        case 'text':
          return pad + line.text;
        case 'deeper':
          return pad + ' '.repeat(line.extra) + line.text;
        case 'blank':
          return '';
        case 'spaces':
          return ' '.repeat(line.count);
        case 'tab':
          return `${pad}\t${line.text}`;
        case 'shallower':
          return ' '.repeat(indent - 1) + line.text;
      }
    };
    return {
      header: style + chomp + extra,
      lines: [...leading, { kind: 'text', text: first } as const, ...lines, ...trailing].map(render),
    };
  });

const flowScalar = fc.constantFrom(
  '[a, b]',
  '[]',
  '{}',
  '{k: v}',
  '[Read, "Bash(git:*)"]',
  '[unclosed',
  '{a: [1, 2]}',
  '[a, b] # c',
  '[a]x',
);

/** A value after `key:` on the same line, with the lines that continue it. */
interface Value {
  readonly rest: string;
  readonly more: readonly string[];
}
const oneLine = (rest: string): Value => ({ rest, more: [] });

/** One-line values of every shape. */
const lineValue: fc.Arbitrary<Value> = fc.oneof(
  { arbitrary: plainScalar.map(oneLine), weight: 8 },
  { arbitrary: typedScalar.map(oneLine), weight: 2 },
  { arbitrary: singleQuoted.map(oneLine), weight: 3 },
  { arbitrary: doubleQuoted.map(oneLine), weight: 3 },
  { arbitrary: flowScalar.map(oneLine), weight: 1 },
  { arbitrary: fc.constantFrom('', ' ', '# only a comment').map(oneLine), weight: 1 },
);

/** Any value: one line, a block scalar, a plain value continued on more lines, or a nested collection. */
const anyValue: fc.Arbitrary<Value> = fc.oneof(
  { arbitrary: lineValue, weight: 10 },
  { arbitrary: blockScalar.map(({ header, lines }) => ({ rest: header, more: lines })), weight: 5 },
  {
    arbitrary: fc
      .tuple(
        plainText,
        fc.array(fc.tuple(fc.constantFrom('  ', ' ', '    ', '', '\t'), plainText), { minLength: 1, maxLength: 2 }),
      )
      .map(([first, rest]) => ({ rest: first, more: rest.map(([pad, text]) => (pad === '' ? '' : pad + text)) })),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(
      { rest: '', more: ['  - a', '  - b'] },
      { rest: '', more: ['- a'] },
      { rest: '', more: ['  k: v', '  j: w'] },
      { rest: '', more: ['  nested:', '    deep: x'] },
    ),
    weight: 1,
  },
);

const EXTRA_KEYS = [
  'license',
  'compatibility',
  'allowed-tools',
  'argument-hint',
  'user-invocable',
  'version',
  'x_custom',
  'model',
  'Key2',
  'true',
  'Null',
  'FALSE',
  '__proto__',
  'k e y',
  '"quoted key"',
  "'single key'",
  '1',
  'a:b',
  '-dash',
];
const METADATA_KEYS = [
  'author',
  'version',
  'team',
  'x-y',
  'k',
  'true',
  'null',
  'a b',
  '"quoted"',
  '__proto__',
  'author',
];

/** A `metadata:` block: one map of one-line values, mostly consistently indented. */
const metadataBlock = fc
  .record({
    header: fc.oneof(
      { arbitrary: fc.constant(''), weight: 8 },
      { arbitrary: fc.constantFrom(' # the map', ' ', '\u00a0', 'x', "'m'"), weight: 1 },
    ),
    indent: fc.integer({ min: 1, max: 4 }),
    entries: fc.array(
      fc.record({
        key: fc.oneof(
          { arbitrary: fc.constantFrom('author', 'version', 'team', 'x-y', 'k'), weight: 8 },
          { arbitrary: fc.constantFrom(...METADATA_KEYS), weight: 1 },
        ),
        value: fc.oneof(
          { arbitrary: plainText, weight: 6 },
          { arbitrary: lineValue.map((value) => value.rest), weight: 3 },
        ),
        skew: fc.oneof(
          { arbitrary: fc.constant(''), weight: 12 },
          { arbitrary: fc.constantFrom(' ', '\t'), weight: 1 },
        ),
      }),
      { minLength: 0, maxLength: 4 },
    ),
  })
  .map(({ header, indent, entries }) => ({
    rest: header,
    more: entries.map(({ key, value, skew }) => `${skew}${' '.repeat(indent)}${key}: ${value}`),
  }));

/** Lines that may sit between keys. */
const filler = fc.constantFrom('# a comment', '#', '  # indented comment', '', '   ', '\t');

/** A field: a key, its value and its continuation lines, rendered. */
const field = (key: string, value: Value): string[] => [
  value.rest === '' ? `${key}:` : `${key}: ${value.rest}`,
  ...value.more,
];

/** The `name` field's value for a skill named `name`. */
const nameValue = (name: string): fc.Arbitrary<Value> =>
  fc.oneof(
    { arbitrary: fc.constant(oneLine(name)), weight: 12 },
    {
      arbitrary: fc.constantFrom(
        oneLine(`'${name}'`),
        oneLine(`"${name}"`),
        oneLine(`${name} # the name`),
        { rest: '|-', more: [`  ${name}`] },
        oneLine(`${name}\t`),
      ),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom(
        oneLine('other'),
        oneLine('My_Skill'),
        oneLine(''),
        oneLine('a--b'),
        oneLine('x'.repeat(65)),
        oneLine('12'),
      ),
      weight: 1,
    },
  );

/** Description values: mostly plain text, sometimes any value at all, or one over 1024 characters. */
const descriptionValue: fc.Arbitrary<Value> = fc.oneof(
  { arbitrary: plainText.map(oneLine), weight: 6 },
  { arbitrary: anyValue, weight: 6 },
  {
    arbitrary: fc.constantFrom(
      oneLine('x'.repeat(1024)),
      oneLine('x'.repeat(1025)),
      oneLine('😀'.repeat(1024)),
      oneLine('😀'.repeat(1025)),
      oneLine("''"),
    ),
    weight: 1,
  },
);

interface Doc {
  readonly segments: readonly string[];
  readonly markdown: string;
}

/** A wild `SKILL.md`: frontmatter fields in any order, fillers, duplicates, BOM, CRLF, body. */
const wildDocArb: fc.Arbitrary<Doc> = segmentsArb.chain((segments) =>
  fc
    .record({
      name: nameValue(segments.at(-1) as string),
      description: descriptionValue,
      extras: fc.array(
        fc.tuple(
          fc.oneof(
            {
              arbitrary: fc.constantFrom('license', 'compatibility', 'allowed-tools', 'version', 'x_custom'),
              weight: 4,
            },
            { arbitrary: fc.constantFrom(...EXTRA_KEYS), weight: 1 },
          ),
          anyValue,
        ),
        { maxLength: 3 },
      ),
      metadata: fc.option(metadataBlock, { freq: 3 }),
      order: fc.integer({ min: 0, max: 5 }),
      fillers: fc.oneof(
        { arbitrary: fc.constant([] as [number, string][]), weight: 3 },
        { arbitrary: fc.array(fc.tuple(fc.nat(8), filler), { minLength: 1, maxLength: 2 }), weight: 1 },
      ),
      duplicate: fc.oneof({ arbitrary: fc.constant(false), weight: 12 }, { arbitrary: fc.constant(true), weight: 1 }),
      missing: fc.oneof(
        { arbitrary: fc.constant('none'), weight: 20 },
        { arbitrary: fc.constantFrom('name', 'description'), weight: 1 },
      ),
      bom: fc.oneof(
        { arbitrary: fc.constant(''), weight: 8 },
        { arbitrary: fc.constantFrom('\ufeff', '\ufeff\ufeff'), weight: 1 },
      ),
      crlf: fc.oneof({ arbitrary: fc.constant(false), weight: 5 }, { arbitrary: fc.constant(true), weight: 1 }),
      open: fc.oneof(
        { arbitrary: fc.constant('---'), weight: 30 },
        { arbitrary: fc.constantFrom('--- ', '----', ''), weight: 1 },
      ),
      close: fc.oneof(
        { arbitrary: fc.constant('---'), weight: 20 },
        { arbitrary: fc.constantFrom('--- ', '---\t', '...', ''), weight: 1 },
      ),
      body: fc.constantFrom(
        '',
        '\n# Title\n\nBody text.\n',
        '# Only heading\n',
        'No final newline',
        '\n```\n# not a heading\n```\n## Real heading ##\n',
      ),
    })
    .map(
      ({ name, description, extras, metadata, order, fillers, duplicate, missing, bom, crlf, open, close, body }) => {
        const fields: string[][] = [];
        if (missing !== 'name') fields.push(field('name', name));
        if (missing !== 'description') fields.push(field('description', description));
        for (const [key, value] of extras) fields.push(field(key, value));
        if (metadata !== null) fields.push(field('metadata', metadata));
        // Rotate so that name and description are not always first.
        const rotated = [
          ...fields.slice(order % Math.max(fields.length, 1)),
          ...fields.slice(0, order % Math.max(fields.length, 1)),
        ];
        if (duplicate && rotated.length > 0) rotated.push(rotated[order % rotated.length] as string[]);
        const lines = rotated.flat();
        for (const [at, text] of fillers) lines.splice(Math.min(at, lines.length), 0, text);
        let markdown = `${bom}${open}\n${lines.join('\n')}\n${close}\n${body}`;
        if (crlf) markdown = markdown.replaceAll('\n', '\r\n');
        return { segments, markdown };
      },
    ),
);

/** Tidy values: the plain shape as most skills write it (what the plain reader must take, and read as the SDK does). */
const tidyText = fc
  .tuple(fc.constantFrom('Does', 'Use', 'a', 'B', 'café', '日本語', 'x1', 'v1.2'), fc.array(word, { maxLength: 6 }))
  .map(([first, rest]) => [first, ...rest].join(' '));
const tidyQuotedBody = fc
  .array(fc.constantFrom('a', 'B', ' ', '#', ' #', ': ', ':', "'", 'é', '😀', 'x y', '-'), { maxLength: 8 })
  .map((chars) => chars.join(''));
const tidyQuoted = fc.oneof(
  tidyQuotedBody.map((body) => `'${body.replaceAll("'", "''")}'`),
  tidyQuotedBody.map((body) => `"${body}"`),
);
const tidyBlock = fc
  .record({
    style: fc.constantFrom('|', '>'),
    chomp: fc.constantFrom('', '-', '+'),
    indent: fc.integer({ min: 1, max: 4 }),
    lines: fc.array(fc.oneof({ arbitrary: tidyText, weight: 4 }, { arbitrary: fc.constant(''), weight: 1 }), {
      maxLength: 5,
    }),
    first: tidyText,
    trailing: fc.nat(2),
  })
  .map(({ style, chomp, indent, lines, first, trailing }) => ({
    rest: style + chomp,
    more: [first, ...lines]
      .map((line) => (line === '' ? '' : ' '.repeat(indent) + line))
      .concat(Array.from({ length: trailing }, () => '')),
  }));
const tidyValue: fc.Arbitrary<Value> = fc.oneof(
  { arbitrary: tidyText.map(oneLine), weight: 6 },
  { arbitrary: tidyQuoted.map(oneLine), weight: 2 },
  { arbitrary: tidyBlock, weight: 2 },
);
const tidyMetadata = fc
  .tuple(
    fc.integer({ min: 1, max: 4 }),
    fc.uniqueArray(
      fc.tuple(fc.constantFrom('author', 'version', 'team', 'x-y', 'k', 'Key_2'), fc.oneof(tidyText, tidyQuoted)),
      { minLength: 1, maxLength: 3, selector: ([key]) => key },
    ),
  )
  .map(([indent, entries]) => ({
    rest: '',
    more: entries.map(([key, value]) => `${' '.repeat(indent)}${key}: ${value}`),
  }));

/** A tidy `SKILL.md`: valid frontmatter of the plain shape, in any key order, sometimes with a BOM or CRLF. */
const tidyDocArb: fc.Arbitrary<Doc> = segmentsArb.chain((segments) =>
  fc
    .record({
      name: fc.oneof(
        { arbitrary: fc.constant(oneLine(segments.at(-1) as string)), weight: 5 },
        {
          arbitrary: fc.constantFrom(
            oneLine(`'${segments.at(-1) as string}'`),
            oneLine(`"${segments.at(-1) as string}"`),
          ),
          weight: 1,
        },
      ),
      description: tidyValue,
      extras: fc.uniqueArray(
        fc.tuple(
          fc.constantFrom('license', 'compatibility', 'allowed-tools', 'version', 'x_custom', 'argument-hint'),
          tidyValue,
        ),
        { maxLength: 3, selector: ([key]) => key },
      ),
      metadata: fc.option(tidyMetadata, { freq: 3 }),
      order: fc.nat(5),
      bom: fc.oneof({ arbitrary: fc.constant(''), weight: 5 }, { arbitrary: fc.constant('\ufeff'), weight: 1 }),
      crlf: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
      body: fc.constantFrom('', '\n# Title\n\nBody text.\n', 'No final newline'),
    })
    .map(({ name, description, extras, metadata, order, bom, crlf, body }) => {
      const fields = [
        field('name', name),
        field('description', description),
        ...extras.map(([key, value]) => field(key, value)),
      ];
      if (metadata !== null) fields.push(field('metadata', metadata));
      const rotated = [...fields.slice(order % fields.length), ...fields.slice(0, order % fields.length)];
      const markdown = `${bom}---\n${rotated.flat().join('\n')}\n---\n${body}`;
      return { segments, markdown: crlf ? markdown.replaceAll('\n', '\r\n') : markdown };
    }),
);

/** Tidy and wild documents, two to three. */
const anyDocArb: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: tidyDocArb, weight: 2 },
  { arbitrary: wildDocArb, weight: 3 },
);

describe('readFrontmatter agrees with skillEntry()', () => {
  it('on generated frontmatter, taking the plain path and handing over to skillEntry() both', async () => {
    let plainPath = 0;
    let handedOver = 0;
    await fc.assert(
      fc.asyncProperty(anyDocArb, async ({ segments, markdown }) => {
        if (await expectSameAsSdk(segments, encode(markdown))) plainPath++;
        else handedOver++;
      }),
      PARAMS,
    );
    // fc.assert ran exactly RUNS cases (no shrinking: the property held).
    expect(plainPath + handedOver).toBe(RUNS);
    console.log(
      `frontmatter property: ${plainPath} of ${RUNS} generated cases read by the plain reader alone, ${handedOver} handed to skillEntry()`,
    );
    expect(plainPath).toBeGreaterThanOrEqual(RUNS / 10);
    expect(handedOver).toBeGreaterThanOrEqual(RUNS / 10);
  }, 120_000);

  it('the generator produces every feature it claims (so the property is not vacuous)', () => {
    const docs = fc.sample(anyDocArb, PARAMS).map((doc) => doc.markdown);
    const has = (pattern: RegExp): number => docs.filter((markdown) => pattern.test(markdown)).length;
    const counts = {
      literal: has(/: \|[+-]?(?:\r?\n)/u),
      folded: has(/: >[+-]?(?:\r?\n)/u),
      keep: has(/: [|>]\+/u),
      strip: has(/: [|>]-/u),
      blankInBlock: has(/: [|>][+-]?\r?\n(?: +\S.*\r?\n)+\r?\n +\S/u),
      singleQuoteEscape: has(/'[^'\n]*''[^'\n]*'/u),
      backslash: has(/"[^"\n]*\\/u),
      hashInPlain: has(/^[a-z_-]+: [^'"\n]*#/mu),
      colonInPlain: has(/^[a-z_-]+: [^'"\n]*: /mu),
      tab: has(/\t/u),
      number: has(/^[a-z_-]+: [+-]?\d+(?:\.\d+)?\r?$/mu),
      boolean: has(/^[a-z_-]+: (?:true|True|TRUE|false|FALSE)\r?$/mu),
      nullish: has(/^[a-z_-]+:(?: (?:null|Null|NULL|~))?\r?$/mu),
      metadata: has(/^metadata:/mu),
      comment: has(/^\s*#/mu),
      duplicateKey: docs.filter((markdown) => {
        const keys = markdown.split(/\r?\n/u).flatMap((line) => /^([A-Za-z_][\w-]*):/u.exec(line)?.[1] ?? []);
        return new Set(keys).size < keys.length;
      }).length,
      bom: has(/^\uFEFF/u),
      crlf: has(/\r\n/u),
      unicodeSpace: has(/[\u00a0\u2003\u3000]/u),
    };
    for (const [feature, count] of Object.entries(counts)) expect(count, feature).toBeGreaterThanOrEqual(3);
  });

  // Inputs where a hand-written reader and the SDK can disagree. Each row is compared with skillEntry(), never with a
  // value written here.
  it.each([
    ['plain value', 'description: Does things.'],
    ['plain value with # inside a word', 'description: C#-style a#b'],
    ['plain value with a colon not followed by a space', 'description: see http://x.y/z or a:b'],
    ['plain value ending in a comment', 'description: Does things. # note'],
    ['plain value with a tab inside', 'description: Does\tthings.'],
    ['plain value with trailing spaces', 'description: Does things.   '],
    ['plain value ending in a no-break space', 'description: Does things.\u00a0'],
    ['plain value starting with a no-break space', 'description: \u00a0Does things.'],
    ['plain value ending in an ideographic space', 'description: Does things.\u3000'],
    ['plain value ending in a line separator', 'description: Does things.\u2028'],
    ['single-quoted value followed by a no-break space', "description: 'Does things.'\u00a0"],
    ['double-quoted value followed by a no-break space', 'description: "Does things."\u00a0'],
    ['single quotes with escapes', "description: 'It''s ''quoted'''"],
    ['double quotes with an escape', 'description: "Tab\\there"'],
    ['quoted value then a comment', "description: 'Does things.' # note"],
    ['number-like plain value', 'description: 012'],
    ['boolean-like key', 'description: d\ntrue: x'],
    ['null-like key', 'description: d\nNull: x'],
    ['quoted boolean-like key', "description: d\n'true': x"],
    ['metadata as a one-line string', 'description: d\nmetadata: x'],
    ['metadata as a quoted string', "description: d\nmetadata: 'x'"],
    ['metadata as a block scalar', 'description: d\nmetadata: |\n  x'],
    ['metadata header followed by a no-break space', 'description: d\nmetadata: \u00a0\n  k: v'],
    ['metadata with a number', 'description: d\nmetadata:\n  n: 1'],
    ['metadata with a boolean-like key', 'description: d\nmetadata:\n  true: v'],
    ['empty metadata', 'description: d\nmetadata:'],
    ['literal block with blank lines', 'description: |\n  a\n\n  b\n\n'],
    ['literal block, strip', 'description: |-\n  a\n  b\n'],
    ['literal block, keep', 'description: |+\n  a\n\n\n'],
    ['folded block with blank lines', 'description: >\n  a\n  b\n\n  c\n'],
    ['folded block, strip', 'description: >-\n  a\n  b'],
    ['folded block, keep', 'description: >+\n  a\n\n'],
    ['folded block with a more-indented line', 'description: >\n  a\n    b\n  c'],
    ['block with a whitespace-only line wider than its indent', 'description: |\n  a\n     \n  b'],
    ['block with a leading blank line', 'description: |\n\n  a'],
    ['block with a header comment', 'description: | # c\n  a'],
    ['compatibility of 500 and 501 characters', `description: d\ncompatibility: ${'c'.repeat(500)}`],
    ['compatibility of 501 characters', `description: d\ncompatibility: ${'c'.repeat(501)}`],
    ['description of 1024 astral characters', `description: ${'😀'.repeat(1024)}`],
    ['description of 1025 astral characters', `description: ${'😀'.repeat(1025)}`],
    ['duplicate key', 'description: d\ndescription: e'],
    ['__proto__ key', 'description: d\n__proto__: x'],
  ])('%s', async (_label, yaml) => {
    for (const markdown of [
      `---\nname: my-skill\n${yaml}\n---\nBody.\n`,
      `\ufeff---\r\nname: my-skill\r\n${yaml.replaceAll('\n', '\r\n')}\r\n---\r\n`,
    ]) {
      await expectSameAsSdk(['my-skill'], encode(markdown));
    }
  });

  it("invalid UTF-8 and missing frontmatter give the SDK's messages", async () => {
    for (const bytes of [
      new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]),
      encode(''),
      encode('# Title\n'),
      encode('---\nname: my-skill\n'),
    ]) {
      await expectSameAsSdk(['my-skill'], bytes);
    }
  });
});

/** Every `SKILL.md` under `dir`, with the skill path its directory has when `dir` is served as a root. */
async function manifestsUnder(dir: string): Promise<{ segments: string[]; file: string }[]> {
  const found: { segments: string[]; file: string }[] = [];
  for (const rel of await fsp.readdir(dir, { recursive: true })) {
    if (path.basename(rel) !== 'SKILL.md') continue;
    const file = path.join(dir, rel);
    if (!(await fsp.lstat(file)).isFile()) continue;
    const relDir = path.dirname(rel);
    found.push({ segments: relDir === '.' ? [path.basename(dir)] : relDir.split(path.sep), file });
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

describe('readFrontmatter agrees with skillEntry() on real skills', () => {
  const corpusPresent = existsSync(CORPUS);
  if (!corpusPresent) console.log(`skipping the shared corpus: ${CORPUS} does not exist`);

  it.skipIf(!corpusPresent)('every SKILL.md of the shared anthropics-skills corpus', async () => {
    const manifests = await manifestsUnder(CORPUS);
    expect(manifests.length).toBeGreaterThan(0);
    let plain = 0;
    for (const { segments, file } of manifests) {
      try {
        if (await expectSameAsSdk(segments, await fsp.readFile(file))) plain++;
      } catch (error) {
        throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
      }
    }
    console.log(`corpus: ${plain} of ${manifests.length} SKILL.md files read by the plain reader`);
  });

  it('every SKILL.md of sample-skills/ and of each test/fixtures/ folder', async () => {
    const roots = [
      SAMPLE_SKILLS_DIR,
      ...(await fsp.readdir(FIXTURES_DIR, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => path.join(FIXTURES_DIR, entry.name)),
    ];
    const manifests = (await Promise.all(roots.map((root) => manifestsUnder(path.resolve(root))))).flat();
    // 6 sample skills; fixtures: 4 encoding, 1 ignored, 13 invalid (one has no SKILL.md bytes), 1 names, 3 nested,
    // 1 root-skill.
    expect(manifests.length).toBeGreaterThanOrEqual(28);
    for (const { segments, file } of manifests) {
      try {
        await expectSameAsSdk(segments, await fsp.readFile(file));
      } catch (error) {
        throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
      }
    }
  });
});
