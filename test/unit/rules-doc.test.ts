/**
 * docs/rules.md, the authors' rules, documents every rule id `check` can report, each in a table row under a heading
 * that says its severity: the ids are taken from the source's own lists (`ERROR_RULES`, `WARNING_RULES`,
 * `INFO_RULES`, `FEED_RULES`), so a rule added without its row fails here. Checked on a small page with a missing
 * and a misplaced row first, then on the real page.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { FEED_RULES } from '../../src/feed/feed.js';
import { ERROR_RULES, INFO_RULES, WARNING_RULES } from '../../src/index/diagnostics.js';
import { REPO } from '../helpers/paths.js';

/** Each rule id that starts a table row (`| \`id\` | …`), with the `## ` heading it sits under. */
function documentedRules(page: string): Map<string, string> {
  const found = new Map<string, string>();
  let heading = '';
  for (const line of page.split('\n')) {
    if (line.startsWith('## ')) heading = line.slice(3);
    const id = /^\| `([a-z-]+)` \|/u.exec(line)?.[1];
    if (id !== undefined && !found.has(id)) found.set(id, heading);
  }
  return found;
}

/** What is wrong with `page`: each rule id with no row, or with its row under a heading of the other severity. */
function problems(page: string): string[] {
  const found = documentedRules(page);
  const expected: [readonly string[], string][] = [
    [ERROR_RULES, '(errors)'],
    [WARNING_RULES, '(warnings)'],
    [INFO_RULES, '(info)'],
    [FEED_RULES, '(warnings, `check --feed`)'],
  ];
  return expected.flatMap(([ids, severity]) =>
    ids.flatMap((id) => {
      const heading = found.get(id);
      if (heading === undefined) return [`${id}: no row`];
      return heading.endsWith(severity) ? [] : [`${id}: under "${heading}", not a heading ending "${severity}"`];
    }),
  );
}

describe('docs/rules.md', () => {
  it('reports a rule id with no row, and one under the wrong severity', () => {
    const rows = (ids: readonly string[]): string => ids.map((id) => `| \`${id}\` | checks |`).join('\n');
    const page = [
      '## Frontmatter (errors)',
      rows(ERROR_RULES.filter((id) => id !== 'name-format')),
      '## Files (warnings)',
      rows([...WARNING_RULES, 'name-format']),
      '## Executables (info)',
      rows(INFO_RULES),
      '## Feed (warnings, `check --feed`)',
      rows(FEED_RULES.filter((id) => id !== 'feed-path')),
    ].join('\n');
    expect(problems(page)).toEqual([
      'name-format: under "Files (warnings)", not a heading ending "(errors)"',
      'feed-path: no row',
    ]);
  });

  it('has a row for every rule id of the source, under its severity, and no row for any other id', () => {
    const page = readFileSync(path.join(REPO, 'docs', 'rules.md'), 'utf8');
    expect(problems(page)).toEqual([]);
    expect([...documentedRules(page).keys()].sort()).toEqual(
      [...ERROR_RULES, ...WARNING_RULES, ...INFO_RULES, ...FEED_RULES].sort(),
    );
  });
});
