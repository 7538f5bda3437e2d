/**
 * The pure parts of the surfaces for hosts without the Skills extension: the instructions catalog and its bound,
 * prompt names, capability detection, resolving skills and files named by tool calls, and the tool results built
 * from them (with injected reads).
 */
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_CATALOG_MAX } from '../../src/config.js';
import {
  assignPromptNames,
  CATALOG_HEADING,
  catalogLine,
  collapseWhitespace,
  type NamedSkill,
  readSkillDescription,
} from '../../src/hosts/catalog.js';
import { buildSnapshot } from '../../src/index/build.js';
import { findDirectory, listDirectory } from '../../src/index/snapshot.js';
import type { SkillRecord, Snapshot } from '../../src/index/types.js';
import {
  directoryText,
  INSTRUCTIONS,
  relativeFilePaths,
  resolveFile,
  resolveSkill,
  skillFilesText,
} from '../../src/server/compat/catalog.js';
import { SkillSearch } from '../../src/server/compat/search.js';
import {
  binaryContent,
  callCompatTool,
  compatTools,
  stringArgs,
  type ToolDeps,
} from '../../src/server/compat/tools.js';
import { SAMPLE_CATALOG_LINES, SAMPLE_PROMPT_NAMES } from '../helpers/sample.js';
import { FIXTURES_DIR, SAMPLE_SKILLS_DIR } from '../helpers/tree.js';

let sample: Snapshot;
let names: Snapshot;
beforeAll(async () => {
  sample = await buildSnapshot([{ dir: SAMPLE_SKILLS_DIR, prefix: [] }]);
  names = await buildSnapshot([{ dir: path.join(FIXTURES_DIR, 'names'), prefix: [] }]);
});

const BILLING = 'skill://acme/billing/refunds/SKILL.md';
const SUPPORT = 'skill://acme/support/refunds/SKILL.md';

/** A skill with just what the catalog and prompt names read. */
function fakeSkill(
  skillPath: string,
  name = skillPath.split('/').at(-1) as string,
  description = `Does ${name}.`,
): SkillRecord {
  return {
    name,
    description,
    segments: skillPath.split('/'),
    uri: `skill://${skillPath}/SKILL.md`,
  } as unknown as SkillRecord;
}

const SUMMARY =
  "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri when several skills share a name.";

describe('INSTRUCTIONS', () => {
  it('name the tools every connection keeps and no skill, and carry the way to a skill in their first 247 characters', () => {
    expect(INSTRUCTIONS).toBe(
      'Agent Skills for specialised tasks. Before such a task, find a skill with the search_skills tool (a few words from the task) or list_skills, read it with read_skill, and follow its SKILL.md; read the files it names with read_skill_file. Skills your host lists in its own skill list can be loaded from there instead. Your host may show these tools with a prefix (such as mcp__skills__read_skill or skills_read_skill).',
    );
    // Codex CLI shows the model the first 247 characters of a deferred server's instructions.
    expect(INSTRUCTIONS.slice(0, 247)).toContain('read it with read_skill');
  });
});

describe('readSkillDescription', () => {
  it('lists every sample skill on one line, in URI order, names that two skills share with their URI', () => {
    expect(readSkillDescription(sample.ordered, 0, DEFAULT_CATALOG_MAX)).toBe(
      [`${SUMMARY}`, '', CATALOG_HEADING, ...SAMPLE_CATALOG_LINES].join('\n'),
    );
  });

  it('says which skills the host lists itself, and when it lists them all', () => {
    expect(readSkillDescription(sample.ordered.slice(2), 2, DEFAULT_CATALOG_MAX)).toBe(
      [
        `${SUMMARY} The other 2 skills are in your host's own skill list (this tool reads them too).`,
        '',
        CATALOG_HEADING,
        ...SAMPLE_CATALOG_LINES.slice(2),
      ].join('\n'),
    );
    expect(readSkillDescription([], 6, DEFAULT_CATALOG_MAX)).toBe(
      `${SUMMARY} Every skill of this server is in your host's own skill list; this tool reads them too.`,
    );
    expect(readSkillDescription([], 0, DEFAULT_CATALOG_MAX)).toBe(`${SUMMARY} No skills are served right now.`);
  });

  /** 300 skills whose catalog lines are exactly 100 characters long (`- skill-000: ` is 13). */
  const many = Array.from({ length: 300 }, (_, index) =>
    fakeSkill(
      `skill-${String(index).padStart(3, '0')}`,
      undefined,
      `Handles case ${String(index).padStart(3, '0')}.`.padEnd(87, '.'),
    ),
  );
  const tailOf = (shown: number, total = 300) => ` ${total - shown} more: find them with search_skills or list_skills.`;

  it.each([
    // SUMMARY (146) + the longest tail (' 300 more: …', 55) + 2 + heading (27) = 230; each line adds 101.
    [4096, 38],
    [1024, 7],
    [331, 1],
    [330, 0],
  ])('cuts a long catalog to whole lines under %i characters: %i shown, and says how many more', (maxChars, shown) => {
    expect(many.every((skill) => catalogLine(skill, false).length === 100)).toBe(true);
    const text = readSkillDescription(many, 0, maxChars);
    expect(text.length).toBeLessThanOrEqual(maxChars);
    expect(text).toBe(
      shown === 0
        ? `${SUMMARY}${tailOf(0)}`
        : [
            `${SUMMARY}${tailOf(shown)}`,
            '',
            CATALOG_HEADING,
            ...many.slice(0, shown).map((skill) => catalogLine(skill, false)),
          ].join('\n'),
    );
  });

  it('keeps a catalog that fits exactly; one character below, the tail leaves room for 4 of its 5 lines', () => {
    const skills = many.slice(0, 5);
    const whole = readSkillDescription(skills, 0, Number.MAX_SAFE_INTEGER);
    expect(whole).toBe([SUMMARY, '', CATALOG_HEADING, ...skills.map((skill) => catalogLine(skill, false))].join('\n'));
    expect(readSkillDescription(skills, 0, whole.length)).toBe(whole);
    expect(whole.length).toBe(146 + 2 + 27 + 5 * 101);
    // 679 - (146 + 53 + 2 + 27) = 451 characters of room: four 101-character lines.
    expect(readSkillDescription(skills, 0, whole.length - 1)).toBe(
      [
        `${SUMMARY}${tailOf(4, 5)}`,
        '',
        CATALOG_HEADING,
        ...skills.slice(0, 4).map((skill) => catalogLine(skill, false)),
      ].join('\n'),
    );
  });

  it.each([
    ['a\n  b\r\n\tc \n', 'a b c'],
    ['  one  ', 'one'],
    ['', ''],
  ])('collapses whitespace in %j', (input, expected) => {
    expect(collapseWhitespace(input)).toBe(expected);
    expect(catalogLine({ name: 'n', description: input, uri: 'skill://n/SKILL.md' } satisfies NamedSkill, false)).toBe(
      `- n: ${expected}`,
    );
    expect(catalogLine({ name: 'n', description: input, uri: 'skill://n/SKILL.md' } satisfies NamedSkill, true)).toBe(
      `- n (skill://n/SKILL.md): ${expected}`,
    );
  });
});

describe('assignPromptNames', () => {
  it.each([
    ['unique names stay as they are', ['a', 'b/c'], ['a', 'c']],
    [
      'shared names become the skill path',
      ['acme/billing/refunds', 'acme/support/refunds'],
      ['acme-billing-refunds', 'acme-support-refunds'],
    ],
    ['a top-level duplicate becomes its own path', ['refunds', 'acme/refunds'], ['refunds', 'acme-refunds']],
    ['a derived name taken by a unique name gets -2', ['a-x', 'a/x', 'b/x'], ['a-x', 'a-x-2', 'b-x']],
    ['two derived names that collide: the later one gets -2', ['a-b/c/x', 'a/b-c/x'], ['a-b-c-x', 'a-b-c-x-2']],
    ['odd characters in a prefix become -', ['Acme Corp/x', 'other/x'], ['Acme-Corp-x', 'other-x']],
    ['-2 itself taken: -3', ['a-x', 'a-x-2', 'a/x', 'b/a/x'], ['a-x', 'a-x-2', 'a-x-3', 'b-a-x']],
  ])('%s', (_label, paths, expected) => {
    const skills = paths.map((skillPath) => fakeSkill(skillPath, skillPath === 'a-x-2' ? 'a-x-2' : undefined));
    const slots = assignPromptNames(skills);
    expect(slots.map((slot) => slot.name)).toEqual(expected);
    expect(slots.map((slot) => slot.skill)).toEqual(skills);
    expect(new Set(expected).size).toBe(expected.length);
  });

  it('names the sample prompts', () => {
    expect(assignPromptNames(sample.ordered).map((slot) => slot.name)).toEqual(SAMPLE_PROMPT_NAMES);
  });
});

describe('resolveSkill', () => {
  const found = (ref: { name?: string; uri?: string }) => {
    const lookup = resolveSkill(sample, ref);
    return lookup.kind === 'found' ? lookup.skill.uri : lookup.message;
  };

  it.each([
    [{ name: 'pdf-summaries' }, 'skill://pdf-summaries/SKILL.md'],
    [{ name: 'csv-cleaning' }, 'skill://data-pipeline/csv-cleaning/SKILL.md'],
    [{ uri: BILLING }, BILLING],
    [{ uri: 'skill://acme/support/refunds' }, SUPPORT],
    [{ uri: 'skill://%61cme/support/refunds/SKILL%2Emd' }, SUPPORT],
    [{ uri: SUPPORT, name: 'pdf-summaries' }, SUPPORT],
  ])('%j → %s', (ref, uri) => {
    expect(found(ref)).toBe(uri);
  });

  it.each([
    [
      { name: 'refunds' },
      `2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`,
    ],
    [{ name: 'nope' }, 'No served skill is named "nope". Call the list_skills tool to see the available skills.'],
    [{ name: '' }, 'No served skill is named "". Call the list_skills tool to see the available skills.'],
    [
      { uri: 'skill://acme' },
      'No served skill has the URI skill://acme. Call the list_skills tool to see the available skills.',
    ],
    [
      { uri: 'skill://report-writer/templates/report.md' },
      'No served skill has the URI skill://report-writer/templates/report.md. Call the list_skills tool to see the available skills.',
    ],
    [
      { uri: 'file:///etc/passwd' },
      'No served skill has the URI file:///etc/passwd. Call the list_skills tool to see the available skills.',
    ],
    [
      { uri: 'skill://report-writer/../pdf-summaries/SKILL.md' },
      'No served skill has the URI skill://report-writer/../pdf-summaries/SKILL.md. Call the list_skills tool to see the available skills.',
    ],
    [{}, "Give the skill's name, or its uri when several skills share a name."],
  ])('%j is refused', (ref, message) => {
    expect(resolveSkill(sample, ref)).toEqual({ kind: 'error', message });
  });
});

describe('resolveFile', () => {
  const uriOf = (snapshot: Snapshot, ref: { uri?: string; skill?: string; path?: string }) => {
    const lookup = resolveFile(snapshot, ref);
    if (lookup.kind === 'file') return lookup.file.uri;
    return lookup.kind === 'directory' ? `dir ${lookup.uri}` : lookup.message;
  };

  it.each([
    [{ uri: 'skill://acme/billing/refunds/references/policy.md' }, 'skill://acme/billing/refunds/references/policy.md'],
    [{ uri: 'skill://report-writer/templates' }, 'dir skill://report-writer/templates'],
    [
      { skill: 'report-writer', path: 'templates/sections/executive-summary.md' },
      'skill://report-writer/templates/sections/executive-summary.md',
    ],
    [{ skill: 'report-writer', path: './templates//report.md' }, 'skill://report-writer/templates/report.md'],
    [{ skill: 'report-writer', path: '/assets/logo.png' }, 'skill://report-writer/assets/logo.png'],
    [{ skill: 'report-writer', path: '' }, 'dir skill://report-writer'],
    [{ skill: 'data-pipeline', path: 'csv-cleaning/SKILL.md' }, 'skill://data-pipeline/csv-cleaning/SKILL.md'],
    [{ skill: BILLING, path: 'references/policy.md' }, 'skill://acme/billing/refunds/references/policy.md'],
    [{ skill: 'skill://acme/billing/refunds', path: 'SKILL.md' }, BILLING],
    [{ uri: 'skill://pdf-summaries/SKILL.md', skill: 'nope', path: 'x' }, 'skill://pdf-summaries/SKILL.md'],
  ])('%j → %s', (ref, expected) => {
    expect(uriOf(sample, ref)).toBe(expected);
  });

  it.each([
    ['file with spaces.md', 'skill://odd-names/file%20with%20spaces.md'],
    ['file%20with%20spaces.md', 'skill://odd-names/file%20with%20spaces.md'],
    ['100%.md', 'skill://odd-names/100%25.md'],
    ['what?.md', 'skill://odd-names/what%3F.md'],
    ['sub dir/inner #1.md', 'skill://odd-names/sub%20dir/inner%20%231.md'],
    ['café.md', 'skill://odd-names/caf%C3%A9.md'],
  ])('finds %j by path, as on disk or percent-encoded', (rel, expected) => {
    expect(uriOf(names, { skill: 'odd-names', path: rel })).toBe(expected);
  });

  it.each([
    [
      { skill: 'refunds', path: 'references/policy.md' },
      `2 skills are named "refunds"; call again with the uri of the one you mean:\n- ${BILLING}\n- ${SUPPORT}`,
    ],
    [
      { skill: 'report-writer', path: '../pdf-summaries/SKILL.md' },
      'path "../pdf-summaries/SKILL.md" must stay inside the skill: ".." is not allowed.',
    ],
    [
      { skill: 'report-writer', path: 'nope.md' },
      'The skill at skill://report-writer/SKILL.md has no file "nope.md". Its files: assets/logo.png, references/citation-formats.md, references/style-guide.md, templates/report.md, templates/sections/executive-summary.md.',
    ],
    [
      { skill: 'pdf-summaries', path: 'x.md' },
      'The skill at skill://pdf-summaries/SKILL.md has no file "x.md". It has no files besides SKILL.md.',
    ],
    [
      { uri: 'skill://report-writer/nope.md' },
      "No served file has the URI skill://report-writer/nope.md. Call read_skill to see a skill's files.",
    ],
    [
      { uri: 'https://example.com/x' },
      "No served file has the URI https://example.com/x. Call read_skill to see a skill's files.",
    ],
    [
      { skill: 'report-writer' },
      "Give the file's uri, or skill (its name or uri) and path (relative to the skill's directory).",
    ],
    [
      { path: 'SKILL.md' },
      "Give the file's uri, or skill (its name or uri) and path (relative to the skill's directory).",
    ],
  ])('%j is refused', (ref, message) => {
    expect(resolveFile(sample, ref)).toEqual({ kind: 'error', message });
  });
});

describe('file listings', () => {
  const skill = (uri: string) => sample.skills.get(uri) as SkillRecord;

  it("lists a skill's other files relative to it, nested skills' files included", () => {
    expect(relativeFilePaths(skill('skill://data-pipeline/SKILL.md'))).toEqual([
      'csv-cleaning/SKILL.md',
      'csv-cleaning/references/encodings.md',
      'scripts/validate.py',
    ]);
    expect(relativeFilePaths(skill('skill://pdf-summaries/SKILL.md'))).toEqual([]);
    expect(skillFilesText(skill(BILLING), 500)).toBe(
      `Skill "refunds" at ${BILLING}. Its other files, relative to skill://acme/billing/refunds/ (read one with read_skill_file: uri, or skill and path):\n- references/policy.md`,
    );
    expect(skillFilesText(skill('skill://pdf-summaries/SKILL.md'), 10_000)).toBe(
      'Skill "pdf-summaries" at skill://pdf-summaries/SKILL.md. It has no other files.',
    );
    // A SKILL.md that hosts may cut (over 10,000 characters) says how to read it in parts.
    expect(skillFilesText(skill('skill://pdf-summaries/SKILL.md'), 10_001)).toBe(
      'Skill "pdf-summaries" at skill://pdf-summaries/SKILL.md. Its SKILL.md (10001 characters) follows; if you see only part of it, read the rest with read_skill_file (uri skill://pdf-summaries/SKILL.md, offset and length in characters). It has no other files.',
    );
  });

  it('lists a directory with a trailing / on subdirectories', () => {
    const directory = findDirectory(sample, 'skill://report-writer/templates');
    expect(directory).toBeDefined();
    const children = directory === undefined ? [] : listDirectory(directory);
    expect(directoryText('skill://report-writer/templates', children)).toBe(
      'skill://report-writer/templates is a directory. Its entries (read one with read_skill_file):\n- report.md\n- sections/',
    );
  });
});

/** A search index over the sample skills. */
const sampleSearch = new SkillSearch();

describe('tool arguments and results', () => {
  it.each([
    [undefined, {}],
    [null, {}],
    [{ name: 'a', other: 1 }, { name: 'a' }],
    [{ name: null, uri: 'skill://a/SKILL.md' }, { uri: 'skill://a/SKILL.md' }],
    [{ name: 3 }, 'argument "name" must be a string'],
    [['a'], 'arguments must be an object'],
    ['a', 'arguments must be an object'],
  ])('stringArgs(%j)', (args, expected) => {
    expect(stringArgs(args, ['name', 'uri'])).toEqual(expected);
  });

  it('sends images as image blocks and other bytes as an embedded blob', () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    expect(binaryContent('skill://a/x.png', bytes, 'image/png')).toEqual([
      { type: 'text', text: 'skill://a/x.png is an image (image/png, 4 bytes).' },
      { type: 'image', data: 'AAEC/w==', mimeType: 'image/png' },
    ]);
    expect(binaryContent('skill://a/x.bin', bytes.subarray(1), 'application/octet-stream')).toEqual([
      {
        type: 'text',
        text: 'skill://a/x.bin is a binary file (application/octet-stream, 3 bytes); its bytes follow as a base64 blob.',
      },
      { type: 'resource', resource: { uri: 'skill://a/x.bin', mimeType: 'application/octet-stream', blob: 'AQL/' } },
    ]);
  });

  const deps = (
    read: ToolDeps['read'] = async (uri) => ({ text: `text of ${uri}`, mimeType: 'text/markdown' }),
  ): ToolDeps & { unexpected: unknown[] } => {
    const unexpected: unknown[] = [];
    return {
      snapshot: async () => sample,
      read,
      pageSize: 4,
      search: sampleSearch,
      onUnexpected: (error) => unexpected.push(error),
      unexpected,
    };
  };

  it('offers four read-only tools and nothing else', async () => {
    expect(compatTools('').map((tool) => tool.name)).toEqual([
      'list_skills',
      'search_skills',
      'read_skill',
      'read_skill_file',
    ]);
    for (const tool of compatTools(''))
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(await callCompatTool('write_skill', {}, deps())).toBeUndefined();
  });

  it('pages list_skills with the skills/list cursors and refuses a foreign cursor as a tool error', async () => {
    const first = await callCompatTool('list_skills', {}, deps());
    const page = first?.structuredContent as { skills: { uri: string }[]; nextCursor?: string };
    expect(page.skills.map((skill) => skill.uri)).toEqual(sample.ordered.slice(0, 4).map((skill) => skill.uri));
    expect(JSON.parse((first?.content[0] as { text: string }).text)).toEqual(page);
    const second = await callCompatTool('list_skills', { cursor: page.nextCursor }, deps());
    expect((second?.structuredContent as { skills: unknown[]; nextCursor?: string }).skills).toHaveLength(2);
    expect((second?.structuredContent as { nextCursor?: string }).nextCursor).toBeUndefined();
    expect(await callCompatTool('list_skills', { cursor: 'bogus' }, deps())).toEqual({
      content: [
        {
          type: 'text',
          text: 'Invalid cursor: it was not issued by this server; call list_skills without a cursor to start over.',
        },
      ],
      isError: true,
    });
  });

  it('turns read failures into tool errors without host paths', async () => {
    const gone = await callCompatTool(
      'read_skill',
      { name: 'pdf-summaries' },
      deps(async () => undefined),
    );
    expect(gone).toEqual({
      content: [
        {
          type: 'text',
          text: 'skill://pdf-summaries/SKILL.md is no longer served. Call list_skills to see the available skills.',
        },
      ],
      isError: true,
    });
    const failing = deps(async () => {
      throw new Error('EIO at /secret/host/path');
    });
    expect(
      await callCompatTool('read_skill_file', { skill: 'report-writer', path: 'templates/report.md' }, failing),
    ).toEqual({
      content: [{ type: 'text', text: 'skill://report-writer/templates/report.md could not be read' }],
      isError: true,
    });
    expect(failing.unexpected).toHaveLength(1);
    expect(await callCompatTool('read_skill', { uri: 7 }, deps())).toEqual({
      content: [{ type: 'text', text: 'argument "uri" must be a string' }],
      isError: true,
    });
  });
});
