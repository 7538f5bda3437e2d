import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';

import { readFrontmatter } from '../../src/index/frontmatter.js';
import { classifyProblem, findKeyLine } from '../../src/index/rules.js';

/** The SDK's real problem messages for `SKILL.md` of a skill at path `skillPath`. */
async function sdkProblems(skillMd: string | Uint8Array, skillPath = 'my-skill'): Promise<string[]> {
  try {
    await skillEntry(skillPath, { 'SKILL.md': skillMd });
  } catch (error) {
    if (SkillCatalogError.isInstance(error)) return error.problems.map((problem) => problem.message);
    throw error;
  }
  throw new Error('expected skillEntry to reject the SKILL.md');
}

const md = (...lines: string[]): string => `${lines.join('\n')}\n`;
const QUOTE_HINT =
  'quote the value: it contains ": " (wrap the value in single quotes and double any single quote inside it)';
const GENERIC_SYNTAX_HINT =
  'fix the YAML on that line (quote values that contain ":", "#" or start with a special character)';

describe('classifyProblem on real SDK messages', () => {
  it.each([
    ['unclosed frontmatter', 'frontmatter-unclosed', undefined, md('---', 'name: my-skill', 'description: d')],
    ['": " in a plain value', 'frontmatter-syntax', 3, md('---', 'name: my-skill', 'description: use: this', '---')],
    ['duplicate key', 'frontmatter-syntax', 4, md('---', 'name: my-skill', 'description: d', 'name: my-skill', '---')],
    [
      'tab indentation',
      'frontmatter-syntax',
      5,
      md('---', 'name: my-skill', 'description: d', 'metadata:', '\tk: v', '---'),
    ],
    ['unclosed flow collection', 'frontmatter-syntax', 3, md('---', 'name: my-skill', 'description: [a,', '---')],
    ['anchor', 'frontmatter-syntax', 3, md('---', 'name: my-skill', 'description: &x d', '---')],
    ['sequence instead of mapping', 'frontmatter-syntax', 2, md('---', '- a', '---')],
    [
      'syntax error after BOM + CRLF',
      'frontmatter-syntax',
      4,
      '\uFEFF---\r\nname: my-skill\r\n\r\ndescription: a: b\r\n---\r\n',
    ],
    ['missing description', 'required-fields', undefined, md('---', 'name: my-skill', '---')],
    ['empty frontmatter', 'required-fields', undefined, md('---', '---')],
    ['numeric name', 'required-fields', undefined, md('---', 'name: 12', 'description: d', '---')],
    ['upper-case name', 'name-format', 3, md('---', 'description: d', 'name: My_Skill', '---')],
    ['double hyphen', 'name-format', 2, md('---', 'name: my--skill', 'description: d', '---')],
    ['name not the directory', 'name-mismatch', 2, md('---', 'name: other', 'description: d', '---')],
    [
      'description too long',
      'description-length',
      4,
      md('---', 'name: my-skill', '', 'description: ' + 'x'.repeat(1025), '---'),
    ],
    ['empty description', 'description-length', 3, md('---', 'name: my-skill', 'description: ""', '---')],
    [
      'block-scalar description too long',
      'description-length',
      3,
      md('---', 'name: my-skill', 'description: |', `  ${'y'.repeat(1030)}`, '---'),
    ],
    [
      'compatibility too long',
      'compatibility-length',
      4,
      md('---', 'name: my-skill', 'description: d', 'compatibility: ' + 'c'.repeat(501), '---'),
    ],
    [
      'compatibility not a string',
      'compatibility-length',
      4,
      md('---', 'name: my-skill', 'description: d', 'compatibility: [a]', '---'),
    ],
    [
      'metadata with a list',
      'metadata-values',
      5,
      md('---', 'name: my-skill', 'description: d', 'metadata:', '  k: [1, 2]', '---'),
    ],
    [
      'metadata number',
      'metadata-values',
      5,
      md('---', 'name: my-skill', 'description: d', '"metadata":', '  v: 1', '---'),
    ],
  ])('%s → %s, line %s', async (_label, rule, line, skillMd) => {
    const messages = await sdkProblems(skillMd);
    expect(messages).toHaveLength(1);
    const problem = classifyProblem(messages[0] ?? '', skillMd);
    expect(problem.rule).toBe(rule);
    expect(problem.message.startsWith(messages[0] ?? '')).toBe(true);
    expect(problem.line).toBe(line);
    expect('line' in problem).toBe(line !== undefined);
  });

  it('the description-length fix fits the case: add one when it is empty, shorten it when it is long', async () => {
    const hintOf = async (skillMd: string): Promise<string> =>
      classifyProblem((await sdkProblems(skillMd))[0] ?? '', skillMd).hint;
    expect(await hintOf(md('---', 'name: my-skill', 'description: ""', '---'))).toBe(
      'add a description: what the skill does and when to use it (1-1024 characters)',
    );
    expect(await hintOf(md('---', 'name: my-skill', "description: ''", '---'))).toBe(
      'add a description: what the skill does and when to use it (1-1024 characters)',
    );
    expect(await hintOf(md('---', 'name: my-skill', `description: ${'x'.repeat(1025)}`, '---'))).toBe(
      'shorten the description to at most 1024; move details into the SKILL.md body',
    );
  });

  it('says the measured length and the limit when the frontmatter can be read', async () => {
    const problemsOf = async (skillMd: string) => {
      const read = await readFrontmatter(['my-skill'], new TextEncoder().encode(skillMd));
      return 'problems' in read ? read.problems : [];
    };
    // 1,311 characters, one of them outside the BMP (counted once, as the SDK counts).
    const long = `${'x'.repeat(1310)}🧑`;
    expect(await problemsOf(md('---', 'name: my-skill', `description: ${long}`, '---'))).toEqual([
      {
        rule: 'description-length',
        message: 'frontmatter description must be 1-1024 characters: it has 1311',
        hint: 'shorten the description by 287 characters to at most 1024; move details into the SKILL.md body',
        line: 3,
        column: 1,
      },
    ]);
    expect(
      await problemsOf(md('---', 'name: my-skill', 'description: d', `compatibility: ${'c'.repeat(612)}`, '---')),
    ).toEqual([
      {
        rule: 'compatibility-length',
        message: 'frontmatter compatibility must be a string of 1-500 characters: it has 612',
        hint: 'shorten compatibility by 112 characters to at most 500',
        line: 4,
        column: 1,
      },
    ]);
  });

  it.each([
    [
      'description',
      md('---', 'name: my-skill', '---'),
      '"description" is not a string',
      'add "description:" (what the skill does and when to use it) as a string',
    ],
    [
      'name',
      md('---', 'description: d', '---'),
      '"name" is not a string',
      'add "name:" (the directory name) as a string',
    ],
  ])('required-fields names the missing field: %s', async (_label, skillMd, detail, hint) => {
    const read = await readFrontmatter(['my-skill'], new TextEncoder().encode(skillMd));
    expect('problems' in read ? read.problems : []).toEqual([
      {
        rule: 'required-fields',
        message: `SKILL.md frontmatter must contain string "name" and "description": ${detail}`,
        hint,
      },
    ]);
  });

  it('metadata-values names every key whose value is not a string, at the first one', async () => {
    const skillMd = md(
      '---',
      'name: my-skill',
      'description: d',
      'metadata:',
      '  version: 1.2',
      '  team: docs',
      '  count: 3',
      '---',
    );
    const messages = await sdkProblems(skillMd);
    expect(classifyProblem(messages[0] ?? '', skillMd)).toEqual({
      rule: 'metadata-values',
      message: 'frontmatter metadata must map strings to strings: "version" is a number, "count" is a number',
      hint: 'quote the value: version: "1.2"; quote the value: count: "3"',
      line: 5,
      column: 3,
    });
  });

  it.each([
    ['a number', ['  author: me', '  version: 1.0'], 6, 'version', 'quote the value: version: "1.0"'],
    ['a boolean', ['  beta: true'], 5, 'beta', 'quote the value: beta: "true"'],
    ['null', ['  owner: ~'], 5, 'owner', 'give "owner" a string value, or remove it'],
    [
      'a list',
      ['  tags:', '    - a', '    - b'],
      5,
      'tags',
      'make "tags" one string: join its items (metadata maps strings to strings)',
    ],
    [
      'a list',
      ['  tags: [a, b]'],
      5,
      'tags',
      'make "tags" one string: join its items (metadata maps strings to strings)',
    ],
    [
      'a mapping',
      ['  "links":', '     home: x'],
      5,
      'links',
      'make "links" one string: join its items (metadata maps strings to strings)',
    ],
  ])('metadata-values names the key whose value is %s, at its line', async (kind, entries, line, key, hint) => {
    const skillMd = md('---', 'name: my-skill', 'description: d', 'metadata:', ...entries, '---');
    const messages = await sdkProblems(skillMd);
    expect(classifyProblem(messages[0] ?? '', skillMd)).toEqual({
      rule: 'metadata-values',
      message: `frontmatter metadata must map strings to strings: "${key}" is ${kind}`,
      hint,
      line,
      column: 3,
    });
  });

  it('invalid UTF-8 → encoding, without a line', async () => {
    const messages = await sdkProblems(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a]));
    expect(messages).toEqual(['SKILL.md is not valid UTF-8']);
    expect(classifyProblem(messages[0] ?? '', undefined)).toEqual({
      rule: 'encoding',
      message: 'SKILL.md is not valid UTF-8',
      hint: 'save SKILL.md as UTF-8',
    });
  });

  it('several rule problems of one SKILL.md classify one by one', async () => {
    const skillMd = md('---', 'name: other', 'description: ""', 'metadata:', '  k: 1', '---');
    const problems = (await sdkProblems(skillMd)).map((message) => classifyProblem(message, skillMd));
    expect(problems.map(({ rule, line }) => [rule, line])).toEqual([
      ['name-mismatch', 2],
      ['description-length', 3],
      ['metadata-values', 5],
    ]);
    expect(problems[0]?.hint).toBe('set "name: my-skill" or rename the directory to "other"');
  });

  it.each([
    ['a plain value cannot contain ": "; quote the value', QUOTE_HINT],
    ['duplicate key "name"', 'remove the repeated key'],
    ['tabs cannot be used for indentation', 'indent with spaces, consistently'],
    ['a flow collection must close on the same line', GENERIC_SYNTAX_HINT],
  ])('syntax hint for "line 3: %s"', (detail, hint) => {
    expect(classifyProblem(`SKILL.md frontmatter: line 3: ${detail}`, undefined)).toEqual({
      rule: 'frontmatter-syntax',
      message: `SKILL.md frontmatter: line 3: ${detail}`,
      hint,
      line: 3,
    });
  });

  it('an unknown message → entry-invalid without a line', () => {
    expect(classifyProblem('resources must include skill://x/SKILL.md', md('---', 'name: x', '---'))).toEqual({
      rule: 'entry-invalid',
      message: 'resources must include skill://x/SKILL.md',
      hint: 'fix SKILL.md so that it follows the Agent Skills specification',
    });
  });

  // The SDK reports a missing opening "---" as a FrontmatterError with line 1:
  // 'SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line'.
  it.each([
    ['no frontmatter', md('# Title', 'text')],
    ['empty file', ''],
    ['BOM then text', '\uFEFFhello\n'],
    ['indented opening', md(' ---', 'name: my-skill', 'description: d', '---')],
  ])('%s → frontmatter-missing', async (_label, skillMd) => {
    const messages = await sdkProblems(skillMd);
    expect(messages).toEqual(['SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line']);
    expect(classifyProblem(messages[0] ?? '', skillMd).rule).toBe('frontmatter-missing');
  });
});

describe('findKeyLine', () => {
  const plain = md(
    '---',
    'name: my-skill',
    'description: d',
    'metadata:',
    '  name: nested',
    '---',
    'description: body',
  );
  it.each([
    ['name in plain frontmatter', plain, 'name', 2],
    ['description in plain frontmatter', plain, 'description', 3],
    ['nested key is not top-level', md('---', 'metadata:', '  license: x', '---'), 'license', undefined],
    ['key only in the body', plain, 'license', undefined],
    ['BOM', `\uFEFF${plain}`, 'description', 3],
    ['CRLF', plain.replaceAll('\n', '\r\n'), 'description', 3],
    ['BOM + CRLF', `\uFEFF${plain.replaceAll('\n', '\r\n')}`, 'metadata', 4],
    ['double-quoted key', md('---', 'name: a', '"description": d', '---'), 'description', 3],
    ['single-quoted key', md('---', 'name: a', "'description': d", '---'), 'description', 3],
    ['key with no value', md('---', 'name: a', 'metadata:', '---'), 'metadata', 3],
    ['prefix of a longer key', md('---', 'names: a', 'name: b', '---'), 'name', 3],
    ['block scalar line that looks like a key', md('---', 'description: |', '  name: x', 'name: a', '---'), 'name', 4],
    ['closing fence with trailing spaces', md('---', 'a: 1', '---  ', 'name: b'), 'name', undefined],
    ['opening fence with trailing spaces', md('---  ', 'name: a', '---'), 'name', 2],
    ['no frontmatter', md('# Title', 'name: a'), 'name', undefined],
    ['BOM twice is not a fence', `\uFEFF\uFEFF${plain}`, 'name', undefined],
    ['empty text', '', 'name', undefined],
    ['unclosed frontmatter still scans', md('---', 'x: 1', 'name: a'), 'name', 3],
  ])('%s: %s → %s', (_label, text, key, line) => {
    expect(findKeyLine(text, key)).toBe(line);
  });

  it.each([
    [undefined, 'name'],
    [plain, undefined],
    [undefined, undefined],
  ])('undefined inputs (%j, %j) → undefined', (text, key) => {
    expect(findKeyLine(text, key)).toBeUndefined();
  });
});
