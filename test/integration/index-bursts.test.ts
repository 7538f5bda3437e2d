/**
 * A burst of changed regions in one root (REGION_BURST_LIMIT, docs/ARCHITECTURE.md "Watching"): when watching, it is
 * rebuilt as the whole root, in one walk; without a watcher, region by region. Either way the result is what a full
 * build gives. Real directories; the observer records what the builder tells the watcher.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildSnapshot, IndexBuilder, type IndexObserver, REGION_BURST_LIMIT } from '../../src/index/build.js';
import { skillMd, tempTrees } from '../helpers/tree.js';

const temps = tempTrees();
afterEach(() => temps.removeAll());

const SKILLS = REGION_BURST_LIMIT + 1;

function recorder(): IndexObserver & { started: string[] } {
  const started: string[] = [];
  return {
    started,
    directory: () => undefined,
    regionStarted: (_root, rel) => started.push(rel),
    regionFinished: () => undefined,
    rootResolved: () => undefined,
  };
}

describe(`${SKILLS} changed skills in one rebuild`, () => {
  it.each([
    ['watching', true, ['']],
    ['without a watcher', false, undefined],
  ] as const)('%s', async (_label, watching, expected) => {
    const root = await temps.tree(
      Object.fromEntries(
        Array.from({ length: SKILLS }, (_, index) => [`s${index}/SKILL.md`, skillMd(`s${index}`, `Skill ${index}.`)]),
      ),
    );
    const observer = recorder();
    const builder = new IndexBuilder([{ dir: root, prefix: [] }], watching ? { observer } : {});
    await builder.buildAll();
    observer.started.length = 0;
    const rels = Array.from({ length: SKILLS }, (_, index) => `s${index}`);
    for (const rel of rels) appendFileSync(path.join(root, rel, 'SKILL.md'), 'More.\n');
    const rebuilt = await builder.rebuild(rels.map((rel) => ({ rootIndex: 0, rel })));
    if (expected !== undefined) expect(observer.started).toEqual(expected);
    const fresh = await buildSnapshot([{ dir: root, prefix: [] }]);
    const digests = (snapshot: typeof fresh) => snapshot.ordered.map((skill) => [skill.uri, skill.json]);
    expect(digests(rebuilt)).toEqual(digests(fresh));
  });
});
