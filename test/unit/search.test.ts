/**
 * `search_skills`: the headings a search matches, how terms are normalised, the exact rankings over the sample
 * skills, the tool's arguments, and the index following catalog changes (skills added, removed, re-described, and a
 * `SKILL.md` whose headings changed).
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/index/build.js';
import type { Snapshot } from '../../src/index/types.js';
import { searchArgs } from '../../src/server/compat-tools.js';
import { searchTerm, SkillSearch, skillHeadings } from '../../src/server/search.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { SAMPLE_SKILLS_DIR } from '../helpers/tree.js';

const BILLING = 'skill://acme/billing/refunds/SKILL.md';
const SUPPORT = 'skill://acme/support/refunds/SKILL.md';
const PIPELINE = 'skill://data-pipeline/SKILL.md';
const CSV = 'skill://data-pipeline/csv-cleaning/SKILL.md';
const PDF = 'skill://pdf-summaries/SKILL.md';
const REPORT = 'skill://report-writer/SKILL.md';

describe('skillHeadings', () => {
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
    expect(skillHeadings(readFileSync(path.join(SAMPLE_SKILLS_DIR, 'acme/support/refunds/SKILL.md'), 'utf8'))).toEqual(['Refunds (support)', 'Steps', 'Tone', 'Reply template']);
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
    [{ query: 'pdf', limit: 3 }, { query: 'pdf', limit: 3 }],
    [{ query: 'pdf', limit: null }, { query: 'pdf', limit: 10 }],
    [{}, 'argument "query" is required: a few words describing the task'],
    [undefined, 'argument "query" is required: a few words describing the task'],
    [{ query: 7 }, 'argument "query" must be a string'],
    [{ query: 'x'.repeat(1001) }, 'query is 1001 characters long; give a few words describing the task (at most 1000 characters)'],
    [{ query: 'x'.repeat(1000) }, { query: 'x'.repeat(1000), limit: 10 }],
    [{ query: 'the and of ?!' }, 'query "the and of ?!" has no word to search for; give a few words describing the task'],
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
  const reads: string[] = [];
  const search = new SkillSearch(async (file) => {
    reads.push(file.uri);
    return readFileSync(file.path, 'utf8');
  });
  beforeAll(async () => {
    sample = await buildSnapshot([{ dir: SAMPLE_SKILLS_DIR, prefix: [] }], 1);
  });
  const ranked = async (query: string, limit = 10): Promise<string[]> => (await search.search(sample, query, limit)).map((skill) => skill.entry.uri);

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

  it('reads each SKILL.md once for a snapshot searched many times', async () => {
    await ranked('refund');
    await ranked('csv');
    expect(reads.length).toBe(6);
    expect(new Set(reads).size).toBe(6);
  });
});

describe('SkillSearch follows the catalog', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  it('adds, removes and re-describes skills, and re-reads a SKILL.md whose digest changed', async () => {
    const root = await temps.tree({
      'alpha/SKILL.md': skillMd('alpha', 'Formats invoices.'),
      'beta/SKILL.md': skillMd('beta', 'Plans sprints.'),
    });
    const reads: string[] = [];
    const search = new SkillSearch(async (file) => {
      reads.push(file.uri);
      return fsp.readFile(file.path, 'utf8');
    });
    const snapshot = (generation: number) => buildSnapshot([{ dir: root, prefix: [] }], generation);
    const names = async (current: Snapshot, query: string) => (await search.search(current, query, 10)).map((skill) => skill.name);

    const first = await snapshot(1);
    expect(await names(first, 'invoice')).toEqual(['alpha']);
    expect(await names(first, 'sprint')).toEqual(['beta']);
    expect(reads.sort()).toEqual(['skill://alpha/SKILL.md', 'skill://beta/SKILL.md']);

    await fsp.writeFile(path.join(root, 'beta', 'SKILL.md'), skillMd('beta', 'Formats invoices for sprints.'));
    await fsp.mkdir(path.join(root, 'gamma'));
    await fsp.writeFile(path.join(root, 'gamma', 'SKILL.md'), `${skillMd('gamma', 'Tracks time.')}\n## Invoice rounding\n`);
    await fsp.rm(path.join(root, 'alpha'), { recursive: true });
    reads.length = 0;
    const second = await snapshot(2);
    // beta's description now matches in the description field; gamma only through its heading.
    expect(await names(second, 'invoice')).toEqual(['beta', 'gamma']);
    expect(await names(second, 'formats')).toEqual(['beta']);
    expect(reads.sort()).toEqual(['skill://beta/SKILL.md', 'skill://gamma/SKILL.md']);
    // Searching the older snapshot again brings the index back to it (alpha's SKILL.md is gone: indexed without headings).
    expect(await names(first, 'invoice')).toEqual(['alpha']);
  });

  it('indexes a skill whose SKILL.md cannot be read by name and description, and reads it again next time', async () => {
    const root = await temps.tree({ 'alpha/SKILL.md': `${skillMd('alpha', 'Formats invoices.')}\n## Rounding\n` });
    let readable = false;
    const search = new SkillSearch(async (file) => (readable ? fsp.readFile(file.path, 'utf8') : undefined));
    const current = await buildSnapshot([{ dir: root, prefix: [] }], 1);
    expect((await search.search(current, 'rounding', 10)).length).toBe(0);
    expect((await search.search(current, 'invoice', 10)).map((skill) => skill.name)).toEqual(['alpha']);
    readable = true;
    const next = await buildSnapshot([{ dir: root, prefix: [] }], 2);
    expect((await search.search(next, 'rounding', 10)).map((skill) => skill.name)).toEqual(['alpha']);
  });
});
