/**
 * `skills-serve manifest` over the built CLI: the printed `{ "skills": [...] }` is exactly what a host gets from
 * `skills/list` over stdio (SkillsClient, every page, also at `--page-size 1`), stable byte for byte; `manifest` takes
 * no `--page-size` (it prints every entry, so the flag would do nothing); and
 * `manifest --check FILE` matches an unchanged tree and reports every kind of change with exact summary lines.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { diskCatalog } from '../helpers/disk.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, ERAS, FIXTURES, REPO, SAMPLE_SKILLS } from '../helpers/server.js';
import { skillMd, tempTrees, type TreeEntry } from '../helpers/tree.js';

interface Resource {
  uri: string;
  digest: string;
  size: number;
}
interface Entry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: Resource[];
}

function manifestOf(args: readonly string[], cwd = REPO): { skills: Entry[] } {
  const run = cli(['manifest', ...args], cwd);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as { skills: Entry[] };
}

const temps = tempTrees();
const { tree, tempDir } = temps;
let connection: Connection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await temps.removeAll();
});

describe('manifest: what a host lists', () => {
  it.each([ERAS[1], ERAS[2]])('sample-skills: deep-equal to SkillsClient.list() over stdio ($label)', async (era) => {
    const run = cli(['manifest', 'sample-skills']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    const manifest = JSON.parse(run.stdout) as { skills: Entry[] };
    expect(Object.keys(manifest)).toEqual(['skills']);
    expect(run.stdout).toBe(`${JSON.stringify(manifest, null, 2)}\n`);

    connection = await connect([SAMPLE_SKILLS], era);
    const listing = await connection.skills.list();
    expect(listing.invalid).toEqual([]);
    expect(manifest.skills).toStrictEqual(JSON.parse(JSON.stringify(listing.skills)));
    // And against a host that walks one entry per page.
    await connection.close();
    connection = await connect(['--page-size', '1', SAMPLE_SKILLS], era);
    expect(manifest.skills).toStrictEqual(JSON.parse(JSON.stringify((await connection.skills.list()).skills)));
  });

  it('sample-skills: every resource row is the file on disk (digest, size), and SKILL.md is listed', () => {
    const { skills } = manifestOf(['sample-skills']);
    expect(skills.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
    expect(skills.map(({ uri, resources }) => ({ uri, resources }))).toStrictEqual(diskCatalog(SAMPLE_SKILLS));
  });

  it.each([
    ['encoding', [path.join(FIXTURES, 'encoding')]],
    ['names', [path.join(FIXTURES, 'names')]],
    ['nested', [path.join(FIXTURES, 'nested')]],
    ['root-skill', [path.join(FIXTURES, 'root-skill')]],
    ['invalid (good only)', [path.join(FIXTURES, 'invalid')]],
    ['two roots with a prefix', [path.join(FIXTURES, 'nested'), `acme/billing=${SAMPLE_SKILLS}`]],
  ])('%s: deep-equal to SkillsClient.list() over stdio', async (_label, roots) => {
    const manifest = JSON.parse(cli(['manifest', ...roots]).stdout) as { skills: Entry[] };
    connection = await connect(roots, ERAS[2]);
    const listing = await connection.skills.list();
    expect(listing.invalid).toEqual([]);
    expect(manifest.skills.length).toBeGreaterThan(0);
    expect(manifest.skills).toStrictEqual(JSON.parse(JSON.stringify(listing.skills)));
  });

  it("is byte-identical run after run; serve's SKILLS_SERVE_PAGE_SIZE=1 in the environment changes nothing", () => {
    const first = cli(['manifest', 'sample-skills']).stdout;
    expect(cli(['manifest', 'sample-skills']).stdout).toBe(first);
    expect(cli(['manifest', 'sample-skills'], REPO, { SKILLS_SERVE_PAGE_SIZE: '1' })).toEqual({
      status: 0,
      stdout: first,
      stderr: '',
    });
  });

  it('takes no --page-size: it prints every entry, so the flag would do nothing', () => {
    expect(cli(['manifest', '--page-size', '1', 'sample-skills'])).toEqual({
      status: 2,
      stdout: '',
      stderr: "error: unknown option '--page-size'\n(run skills-serve --help for usage)\n",
    });
  });

  it('an empty root prints { "skills": [] }', async () => {
    const root = await tempDir();
    expect(cli(['manifest', root])).toEqual({ status: 0, stdout: '{\n  "skills": []\n}\n', stderr: '' });
  });

  it('a missing root → exit 1 naming its absolute path; a usage error → exit 2', async () => {
    const cwd = await tempDir();
    expect(cli(['manifest', 'gone'], cwd)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skills-serve: skills root ${path.join(cwd, 'gone')} cannot be used (it does not exist)\n`,
    });
    expect(cli(['manifest', '--check'], cwd)).toEqual({
      status: 2,
      stdout: '',
      stderr: "error: option '--check <file>' argument missing\n(run skills-serve --help for usage)\n",
    });
  });
});

/** The tree every --check scenario starts from: two skills, one with a nested skill. */
const BASE: Record<string, TreeEntry> = {
  'alpha/SKILL.md': skillMd('alpha', 'The alpha skill.', 'license: MIT'),
  'alpha/notes.md': 'alpha notes\n',
  'alpha/references/guide.md': '# Guide\n',
  'beta/SKILL.md': skillMd('beta', 'The beta skill.'),
  'beta/inner/SKILL.md': skillMd('inner', 'Nested in beta.'),
  'beta/inner/data.txt': 'inner data\n',
};

describe('manifest --check', () => {
  /** A fresh copy of BASE, and its manifest saved outside the tree. */
  async function saved(): Promise<{ root: string; file: string }> {
    const root = await tree(BASE);
    const file = path.join(await tempDir(), 'skills.manifest.json');
    const run = cli(['manifest', '.'], root);
    expect(run.status).toBe(0);
    await fsp.writeFile(file, run.stdout);
    return { root, file };
  }

  it('unchanged tree → exit 0 "manifest matches: N skill(s)"', async () => {
    const { root, file } = await saved();
    expect(cli(['manifest', '.', '--check', file], root)).toEqual({
      status: 0,
      stdout: 'manifest matches: 3 skill(s)\n',
      stderr: '',
    });
    // Options before the root, and a re-indented saved file, match too.
    expect(cli(['manifest', '--check', file, '.'], root).stdout).toBe('manifest matches: 3 skill(s)\n');
    await fsp.writeFile(file, JSON.stringify(JSON.parse(await fsp.readFile(file, 'utf8'))));
    expect(cli(['manifest', '.', '--check', file], root).status).toBe(0);
  });

  it('a touched file with identical bytes still matches', async () => {
    const { root, file } = await saved();
    const notes = path.join(root, 'alpha', 'notes.md');
    await fsp.writeFile(notes, 'alpha notes\n');
    const later = new Date(Date.now() + 60_000);
    await fsp.utimes(notes, later, later);
    expect(cli(['manifest', '.', '--check', file], root)).toEqual({
      status: 0,
      stdout: 'manifest matches: 3 skill(s)\n',
      stderr: '',
    });
  });

  const SCENARIOS: { name: string; change: (root: string) => Promise<void>; summary: string[] }[] = [
    {
      name: 'editing a file (same size, new bytes)',
      change: (root) => fsp.writeFile(path.join(root, 'alpha', 'notes.md'), 'ALPHA NOTES\n'),
      summary: [
        '~ skill://alpha/SKILL.md: 1 file(s) changed',
        '    ~ skill://alpha/notes.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'editing a file (new size)',
      change: (root) => fsp.appendFile(path.join(root, 'alpha', 'references', 'guide.md'), 'More.\n'),
      summary: [
        '~ skill://alpha/SKILL.md: 1 file(s) changed',
        '    ~ skill://alpha/references/guide.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'adding a file',
      change: (root) => fsp.writeFile(path.join(root, 'alpha', 'references', 'new.md'), 'new\n'),
      summary: [
        '~ skill://alpha/SKILL.md: 1 file(s) added',
        '    + skill://alpha/references/new.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'removing a file',
      change: (root) => fsp.rm(path.join(root, 'alpha', 'notes.md')),
      summary: [
        '~ skill://alpha/SKILL.md: 1 file(s) removed',
        '    - skill://alpha/notes.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'renaming a file',
      change: (root) => fsp.rename(path.join(root, 'alpha', 'notes.md'), path.join(root, 'alpha', 'notes 2.md')),
      summary: [
        '~ skill://alpha/SKILL.md: 1 file(s) added, 1 file(s) removed',
        '    + skill://alpha/notes%202.md',
        '    - skill://alpha/notes.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'adding a file inside a nested skill (both enclosing skills change)',
      change: (root) => fsp.writeFile(path.join(root, 'beta', 'inner', 'more.txt'), 'more\n'),
      summary: [
        '~ skill://beta/SKILL.md: 1 file(s) added',
        '    + skill://beta/inner/more.txt',
        '~ skill://beta/inner/SKILL.md: 1 file(s) added',
        '    + skill://beta/inner/more.txt',
        '2 skill(s) differ: 0 added, 0 removed, 0 left out, 2 changed',
      ],
    },
    {
      name: 'adding a skill',
      change: async (root) => {
        await fsp.mkdir(path.join(root, 'acme', 'gamma'), { recursive: true });
        await fsp.writeFile(path.join(root, 'acme', 'gamma', 'SKILL.md'), skillMd('gamma', 'New.'));
      },
      summary: [
        '+ skill://acme/gamma/SKILL.md (skill added)',
        '1 skill(s) differ: 1 added, 0 removed, 0 left out, 0 changed',
      ],
    },
    {
      name: 'removing a skill',
      change: (root) => fsp.rm(path.join(root, 'alpha'), { recursive: true }),
      summary: [
        '- skill://alpha/SKILL.md (skill removed)',
        '1 skill(s) differ: 0 added, 1 removed, 0 left out, 0 changed',
      ],
    },
    {
      name: 'breaking a skill (it is left out, with the reason check gives)',
      change: (root) => fsp.writeFile(path.join(root, 'alpha', 'SKILL.md'), '# no frontmatter\n'),
      summary: [
        '- skill://alpha/SKILL.md (left out: SKILL.md frontmatter: line 1: SKILL.md must begin with a "---" line [frontmatter-missing])',
        '1 skill(s) differ: 0 added, 0 removed, 1 left out, 0 changed',
      ],
    },
    {
      name: 'removing a nested skill (its files stay in the outer skill)',
      change: (root) => fsp.rm(path.join(root, 'beta', 'inner', 'SKILL.md')),
      summary: [
        '- skill://beta/inner/SKILL.md (skill removed)',
        '~ skill://beta/SKILL.md: 1 file(s) removed',
        '    - skill://beta/inner/SKILL.md',
        '2 skill(s) differ: 0 added, 1 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'changing frontmatter (description and license)',
      change: (root) =>
        fsp.writeFile(
          path.join(root, 'alpha', 'SKILL.md'),
          skillMd('alpha', 'The alpha skill, revised.', 'license: Apache-2.0'),
        ),
      summary: [
        '~ skill://alpha/SKILL.md: frontmatter changed (description, license), 1 file(s) changed',
        '    ~ skill://alpha/SKILL.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'adding a frontmatter key (metadata)',
      change: (root) =>
        fsp.writeFile(
          path.join(root, 'beta', 'SKILL.md'),
          skillMd('beta', 'The beta skill.', 'metadata:\n  owner: ops'),
        ),
      summary: [
        '~ skill://beta/SKILL.md: frontmatter changed (metadata), 1 file(s) changed',
        '    ~ skill://beta/SKILL.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
      ],
    },
    {
      name: 'several changes at once',
      change: async (root) => {
        await fsp.rm(path.join(root, 'beta'), { recursive: true });
        await fsp.mkdir(path.join(root, 'delta'));
        await fsp.writeFile(path.join(root, 'delta', 'SKILL.md'), skillMd('delta', 'D.'));
        await fsp.writeFile(path.join(root, 'alpha', 'SKILL.md'), skillMd('alpha', 'The alpha skill.'));
        await fsp.rm(path.join(root, 'alpha', 'notes.md'));
        await fsp.writeFile(path.join(root, 'alpha', 'a.md'), 'a\n');
      },
      summary: [
        '+ skill://delta/SKILL.md (skill added)',
        '- skill://beta/SKILL.md (skill removed)',
        '- skill://beta/inner/SKILL.md (skill removed)',
        '~ skill://alpha/SKILL.md: frontmatter changed (license), 1 file(s) added, 1 file(s) removed, 1 file(s) changed',
        '    + skill://alpha/a.md',
        '    - skill://alpha/notes.md',
        '    ~ skill://alpha/SKILL.md',
        '4 skill(s) differ: 1 added, 2 removed, 0 left out, 1 changed',
      ],
    },
  ];

  it.each(SCENARIOS)('$name → exit 1 with the exact summary', async ({ name, change, summary }) => {
    const { root, file } = await saved();
    await change(root);
    expect(cli(['manifest', '.', '--check', file], root)).toEqual({
      status: 1,
      stdout: `the tree no longer matches ${file}:\n${summary.join('\n')}\n`,
      // A skill broken (rather than removed) is left out, and the manifest says so.
      stderr: name.startsWith('breaking')
        ? 'skills-serve: 1 skill(s) left out of the manifest; run skills-serve check to see why\n'
        : '',
    });
  });

  it('the file name is shown as given (relative)', async () => {
    const { root, file } = await saved();
    await fsp.rm(path.join(root, 'alpha', 'notes.md'));
    const run = cli(['manifest', root, '--check', path.basename(file)], path.dirname(file));
    expect(run.stdout.split('\n')[0]).toBe(`the tree no longer matches ${path.basename(file)}:`);
    expect(run.status).toBe(1);
  });

  it('a missing saved file → exit 2, a clear message on stderr, nothing on stdout', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'missing.json');
    expect(cli(['manifest', SAMPLE_SKILLS, '--check', file], dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: `skills-serve: cannot read manifest ${file}: ENOENT: no such file or directory, open '${file}'\n`,
    });
  });

  it('a directory as the saved file → exit 2 with a clear message', async () => {
    const dir = await tempDir();
    expect(cli(['manifest', SAMPLE_SKILLS, '--check', dir], dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: `skills-serve: --check takes the saved manifest file, and ${dir} is a folder\n`,
    });
  });

  it('--check and the root swapped → exit 2 naming both and the command that was meant', async () => {
    const { root, file } = await saved();
    const dir = path.dirname(file);
    expect(cli(['manifest', '--check', root, path.basename(file)], dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: `skills-serve: --check takes the saved manifest file, and ${root} is a folder while skills.manifest.json is a file: did you mean manifest ${root} --check skills.manifest.json?\n`,
    });
    expect(cli(['manifest', '--json', '.'], root)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'skills-serve: --json goes with --check FILE (manifest prints JSON anyway)\n',
    });
  });

  it('--json: one document with every kind of difference, exit 1; exit 0 and matches: true when none', async () => {
    const { root, file } = await saved();
    expect(JSON.parse(cli(['manifest', '.', '--check', file, '--json'], root).stdout)).toEqual({
      matches: true,
      added: [],
      removed: [],
      leftOut: [],
      changed: [],
      summary: { added: 0, removed: 0, leftOut: 0, changed: 0 },
    });
    await fsp.writeFile(path.join(root, 'alpha', 'SKILL.md'), '---\nname: alpha\n---\n');
    await fsp.appendFile(path.join(root, 'beta', 'inner', 'more.txt'), 'more\n');
    const run = cli(['manifest', '.', '--check', file, '--json'], root);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('skills-serve: 1 skill(s) left out of the manifest; run skills-serve check to see why\n');
    expect(JSON.parse(run.stdout)).toEqual({
      matches: false,
      added: [],
      removed: [],
      leftOut: [
        {
          uri: 'skill://alpha/SKILL.md',
          rule: 'required-fields',
          reason: 'SKILL.md frontmatter must contain string "name" and "description": "description" is not a string',
        },
      ],
      changed: ['skill://beta/SKILL.md', 'skill://beta/inner/SKILL.md'].map((uri) => ({
        uri,
        frontmatter: [],
        filesAdded: ['skill://beta/inner/more.txt'],
        filesRemoved: [],
        filesChanged: [],
        meta: [],
      })),
      summary: { added: 0, removed: 0, leftOut: 1, changed: 2 },
    });
  });

  it('a file that is not JSON → exit 2 naming the file and the JSON error', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'm.json');
    await fsp.writeFile(file, 'skills: []\n');
    const run = cli(['manifest', SAMPLE_SKILLS, '--check', file], dir);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.startsWith(`skills-serve: cannot read manifest ${file}: `)).toBe(true);
    expect(run.stderr).toMatch(/JSON/u);
    expect(run.stderr.endsWith('\n')).toBe(true);
  });

  const NOT_A_MANIFEST = 'not a skills-serve manifest ({ "skills": [ … ] })';

  it.each([
    ['an object without skills', '{"entries": []}'],
    ['null', 'null'],
    ['an array', '[]'],
    ['skills not an array', '{"skills": {}}'],
    ['an entry without uri', '{"skills": [{"frontmatter": {}, "resources": []}]}'],
    [
      'an entry with null frontmatter',
      '{"skills": [{"uri": "skill://a/SKILL.md", "frontmatter": null, "resources": []}]}',
    ],
    [
      'an entry with resources neither a list nor "dynamic"',
      '{"skills": [{"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": "all"}]}',
    ],
  ])('JSON that is not a manifest (%s) → exit 2 with a clear message', async (_label, text) => {
    const dir = await tempDir();
    const file = path.join(dir, 'm.json');
    await fsp.writeFile(file, text);
    expect(cli(['manifest', SAMPLE_SKILLS, '--check', file], dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: `skills-serve: cannot read manifest ${file}: ${NOT_A_MANIFEST}\n`,
    });
  });

  // parseManifest checks entries only shallowly: `resources` must be an array, but its rows are not checked. A row
  // that is not a { uri, digest, size } object then crashes the diff ("Cannot read properties of null") or prints
  // "undefined" URIs, instead of the "not a skills-serve manifest" message.
  it.each([
    ['a null resource row', '{"skills": [{"uri": "skill://alpha/SKILL.md", "frontmatter": {}, "resources": [null]}]}'],
    [
      'a string resource row',
      '{"skills": [{"uri": "skill://alpha/SKILL.md", "frontmatter": {}, "resources": ["skill://alpha/SKILL.md"]}]}',
    ],
  ])('a manifest with %s → exit 2 with the "not a manifest" message', async (_label, text) => {
    const root = await tree(BASE);
    const dir = await tempDir();
    const file = path.join(dir, 'm.json');
    await fsp.writeFile(file, text);
    expect(cli(['manifest', root, '--check', file], dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: `skills-serve: cannot read manifest ${file}: ${NOT_A_MANIFEST}\n`,
    });
  });

  it('a manifest saved from another tree → every skill added and removed', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'm.json');
    await fsp.writeFile(file, cli(['manifest', path.join(FIXTURES, 'nested')]).stdout);
    const root = await tree({ 'solo/SKILL.md': skillMd('solo', 'Alone.') });
    expect(cli(['manifest', root, '--check', file], dir)).toEqual({
      status: 1,
      stderr: '',
      stdout: [
        `the tree no longer matches ${file}:`,
        '+ skill://solo/SKILL.md (skill added)',
        '- skill://outer/SKILL.md (skill removed)',
        '- skill://outer/inner/SKILL.md (skill removed)',
        '- skill://outer/inner/deepest/SKILL.md (skill removed)',
        '4 skill(s) differ: 1 added, 3 removed, 0 left out, 0 changed',
        '',
      ].join('\n'),
    });
  });
});
