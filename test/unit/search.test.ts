/**
 * `search_skills`: the headings a search matches, how terms are normalised, the exact rankings over the sample
 * skills, the tool's arguments, and the index following catalog changes (skills added, removed, re-described, and a
 * `SKILL.md` whose headings changed).
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildSnapshot } from '../../src/index/build.js';
import { headingsOf, splitSkillMd } from '../../src/index/frontmatter.js';
import type { Snapshot } from '../../src/index/types.js';
import { searchTerm, SkillSearch } from '../../src/server/compat/search.js';
import { searchArgs } from '../../src/server/compat/tools.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { SAMPLE_SKILLS_DIR } from '../helpers/tree.js';

const BILLING = 'skill://acme/billing/refunds/SKILL.md';
const SUPPORT = 'skill://acme/support/refunds/SKILL.md';
const PIPELINE = 'skill://data-pipeline/SKILL.md';
const CSV = 'skill://data-pipeline/csv-cleaning/SKILL.md';
const PDF = 'skill://pdf-summaries/SKILL.md';
const REPORT = 'skill://report-writer/SKILL.md';

/** The headings of a whole `SKILL.md` text, as the index keeps them for its record. */
const skillHeadings = (text: string): string[] => {
  const body = splitSkillMd(text)?.body ?? text;
  const headings = headingsOf(body);
  return headings === '' ? [] : headings.split('\n');
};

describe('headingsOf', () => {
  it('lists ATX headings in order, skipping frontmatter and fenced code', () => {
    const text = [
      '---',
      'name: x',
      'description: "# not a heading"',
      '---',
      '# Title',
      'text',
      '## Steps ##',
      '```sh',
      '# a shell comment',
      '```',
      '~~~~',
      '## inside a tilde fence',
      '~~~',
      '## still inside (the closing fence is too short)',
      '~~~~',
      '   ### Indented three spaces',
      '    #### four spaces is code',
      '#hashtag',
      '######  Six  ',
      '#',
    ].join('\n');
    expect(skillHeadings(text)).toEqual(['Title', 'Steps', 'Indented three spaces', 'Six']);
  });

  it('reads the sample skills', () => {
    expect(skillHeadings(readFileSync(path.join(SAMPLE_SKILLS_DIR, 'acme/support/refunds/SKILL.md'), 'utf8'))).toEqual([
      'Refunds (support)',
      'Steps',
      'Tone',
      'Reply template',
    ]);
    expect(skillHeadings('no frontmatter\r\n# Windows line ends\r\n')).toEqual(['Windows line ends']);
  });
});

describe('searchTerm', () => {
  it.each([
    ['Refunds', 'refund'],
    ['refund', 'refund'],
    ['PDF', 'pdf'],
    ['process', 'process'],
    ['analysis', 'analysis'],
    ['status', 'status'],
    ['css', 'css'],
    ['the', null],
    ['When', null],
    ['', null],
  ])('%j → %j', (term, expected) => {
    expect(searchTerm(term)).toBe(expected);
  });
});

describe('searchArgs', () => {
  it.each([
    [{ query: 'pdf' }, { query: 'pdf', limit: 10 }],
    [
      { query: 'pdf', limit: 3 },
      { query: 'pdf', limit: 3 },
    ],
    [
      { query: 'pdf', limit: null },
      { query: 'pdf', limit: 10 },
    ],
    [{}, 'argument "query" is required: a few words describing the task'],
    [undefined, 'argument "query" is required: a few words describing the task'],
    [{ query: 7 }, 'argument "query" must be a string'],
    [
      { query: 'x'.repeat(1001) },
      'query is 1001 characters long; give a few words describing the task (at most 1000 characters)',
    ],
    [{ query: 'x'.repeat(1000) }, { query: 'x'.repeat(1000), limit: 10 }],
    [
      { query: 'the and of ?!' },
      'query "the and of ?!" has no word to search for; give a few words describing the task',
    ],
    [{ query: 'pdf', limit: 0 }, 'argument "limit" must be an integer from 1 to 50'],
    [{ query: 'pdf', limit: 51 }, 'argument "limit" must be an integer from 1 to 50'],
    [{ query: 'pdf', limit: 2.5 }, 'argument "limit" must be an integer from 1 to 50'],
    [{ query: 'pdf', limit: '3' }, 'argument "limit" must be an integer from 1 to 50'],
    [['pdf'], 'arguments must be an object'],
  ])('%j → %j', (args, expected) => {
    expect(searchArgs(args)).toEqual(expected);
  });
});

describe('SkillSearch over the sample skills', () => {
  let sample: Snapshot;
  const search = new SkillSearch();
  beforeAll(async () => {
    sample = await buildSnapshot([{ dir: SAMPLE_SKILLS_DIR, prefix: [] }]);
  });
  const ranked = async (query: string, limit = 10): Promise<string[]> =>
    search.search(sample, query, limit).map((skill) => skill.uri);

  it.each([
    // Both refunds skills are named "refunds"; billing's description says "refund" three times, support's twice.
    ['refund', [BILLING, SUPPORT]],
    // A name match (csv-cleaning) outweighs a description mention (data-pipeline: "CSV, JSON Lines").
    ['csv', [CSV, PIPELINE]],
    ['summarise a pdf', [PDF]],
    // "tone" is only a heading of the support skill.
    ['tone', [SUPPORT]],
    // "quality" is only in report-writer's "Quality checks" heading; "check" is twice in data-pipeline's description
    // ("and check small batch", "check a file") and once in billing's ("check eligibility").
    ['quality checks', [REPORT, PIPELINE, BILLING]],
    // A typo one edit away still finds the skill ("sumaries" → "summaries").
    ['sumaries', [PDF]],
    // A prefix finds whole words ("increment" has no match; "incid" starts "incident").
    ['incid', [REPORT]],
    ['kubernetes', []],
  ])('%j → %j', async (query, expected) => {
    expect(await ranked(query)).toEqual(expected);
  });

  it('returns at most limit results, best first', async () => {
    expect(await ranked('quality checks', 2)).toEqual([REPORT, PIPELINE]);
  });
});

describe('SkillSearch follows the catalog', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  it('adds, removes, re-describes and re-heads skills, and goes back to an older snapshot', async () => {
    const root = await temps.tree({
      'alpha/SKILL.md': skillMd('alpha', 'Formats invoices.'),
      'beta/SKILL.md': skillMd('beta', 'Plans sprints.'),
    });
    const search = new SkillSearch();
    const snapshot = () => buildSnapshot([{ dir: root, prefix: [] }]);
    const names = (current: Snapshot, query: string) => search.search(current, query, 10).map((skill) => skill.name);

    const first = await snapshot();
    expect(names(first, 'invoice')).toEqual(['alpha']);
    expect(names(first, 'sprint')).toEqual(['beta']);

    await fsp.writeFile(path.join(root, 'beta', 'SKILL.md'), skillMd('beta', 'Formats invoices for sprints.'));
    await fsp.mkdir(path.join(root, 'gamma'));
    await fsp.writeFile(
      path.join(root, 'gamma', 'SKILL.md'),
      `${skillMd('gamma', 'Tracks time.')}\n## Invoice rounding\n`,
    );
    await fsp.rm(path.join(root, 'alpha'), { recursive: true });
    const second = await snapshot();
    // beta's description now matches in the description field; gamma only through its heading.
    expect(names(second, 'invoice')).toEqual(['beta', 'gamma']);
    expect(names(second, 'formats')).toEqual(['beta']);
    expect(names(second, 'rounding')).toEqual(['gamma']);

    await fsp.writeFile(path.join(root, 'gamma', 'SKILL.md'), `${skillMd('gamma', 'Tracks time.')}\n## Overtime\n`);
    const third = await snapshot();
    expect(names(third, 'rounding')).toEqual([]);
    expect(names(third, 'overtime')).toEqual(['gamma']);
    // Searching the first snapshot again brings the index back to it.
    expect(names(first, 'invoice')).toEqual(['alpha']);
    expect(names(first, 'overtime')).toEqual([]);
  });
});
