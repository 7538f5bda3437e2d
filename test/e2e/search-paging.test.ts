/**
 * `search_skills` pages past its first hits over real stdio: a query matching 130 skills of a generated tree is read
 * to its end through `nextCursor`, each hit exactly once, in both eras; a bad cursor, one of another query and one
 * whose hits changed on disk are tool errors that say to start over.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../helpers/live.js';
import { connect, type Connection, ERAS } from '../helpers/server.js';
import { skillMd, tempTrees } from '../helpers/tree.js';

/** Skills whose description says "case" (130 of them), then some that match nothing searched here. */
const MATCHING = 130;
const temps = tempTrees();

interface Listed {
  readonly skills: { name: string; description: string; uri: string }[];
  readonly nextCursor?: string;
}

describe.each([ERAS[1], ERAS[2]])('era $label', (era) => {
  let connection: Connection;
  let root: string;
  beforeAll(async () => {
    const spec: Record<string, string> = {};
    for (let index = 0; index < MATCHING; index++) {
      const name = `case-${String(index).padStart(3, '0')}`;
      spec[`${name}/SKILL.md`] = skillMd(name, `Handles case ${index}.`);
    }
    for (let index = 0; index < 20; index++)
      spec[`other-${index}/SKILL.md`] = skillMd(`other-${index}`, 'Plans sprints.');
    // 30 skills whose 900-character descriptions would make a 50-hit page far longer than hosts pass whole.
    for (let index = 0; index < 30; index++) {
      const name = `long-${String(index).padStart(2, '0')}`;
      spec[`${name}/SKILL.md`] = skillMd(name, `Drafts a treaty, part ${index}. ${'Clause text. '.repeat(68)}`);
    }
    root = await temps.tree(spec);
    connection = await connect([root], era);
  });
  afterAll(async () => {
    await connection.close();
    await temps.removeAll();
  });

  /** Calls `search_skills`; the result's structured content, after checking its text says the same. */
  async function search(args: Record<string, unknown>): Promise<Listed> {
    const result = await connection.client.callTool({ name: 'search_skills', arguments: args });
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    return result.structuredContent as Listed;
  }
  /** The text of a `search_skills` call that must fail. */
  async function refusal(args: Record<string, unknown>): Promise<string> {
    const result = await connection.client.callTool({ name: 'search_skills', arguments: args });
    expect(result.isError).toBe(true);
    return (result.content as { text: string }[])[0]?.text ?? '';
  }

  it('keeps each page within what every host passes whole (10,000 characters), and still reaches every hit', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await search({ query: 'treaty', limit: 50, ...(cursor === undefined ? {} : { cursor }) });
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(10_000);
      sizes.push(page.skills.length);
      seen.push(...page.skills.map((skill) => skill.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // Each hit is 950 characters of JSON: ten a page fit in 9,800.
    expect(sizes).toEqual([10, 10, 10]);
    expect([...seen].sort()).toEqual(
      Array.from({ length: 30 }, (_, index) => `long-${String(index).padStart(2, '0')}`),
    );
  });

  it('pages through every hit of a query matching more than 50 skills, each exactly once', async () => {
    const expected = Array.from(
      { length: MATCHING },
      (_, index) => `skill://case-${String(index).padStart(3, '0')}/SKILL.md`,
    );
    for (const limit of [50, undefined]) {
      const seen: string[] = [];
      const pages: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await search({
          query: 'case',
          ...(limit === undefined ? {} : { limit }),
          ...(cursor === undefined ? {} : { cursor }),
        });
        pages.push(page.skills.length);
        seen.push(...page.skills.map((skill) => skill.uri));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(pages).toEqual(limit === 50 ? [50, 50, 30] : [...Array<number>(13).fill(10)]);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual(expected);
    }
  });

  it('a cursor gives the same page every time; a bad one, one of another query and a stale one are tool errors', async () => {
    const first = await search({ query: 'case', limit: 50 });
    const cursor = first.nextCursor as string;
    const second = await search({ query: 'case', limit: 50, cursor });
    expect(await search({ query: 'case', limit: 50, cursor })).toEqual(second);
    expect(await refusal({ query: 'case', cursor: 'bogus' })).toBe(
      'Invalid cursor: it was not issued by this server; call search_skills without a cursor to start over.',
    );
    expect(await refusal({ query: 'sprints', cursor })).toBe(
      'Invalid cursor: it was issued for another query; call search_skills without a cursor to start over.',
    );
    // A matching skill removed changes the hits: the cursor's pages would no longer line up with them.
    await fsp.rm(path.join(root, 'case-000'), { recursive: true });
    await waitFor(
      async () => !(await search({ query: 'case', limit: 50 })).skills.some((skill) => skill.name === 'case-000'),
    );
    expect(await refusal({ query: 'case', limit: 50, cursor })).toBe(
      'Stale cursor: the skills matching this query changed since it was issued; call search_skills without a cursor to start over.',
    );
    const again = await search({ query: 'case', limit: 50 });
    expect(again.nextCursor).toBeDefined();
    expect(again.nextCursor).not.toBe(cursor);
  });
});
