/**
 * `skills-serve check` over the built CLI (`bin/skills-serve.js`), on real directories: exact text and JSON output,
 * exit codes (0 clean or warnings only, 1 a skill left out or a root unusable, 2 usage), diagnostics with path,
 * line:column, rule and fix. File counts and byte totals are computed here from the disk, not from `src/`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { FIXTURES, REPO, SAMPLE_SKILLS } from '../helpers/server.js';
import { skillMd, tempTrees, type TreeEntry } from '../helpers/tree.js';

/** `1,234` grouping, written independently of `toLocaleString`. */
function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/gu, ',');
}

function plural(count: number, noun: string): string {
  return `${grouped(count)} ${noun}${count === 1 ? '' : 's'}`;
}

/** Every regular file at or under `dir` (served names only: no dot names, no node_modules), as absolute paths. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(abs));
    else if (entry.isFile()) out.push(abs);
  }
  return out;
}

/** Skill directories (holding a regular SKILL.md) under `root`, root-relative with "/". */
function skillDirsUnder(root: string, rel = ''): string[] {
  const out: string[] = [];
  const abs = rel === '' ? root : path.join(root, ...rel.split('/'));
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isFile() && entry.name === 'SKILL.md' && rel !== '') out.push(rel);
    if (entry.isDirectory()) out.push(...skillDirsUnder(root, childRel));
  }
  return out;
}

/** The one skill of `sample-skills/` that bundles executable content: `scripts/validate.py` (mode 755, a shebang). */
const SAMPLE_EXECUTABLE = {
  uri: 'skill://data-pipeline/SKILL.md',
  rel: 'data-pipeline/SKILL.md',
  message:
    'skill://data-pipeline/SKILL.md bundles 1 executable file: scripts/validate.py (scripts, execute-bit, shebang)',
  hint: 'review them before serving; an operator can withhold such skills (--withhold-executables, or "withholdExecutables" in a --http-tokens entry)',
};

/**
 * What `check` must print for a root of valid plain-ASCII skills, derived from the disk (and, for `sample-skills/`, its
 * one `executable-content` note, its path shown relative to `cwd`).
 */
function expectedOkReport(
  root: string,
  cwd = REPO,
): {
  text: string;
  skills: { uri: string; name: string; files: number; bytes: number }[];
} {
  const skills = skillDirsUnder(root)
    .map((rel) => {
      const files = filesUnder(path.join(root, ...rel.split('/')));
      return {
        uri: `skill://${rel}/SKILL.md`,
        name: rel.split('/').at(-1) as string,
        files: files.length,
        bytes: files.reduce((sum, file) => sum + statSync(file).size, 0),
      };
    })
    .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  const width = Math.max(...skills.map((skill) => skill.uri.length));
  const lines = skills.map(
    (skill) =>
      `ok      ${skill.uri}${' '.repeat(width - skill.uri.length)}  ${plural(skill.files, 'file')}, ${plural(skill.bytes, 'byte')}`,
  );
  const notes =
    root === SAMPLE_SKILLS
      ? [
          '',
          `info    ${path.relative(cwd, path.join(root, SAMPLE_EXECUTABLE.rel))}: ${SAMPLE_EXECUTABLE.message} [executable-content]`,
          `        fix: ${SAMPLE_EXECUTABLE.hint}`,
        ]
      : [];
  const summary = `${plural(skills.length, 'skill')} served, 0 left out, 0 warnings${notes.length > 0 ? ', 1 note' : ''}`;
  lines.push(...notes, '', summary, '');
  return { text: lines.join('\n'), skills };
}

const temps = tempTrees();
afterEach(() => temps.removeAll());
const { tree, tempDir } = temps;

const INVALID = path.join(FIXTURES, 'invalid');

/** The diagnostics of test/fixtures/invalid, in the order `check` lists them (skill directories in code-unit order). */
const INVALID_DIAGNOSTICS = [
  {
    dir: 'Bad_Name',
    line: 2,
    column: 1,
    rule: 'name-format',
    message: 'frontmatter name "Bad_Name" must be 1-64 lowercase letters, digits and single hyphens',
    hint: 'use 1-64 lowercase letters, digits and single hyphens, and name the directory the same',
  },
  {
    dir: 'bad-yaml',
    line: 3,
    column: 22,
    rule: 'frontmatter-syntax',
    message: 'SKILL.md frontmatter: line 3: a plain value cannot contain ": "; quote the value',
    hint: 'quote the description: it contains ": " (wrap the value in single quotes and double any single quote inside it)',
  },
  {
    dir: 'duplicate-key',
    line: 4,
    rule: 'frontmatter-syntax',
    message: 'SKILL.md frontmatter: line 4: duplicate key "description"',
    hint: 'remove the repeated key',
  },
  {
    dir: 'empty-skill-md',
    line: 1,
    column: 1,
    rule: 'frontmatter-missing',
    message: 'SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line',
    hint: 'start SKILL.md with a "---" line, then "name:" and "description:", then a closing "---" line',
  },
  {
    dir: 'long-compatibility',
    line: 4,
    column: 1,
    rule: 'compatibility-length',
    message: 'frontmatter compatibility must be a string of 1-500 characters: it has 600',
    hint: 'shorten compatibility by 100 characters to at most 500',
  },
  {
    dir: 'long-description',
    line: 3,
    column: 1,
    rule: 'description-length',
    message: 'frontmatter description must be 1-1024 characters: it has 1100',
    hint: 'shorten the description by 76 characters to at most 1024; move details into the SKILL.md body',
  },
  {
    dir: 'metadata-list',
    line: 5,
    column: 3,
    rule: 'metadata-values',
    message: 'frontmatter metadata must map strings to strings: "tags" is a list',
    hint: 'make "tags" one string: join its items (metadata maps strings to strings)',
  },
  {
    dir: 'missing-description',
    rule: 'required-fields',
    message: 'SKILL.md frontmatter must contain string "name" and "description": "description" is not a string',
    hint: 'add "description:" (what the skill does and when to use it) as a string',
  },
  {
    dir: 'name-mismatch',
    line: 2,
    column: 1,
    rule: 'name-mismatch',
    message: 'frontmatter name "something-else" must match the last path segment "name-mismatch"',
    hint: 'set "name: name-mismatch" or rename the directory to "something-else"',
  },
  {
    dir: 'no-frontmatter',
    line: 1,
    column: 1,
    rule: 'frontmatter-missing',
    message: 'SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line',
    hint: 'start SKILL.md with a "---" line, then "name:" and "description:", then a closing "---" line',
  },
  { dir: 'not-utf8', rule: 'encoding', message: 'SKILL.md is not valid UTF-8', hint: 'save SKILL.md as UTF-8' },
  {
    dir: 'unclosed',
    rule: 'frontmatter-unclosed',
    message: 'SKILL.md frontmatter: frontmatter has no closing "---" line',
    hint: 'end the frontmatter with a line holding only "---"',
  },
] as const;

function invalidTextReport(shownPrefix: string): string {
  const good = readFileSync(path.join(INVALID, 'good', 'SKILL.md'));
  const lines = [`ok      skill://good/SKILL.md  1 file, ${plural(good.length, 'byte')}`, ''];
  for (const d of INVALID_DIAGNOSTICS) {
    const file = `${shownPrefix}${d.dir}/SKILL.md`;
    const where = 'line' in d ? `${file}:${d.line}${'column' in d ? `:${d.column}` : ''}` : file;
    lines.push(`error   ${where}: ${d.message} [${d.rule}]`, `        fix: ${d.hint}`);
  }
  lines.push('', `1 skill served, ${INVALID_DIAGNOSTICS.length} left out, 0 warnings`, '');
  return lines.join('\n');
}

describe('check: text output', () => {
  it('sample-skills → exit 0, one ok line per skill with file count and bytes from disk, and the summary', () => {
    const expected = expectedOkReport(SAMPLE_SKILLS);
    expect(expected.skills.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
    const run = cli(['check', 'sample-skills']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(expected.text);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('ok      '))).toHaveLength(6);
    expect(run.stdout.endsWith('\n6 skills served, 0 left out, 0 warnings, 1 note\n')).toBe(true);
    expect(run.status).toBe(0);
  });

  it('the same report whatever the working directory (absolute root)', () => {
    const run = cli(['check', SAMPLE_SKILLS], path.dirname(REPO));
    expect(run).toEqual({ status: 0, stdout: expectedOkReport(SAMPLE_SKILLS, path.dirname(REPO)).text, stderr: '' });
  });

  it('test/fixtures/invalid → exit 1, every diagnostic with its relative path, line:column when known, rule and fix', () => {
    const run = cli(['check', 'test/fixtures/invalid']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(invalidTextReport('test/fixtures/invalid/'));
    expect(run.status).toBe(1);
  });

  it('paths are shown relative to the working directory, absolute when outside it', () => {
    expect(cli(['check', '.'], INVALID)).toEqual({ status: 1, stdout: invalidTextReport(''), stderr: '' });
    const elsewhere = path.join(REPO, 'sample-skills');
    expect(cli(['check', INVALID], elsewhere)).toEqual({
      status: 1,
      stdout: invalidTextReport(`${INVALID}/`),
      stderr: '',
    });
  });

  it.each([
    [
      'plain',
      '---\nname: tips\ndescription: Use this skill: for tips\n---\n\n# tips\n',
      3,
      'description: Use this skill: for tips',
    ],
    [
      'after another key',
      '---\nname: tips\nlicense: MIT\ndescription: Billing: refunds and credits\n---\n',
      4,
      'description: Billing: refunds and credits',
    ],
    [
      'CRLF line endings',
      '---\r\nname: tips\r\ndescription: Use when: CRLF\r\n---\r\n',
      3,
      'description: Use when: CRLF',
    ],
    ['a UTF-8 BOM', '\uFEFF---\nname: tips\ndescription: Use when: BOM\n---\n', 3, 'description: Use when: BOM'],
  ])(
    'an unquoted ": " in the description (%s) → the fix says to quote the description',
    async (_label, text, line, lineText) => {
      const root = await tree({ 'tips/SKILL.md': text });
      const column = lineText.indexOf(': ', 'description:'.length) + 1;
      const run = cli(['check', '.'], root);
      expect(run.stdout).toBe(
        [
          `error   tips/SKILL.md:${line}:${column}: SKILL.md frontmatter: line ${line}: a plain value cannot contain ": "; quote the value [frontmatter-syntax]`,
          '        fix: quote the description: it contains ": " (wrap the value in single quotes and double any single quote inside it)',
          '',
          '0 skills served, 1 left out, 0 warnings',
          '',
        ].join('\n'),
      );
      expect(run.status).toBe(1);
    },
  );

  // The key may be quoted in YAML ("description": …); the line is still found (findKeyLine accepts quoted keys), but
  // the hint falls back to "quote the value" because syntaxHint only recognises bare keys.
  it('an unquoted ": " after a quoted "description" key → the fix still names the description', async () => {
    const root = await tree({ 'tips/SKILL.md': '---\nname: tips\n"description": Use when: quoted key\n---\n' });
    const run = cli(['check', '.'], root);
    expect(run.stdout.split('\n')[1]).toBe(
      '        fix: quote the description: it contains ": " (wrap the value in single quotes and double any single quote inside it)',
    );
    expect(run.status).toBe(1);
  });

  it('a symlink out of the root → exit 0, the skill served without it, one warning counted', async () => {
    const outside = await tree({ 'secret.txt': 'not for serving\n' });
    const skill = skillMd('linky', 'Has a link that leaves the root.');
    const root = await tree({
      'linky/SKILL.md': skill,
      'linky/notes.md': 'notes\n',
      'linky/leak.txt': { symlink: path.join(outside, 'secret.txt') },
    });
    const bytes = Buffer.byteLength(skill) + 'notes\n'.length;
    const run = cli(['check', '.'], root);
    expect(run).toEqual({
      status: 0,
      stderr: '',
      stdout: [
        `ok      skill://linky/SKILL.md  2 files, ${plural(bytes, 'byte')}`,
        '',
        'warning linky/leak.txt: symlink points outside the served roots and was not followed [symlink-outside-root]',
        '        fix: copy the target into the skill, serve its folder as another root, or run with --symlinks follow',
        '',
        '1 skill served, 0 left out, 1 warning',
        '',
      ].join('\n'),
    });
  });

  it('a FIFO inside a skill → exit 0, the skill served without it, one warning counted', async () => {
    const skill = skillMd('piped', 'Has a FIFO.');
    const root = await tree({ 'piped/SKILL.md': skill, 'piped/data/pipe': { fifo: true } });
    const run = cli(['check', '.'], root);
    expect(run).toEqual({
      status: 0,
      stderr: '',
      stdout: [
        `ok      skill://piped/SKILL.md  1 file, ${plural(Buffer.byteLength(skill), 'byte')}`,
        '',
        'warning piped/data/pipe: not a regular file (FIFO, socket or device) and was skipped [special-file]',
        '        fix: skills may only contain regular files and directories',
        '',
        '1 skill served, 0 left out, 1 warning',
        '',
      ].join('\n'),
    });
  });

  it('several warnings in several skills → exit 0 with every warning listed and counted', async () => {
    const outside = await tree({ 'secret.txt': 'x' });
    const root = await tree({
      'a/SKILL.md': skillMd('a', 'First.'),
      'a/out.txt': { symlink: path.join(outside, 'secret.txt') },
      'b/SKILL.md': skillMd('b', 'Second.'),
      'b/fifo': { fifo: true },
      'b/dangling.md': { symlink: 'does-not-exist.md' },
    });
    const run = cli(['check', '.'], root);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      `ok      skill://a/SKILL.md  1 file, ${plural(Buffer.byteLength(skillMd('a', 'First.')), 'byte')}`,
      `ok      skill://b/SKILL.md  1 file, ${plural(Buffer.byteLength(skillMd('b', 'Second.')), 'byte')}`,
      '',
    ]);
    // Pairs (diagnostic line, fix line), compared as a set here; their order is tested separately below.
    const pairs = [];
    for (let index = 3; index < 9; index += 2) pairs.push(`${lines[index]}\n${lines[index + 1]}`);
    expect(pairs.sort()).toEqual(
      [
        'warning a/out.txt: symlink points outside the served roots and was not followed [symlink-outside-root]\n        fix: copy the target into the skill, serve its folder as another root, or run with --symlinks follow',
        'warning b/dangling.md: symlink target does not exist (ENOENT: no such file or directory) and was skipped [symlink-dangling]\n        fix: fix or remove the link',
        'warning b/fifo: not a regular file (FIFO, socket or device) and was skipped [special-file]\n        fix: skills may only contain regular files and directories',
      ].sort(),
    );
    expect(lines.slice(9)).toEqual(['', '2 skills served, 0 left out, 3 warnings', '']);
  });

  // Skills are listed in URI order, but diagnostics follow the order in which the concurrent walk happened to find
  // them (readdir order, then whichever realpath() finished first), so the same tree can print differently from run
  // to run: bad for CI logs and for diffing `check` output. Expected: one stable order (by file path).
  it('lists diagnostics in one stable order (by path), run after run', async () => {
    const outside = await tree({ 'secret.txt': 'x' });
    const spec: Record<string, TreeEntry> = { 'sk/SKILL.md': skillMd('sk', 'Many links out.') };
    for (const name of ['q', 'c', 'x', 'a', 'm', 'f', 'z', 'b', 'k', 'd', 'w', 'h']) {
      spec[`sk/link-${name}`] = { symlink: path.join(outside, 'secret.txt') };
      spec[`sk/dir-${name}/out`] = { symlink: path.join(outside, 'secret.txt') };
    }
    const root = await tree(spec);
    const outputs = Array.from({ length: 4 }, () => cli(['check', '.'], root).stdout);
    const warned = (text: string): string[] =>
      text
        .split('\n')
        .filter((line) => line.startsWith('warning '))
        .map((line) => line.slice(8, line.indexOf(': ')));
    const expectedOrder = [...warned(outputs[0] as string)].sort();
    expect(expectedOrder).toHaveLength(24);
    for (const output of outputs) expect(warned(output)).toEqual(expectedOrder);
  });

  it('an empty root → exit 0 with a root-empty warning that says what to do; --strict exits 1', async () => {
    const root = await tempDir();
    const run = cli(['check', root]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        `warning ${root}: no skills here: no folder below it holds a SKILL.md [root-empty]`,
        '        fix: give each skill a folder with a SKILL.md (<root>/<name>/SKILL.md), or point at the folder that holds them',
        '',
        '0 skills served, 0 left out, 1 warning',
        '',
      ].join('\n'),
    );
    expect(cli(['check', '--strict', root]).status).toBe(1);
  });

  it('a project root whose skills sit in dot folders → the warning names each and the argument that serves it', async () => {
    const root = await temps.tree({
      '.claude/skills/alpha/SKILL.md': skillMd('alpha', 'Alpha.'),
      '.claude/skills/beta/SKILL.md': skillMd('beta', 'Beta.'),
      '.agents/gamma/SKILL.md': skillMd('gamma', 'Gamma.'),
      '.git/hooks/x/SKILL.md': skillMd('x', 'Not a skill folder anyone serves.'),
      'src/index.ts': 'export {};\n',
    });
    const run = cli(['check', root]);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n').slice(0, 2)).toEqual([
      `warning ${root}: no skills served here; skills are in .agents (1 skill), .claude/skills (2 skills), under a name starting with "." that is never served [root-empty]`,
      `        fix: serve those folders as roots: ${root}/.agents ${root}/.claude/skills`,
    ]);
    // The folder named itself is served (the user pointed at it): no warning.
    const direct = cli(['check', path.join(root, '.claude', 'skills')]);
    expect(direct.status).toBe(0);
    expect(direct.stdout.trimEnd().split('\n').at(-1)).toBe('2 skills served, 0 left out, 0 warnings');
  });
});

describe('check --json', () => {
  it('test/fixtures/invalid → the exact document: skills, every diagnostic field, summary; exit 1', () => {
    const run = cli(['check', '--json', 'test/fixtures/invalid']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(1);
    expect(run.stdout.endsWith('}\n')).toBe(true);
    const report = JSON.parse(run.stdout) as unknown;
    expect(run.stdout).toBe(`${JSON.stringify(report, null, 2)}\n`);
    expect(report).toStrictEqual({
      skills: [
        {
          uri: 'skill://good/SKILL.md',
          name: 'good',
          files: 1,
          bytes: statSync(path.join(INVALID, 'good', 'SKILL.md')).size,
        },
      ],
      diagnostics: INVALID_DIAGNOSTICS.map((d) => ({
        severity: 'error',
        rule: d.rule,
        file: path.join(INVALID, d.dir, 'SKILL.md'),
        ...('line' in d ? { line: d.line } : {}),
        ...('column' in d ? { column: d.column } : {}),
        message: d.message,
        hint: d.hint,
      })),
      summary: { served: 1, leftOut: INVALID_DIAGNOSTICS.length, warnings: 0, info: 0 },
    });
  });

  it('sample-skills → every skill with name, file count and bytes from disk; one info note; exit 0', () => {
    const run = cli(['check', 'sample-skills', '--json']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toStrictEqual({
      skills: expectedOkReport(SAMPLE_SKILLS).skills,
      diagnostics: [
        {
          severity: 'info',
          rule: 'executable-content',
          file: path.join(SAMPLE_SKILLS, SAMPLE_EXECUTABLE.rel),
          message: SAMPLE_EXECUTABLE.message,
          hint: SAMPLE_EXECUTABLE.hint,
        },
      ],
      summary: { served: 6, leftOut: 0, warnings: 0, info: 1 },
    });
  });

  it('warnings only → exit 0, warnings counted, diagnostics without line or column', async () => {
    const outside = await tree({ 'secret.txt': 'x' });
    const skill = skillMd('linky', 'Link out.');
    const root = await tree({ 'linky/SKILL.md': skill, 'linky/leak': { symlink: path.join(outside, 'secret.txt') } });
    const run = cli(['check', '--json', root]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toStrictEqual({
      skills: [{ uri: 'skill://linky/SKILL.md', name: 'linky', files: 1, bytes: Buffer.byteLength(skill) }],
      diagnostics: [
        {
          severity: 'warning',
          rule: 'symlink-outside-root',
          file: path.join(root, 'linky', 'leak'),
          message: 'symlink points outside the served roots and was not followed',
          hint: 'copy the target into the skill, serve its folder as another root, or run with --symlinks follow',
        },
      ],
      summary: { served: 1, leftOut: 0, warnings: 1, info: 0 },
    });
  });

  it('SKILLS_SERVE_JSON=1 is the environment twin of --json', () => {
    const result = cli(['check', 'sample-skills'], REPO, { SKILLS_SERVE_JSON: '1' });
    expect(result.status).toBe(0);
    expect((JSON.parse(result.stdout) as { summary: unknown }).summary).toEqual({
      served: 6,
      leftOut: 0,
      warnings: 0,
      info: 1,
    });
  });
});

describe('check: unusable roots and usage errors', () => {
  it('a missing root → exit 1, stderr names its absolute path, nothing on stdout', async () => {
    const cwd = await tempDir();
    expect(cli(['check', 'nope'], cwd)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.join(cwd, 'nope')} cannot be used (it does not exist)\n`,
    });
  });

  it('a mistyped command is read as a missing root, and the message names the command it looks like', async () => {
    const cwd = await tempDir();
    expect(cli(['chek', SAMPLE_SKILLS], cwd)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.join(cwd, 'chek')} cannot be used (it does not exist); did you mean the command "check"?\n`,
    });
    expect(cli(['manifets', SAMPLE_SKILLS], cwd).stderr).toMatch(/did you mean the command "manifest"\?\n$/u);
    // A folder name far from every command gets no such guess.
    expect(cli(['skills', SAMPLE_SKILLS], cwd).stderr).not.toMatch(/did you mean/u);
  });

  it('a missing root after a good one → exit 1 naming the missing one', async () => {
    const cwd = await tempDir();
    expect(cli(['check', SAMPLE_SKILLS, './gone/skills'], cwd)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.join(cwd, 'gone', 'skills')} cannot be used (it does not exist)\n`,
    });
  });

  it('a root that is a file → exit 1 naming its absolute path', async () => {
    const cwd = await tree({ 'file.md': 'x' });
    expect(cli(['check', 'file.md'], cwd)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.join(cwd, 'file.md')} is not a directory\n`,
    });
  });

  it.each([
    [['check'], "error: missing required argument 'roots'"],
    [['check', '--bogus', 'sample-skills'], "error: unknown option '--bogus'"],
    [['check', '--ttl', '10', 'sample-skills'], "error: unknown option '--ttl'"],
    [['manifest', '--page-size', '10', 'sample-skills'], "error: unknown option '--page-size'"],
    [
      ['serve', '--page-size', '0', 'sample-skills'],
      "error: option '--page-size <n>' argument '0' is invalid. --page-size must be an integer from 1 to 10000 (got \"0\")",
    ],
    [
      ['check', '--log-level', 'loud', 'sample-skills'],
      "error: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are trace, debug, info, warn, error, fatal, silent.",
    ],
  ])('usage error %j → exit 2 with the error and a pointer to --help on stderr', (args, error) => {
    const run = cli(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`${error}\n(run skills-serve --help for usage)\n`);
  });
});

describe('check: links between skills', () => {
  it('warns of a link out of its skill and of a skill:// URI not served, never of code, URLs or its own files', async () => {
    const body = [
      '# gws-drive',
      '',
      'Read [the shared setup](../gws-shared/SKILL.md) first, then [the notes](../gws-notes/notes.md).',
      'Its own [reference](references/api.md) and [anchor](#usage) are fine, as is https://example.com/x.',
      'Ask skill://gws-shared/SKILL.md for auth; skill://gws-gone/SKILL.md is retired.',
      '',
      '```md',
      '[not a link](../elsewhere.md) and skill://in-a-fence/SKILL.md',
      '```',
      'And `[code](../span.md)` too.',
      '',
    ].join('\n');
    const root = await temps.tree({
      'gws-drive/SKILL.md': `${skillMd('gws-drive', 'Drive files.').replace(/# gws-drive[\s\S]*$/u, '')}${body}`,
      'gws-drive/references/api.md': 'API.\n',
      'gws-shared/SKILL.md': skillMd('gws-shared', 'Shared Google Workspace auth.'),
    });
    const run = cli(['check', '--json', root]);
    expect(run.status).toBe(0);
    const file = path.join(root, 'gws-drive', 'SKILL.md');
    expect((JSON.parse(run.stdout) as { diagnostics: unknown[] }).diagnostics).toEqual([
      {
        severity: 'warning',
        rule: 'link-outside-skill',
        file,
        line: 8,
        column: 25,
        message:
          'links ../gws-shared/SKILL.md, outside this skill, into skill://gws-shared/SKILL.md: a host that installs or loads this skill alone cannot follow it',
        hint: 'name the other skill by its URI (skill://gws-shared/SKILL.md) and serve both together, or copy what it needs into the skill folder',
      },
      {
        severity: 'warning',
        rule: 'link-outside-skill',
        file,
        line: 8,
        column: 73,
        message: 'links ../gws-notes/notes.md, outside this skill, to nothing that is served',
        hint: 'copy what it needs into the skill folder, or fix the path',
      },
      {
        severity: 'warning',
        rule: 'link-unserved-skill',
        file,
        line: 10,
        column: 43,
        message: 'names skill://gws-gone/SKILL.md, which is not served beside it',
        hint: 'serve the skill it names from the same roots, or remove the reference',
      },
    ]);
    expect(cli(['check', '--strict', root]).status).toBe(1);
  });

  it('finds none in sample-skills and the shared corpus', () => {
    const corpus = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills');
    for (const root of [SAMPLE_SKILLS, corpus]) {
      const { diagnostics } = JSON.parse(cli(['check', '--json', root]).stdout) as { diagnostics: { rule: string }[] };
      expect(diagnostics.filter(({ rule }) => rule.startsWith('link-'))).toEqual([]);
    }
  });
});

describe('check: near-duplicate descriptions', () => {
  it('warns once per skill alike an earlier one, naming the most alike, and never of distinct skills', async () => {
    const pdf = 'Summarize PDF documents into key points. Use when the user asks for a summary of a PDF file.';
    const root = await temps.tree({
      'pdf-a/SKILL.md': skillMd('pdf-a', pdf),
      // One word swapped.
      'pdf-b/SKILL.md': skillMd('pdf-b', pdf.replace('documents', 'files')),
      // Reordered clauses, same words: alike too.
      'pdf-c/SKILL.md': skillMd(
        'pdf-c',
        'Use when the user asks for a summary of a PDF file. Summarize PDF documents into key points.',
      ),
      'sheets/SKILL.md': skillMd('sheets', 'Build spreadsheets with formulas and charts. Use for Excel and CSV work.'),
    });
    const run = cli(['check', '--json', root]);
    expect(run.status).toBe(0);
    const found = (JSON.parse(run.stdout) as { diagnostics: Record<string, unknown>[] }).diagnostics;
    expect(
      found.map(({ rule, file, line, message }) => [rule, path.relative(root, file as string), line, message]),
    ).toEqual([
      [
        'description-near-duplicate',
        'pdf-b/SKILL.md',
        3,
        'description is 79% like the description of skill://pdf-a/SKILL.md (word pairs shared): a model choosing between them picks at random',
      ],
      [
        'description-near-duplicate',
        'pdf-c/SKILL.md',
        3,
        'description is 89% like the description of skill://pdf-a/SKILL.md (and 1 more skill listed before it) (word pairs shared): a model choosing between them picks at random',
      ],
    ]);
  });

  it('finds none in sample-skills and the shared corpus, whose most alike pair scores 0.12', () => {
    const corpus = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills');
    for (const root of [SAMPLE_SKILLS, corpus]) {
      const { diagnostics } = JSON.parse(cli(['check', '--json', root]).stdout) as { diagnostics: { rule: string }[] };
      expect(diagnostics.filter(({ rule }) => rule === 'description-near-duplicate')).toEqual([]);
    }
  });
});
