/**
 * `search_skills`: the headings a search matches, how terms are normalised, the exact rankings over the sample
 * skills, the tool's arguments, and the index following catalog changes (skills added, removed, re-described, and a
 * `SKILL.md` whose headings changed).
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SkillsServeError } from '../../src/errors.js';
import { buildSnapshot } from '../../src/index/build.js';
import { headingsOf, splitSkillMd } from '../../src/index/frontmatter.js';
import { encodeCursor } from '../../src/index/snapshot.js';
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
    [
      { query: 'pdf', cursor: 'abc' },
      { query: 'pdf', limit: 10, cursor: 'abc' },
    ],
    [
      { query: 'pdf', cursor: null },
      { query: 'pdf', limit: 10 },
    ],
    [{ query: 'pdf', cursor: 3 }, 'argument "cursor" must be a string'],
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

describe('SkillSearch pages', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  /** 130 skills that match "case" (their names in URI order) and 5 that do not. */
  async function caseTree(): Promise<{ root: string; names: string[] }> {
    const spec: Record<string, string> = {};
    const names: string[] = [];
    for (let index = 0; index < 130; index++) {
      const name = `case-${String(index).padStart(3, '0')}`;
      names.push(name);
      spec[`${name}/SKILL.md`] = skillMd(name, `Handles case ${index}${index % 3 === 0 ? ' and its case notes' : ''}.`);
    }
    for (let index = 0; index < 5; index++)
      spec[`other-${index}/SKILL.md`] = skillMd(`other-${index}`, 'Plans sprints.');
    return { root: await temps.tree(spec), names };
  }

  /** Every page of `query` from the first on, `limit` at a time: each page's names and the cursor it gave. */
  function allPages(search: SkillSearch, snapshot: Snapshot, query: string, limit: number) {
    const pages: { names: string[]; nextCursor?: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = search.page(snapshot, query, limit, cursor);
      pages.push({
        names: page.skills.map((skill) => skill.name),
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
      });
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return pages;
  }

  it('pages through every hit exactly once, in rank order, whatever the page size', async () => {
    const { root, names } = await caseTree();
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    const search = new SkillSearch();
    const ranked = search.page(snapshot, 'case', 200).skills.map((skill) => skill.name);
    expect([...ranked].sort()).toEqual(names);
    // Names that say "case" twice rank first.
    expect(ranked.slice(0, 44).every((name) => Number(name.slice(5)) % 3 === 0)).toBe(true);
    for (const limit of [1, 7, 50]) {
      const pages = allPages(search, snapshot, 'case', limit);
      expect(pages).toHaveLength(Math.ceil(130 / limit));
      expect(pages.flatMap((page) => page.names)).toEqual(ranked);
      expect(pages.slice(0, -1).every((page) => page.names.length === limit)).toBe(true);
      expect(pages.at(-1)?.nextCursor).toBeUndefined();
    }
    expect(search.search(snapshot, 'case', 50)).toEqual(search.page(snapshot, 'case', 50).skills);
    // A query with few hits has one page and no cursor.
    expect(search.page(snapshot, 'sprints', 50)).toEqual({
      skills: [0, 1, 2, 3, 4].map((index) => snapshot.skills.get(`skill://other-${index}/SKILL.md`)),
    });
  });

  it('a cursor is stable for a snapshot and query: the same page every time, on any index of the same skills', async () => {
    const { root } = await caseTree();
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    const search = new SkillSearch();
    const first = search.page(snapshot, 'case', 50);
    const cursor = first.nextCursor as string;
    expect(cursor).toMatch(/^[\w-]+$/u);
    const second = search.page(snapshot, 'case', 50, cursor);
    expect(search.page(snapshot, 'case', 50, cursor)).toEqual(second);
    expect(search.page(snapshot, 'case', 50).nextCursor).toBe(cursor);
    // Another process serving the same skills (a replica) continues it.
    expect(new SkillSearch().page(snapshot, 'case', 50, cursor)).toEqual(second);
    // A different page size goes on from the same place.
    expect(search.page(snapshot, 'case', 10, cursor).skills).toEqual(second.skills.slice(0, 10));
    // A snapshot rebuilt from the same files has the same hits: the cursor still holds.
    expect(search.page(await buildSnapshot([{ dir: root, prefix: [] }]), 'case', 50, cursor).skills).toEqual(
      second.skills,
    );
  });

  it('refuses a bad cursor, one of another query and one whose hits changed', async () => {
    const { root } = await caseTree();
    const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
    const search = new SkillSearch();
    const cursor = search.page(snapshot, 'case', 50).nextCursor as string;
    const refusal = (query: string, given: string, at = snapshot): string => {
      try {
        search.page(at, query, 50, given);
      } catch (error) {
        expect(error).toBeInstanceOf(SkillsServeError);
        expect((error as SkillsServeError).code).toBe('INVALID_CURSOR');
        return (error as Error).message;
      }
      throw new Error('the cursor was accepted');
    };
    const notOurs = 'Invalid cursor: it was not issued by this server';
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    const forged = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    for (const bad of [
      '',
      'bogus',
      `${cursor}=`,
      cursor.slice(0, -2),
      'x'.repeat(200),
      // A list_skills or skills/list cursor is not a search cursor.
      encodeCursor('skill://case-050/SKILL.md'),
      // The offset of a page that was never issued: 0, past the last hit, not a number.
      forged(decoded.replace(/^search:50:/u, 'search:0:')),
      forged(decoded.replace(/^search:50:/u, 'search:130:')),
      forged(decoded.replace(/^search:50:/u, 'search:050:')),
      forged(decoded.replace(/^search:50:/u, 'search:-1:')),
    ])
      expect(refusal('case', bad), bad).toBe(notOurs);
    // Another offset of the same hits is a place to go on from, as a smaller page size would give.
    expect(search.page(snapshot, 'case', 5, forged(decoded.replace(/^search:50:/u, 'search:125:'))).skills).toEqual(
      search.page(snapshot, 'case', 200).skills.slice(125),
    );
    expect(refusal('sprints', cursor)).toBe('Invalid cursor: it was issued for another query');
    // Another spelling of the query with the very same hits goes on: the pages still line up.
    expect(search.page(snapshot, 'Case', 50, cursor).skills).toEqual(search.page(snapshot, 'case', 50, cursor).skills);

    await fsp.writeFile(path.join(root, 'case-129', 'SKILL.md'), skillMd('case-129', 'Plans sprints.'));
    const changed = await buildSnapshot([{ dir: root, prefix: [] }]);
    expect(refusal('case', cursor, changed)).toBe(
      'Stale cursor: the skills matching this query changed since it was issued',
    );
    expect(refusal('sprints', cursor, changed)).toBe('Invalid cursor: it was issued for another query');
  });
});
