/**
 * Live updates over real stdio when the whole root goes away and comes back: its skills are withdrawn (stderr says so,
 * with a `root-unusable` diagnostic), the server keeps serving the other root, resumes when the directory reappears
 * (stderr says so), and follows edits inside it again. Both a 2025-era and a 2026-07-28 host.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import {
  BASE_SUBSCRIBED,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startLive,
  stopLive,
  writeFilesAtomically,
} from '../helpers/live.js';
import { eventsOf, hasEvent } from '../helpers/logs.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';

describe.each(LIVE_ERAS)('live root, era $label', (era) => {
  let server: LiveServer | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await stopLive(server, ...(root === undefined ? [] : [root, `${root}.old`]));
    server = undefined;
  });

  it('withdraws the skills of a deleted root, resumes when it is recreated, and follows edits in it again', async () => {
    const tree = await makeBaseTree();
    root = tree.root;
    server = await startLive([tree.root], { era, subscribe: [...BASE_SUBSCRIBED, 'skill://gamma/SKILL.md'] });
    const live = server;
    await converge(live, tree.all);

    let mark = live.mark();
    await fsp.rm(tree.root, { recursive: true, force: true });
    const removed = await live.waitForEvent('root-removed');
    expect(removed).toMatchObject({ level: 40, root: tree.root });
    await converge(live, []);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    expect(eventsOf(live.logs(), 'diagnostic', { rule: 'root-unusable', file: tree.root })).toMatchObject([
      {
        level: 30,
        severity: 'warning',
        hint: 'restore the directory; skills-serve picks it up again when it reappears',
        code: 'ENOENT',
      },
    ]);
    expect(hasEvent(live.logs(), 'root-back')).toBe(false);

    // Recreated the way a clone or a copy does it: the directory first, then its contents.
    mark = live.mark();
    await fsp.mkdir(tree.root);
    await writeFilesAtomically(tree.root, {
      'alpha/references/guide.md': '# Guide\n\nRestored.\n',
      'alpha/SKILL.md': skillMd('alpha', 'Alpha skill, restored.'),
      'gamma/SKILL.md': skillMd('gamma', 'Gamma skill, new with the root.'),
    });
    const gamma = { uri: 'skill://gamma/SKILL.md', dir: path.join(tree.root, 'gamma') };
    const back = await live.waitForEvent('root-back');
    expect(back).toMatchObject({ level: 30, root: tree.root });
    await converge(live, [tree.alpha, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({
      listChanged: true,
      updated: ['skill://alpha/SKILL.md', 'skill://alpha/references/guide.md', 'skill://gamma/SKILL.md'],
    });
    await live.verifyReads([tree.alpha, gamma]);

    // The watcher is attached again: an edit in the returned root is followed.
    mark = live.mark();
    await fsp.writeFile(
      path.join(tree.alpha.dir, 'references', 'guide.md'),
      '# Guide\n\nEdited after the root came back.\n',
    );
    await converge(live, [tree.alpha, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://alpha/references/guide.md'] });

    // …and so is a new skill.
    const delta = { uri: 'skill://delta/SKILL.md', dir: path.join(tree.root, 'delta') };
    mark = live.mark();
    await writeFilesAtomically(tree.root, { 'delta/SKILL.md': skillMd('delta', 'Delta skill, added later.') });
    await converge(live, [tree.alpha, gamma, delta]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    await live.verifyReads([tree.alpha, gamma, delta]);
  });

  /**
   * A root replaced faster than the watcher notices it is gone: the old directory's watches die with it, so the server
   * must attach to the new directory. Checked with a new top-level skill afterwards (edits inside subdirectories alone
   * would not show a missing root watch: chokidar watches the subdirectories it has seen appear).
   */
  it.each([
    {
      how: 'rm -rf root && cp -r new root',
      replace: async (root: string, staged: string) => {
        await fsp.rm(root, { recursive: true, force: true });
        await fsp.cp(staged, root, { recursive: true });
        await removeTree(staged);
      },
    },
    {
      how: 'mv root root.old && mv new root',
      replace: async (root: string, staged: string) => {
        await fsp.rename(root, `${root}.old`);
        await fsp.rename(staged, root);
      },
    },
  ])('follows a root replaced at once ($how), then edits and new skills in it', async ({ replace }) => {
    const tree = await makeBaseTree();
    root = tree.root;
    const staged = await makeTree({
      'alpha/SKILL.md': skillMd('alpha', 'Alpha skill, replaced.'),
      'alpha/references/guide.md': '# Guide\n\nReplaced.\n',
      'beta/SKILL.md': skillMd('beta', 'Beta skill.'),
      'beta/notes.txt': 'beta notes, replaced\n',
    });
    server = await startLive([tree.root], { era, subscribe: BASE_SUBSCRIBED });
    const live = server;
    await converge(live, tree.all);

    await replace(tree.root, staged);
    await converge(live, [tree.alpha, tree.beta]);
    await live.settle();

    let mark = live.mark();
    await fsp.writeFile(
      path.join(tree.beta.dir, 'SKILL.md'),
      skillMd('beta', 'Beta skill, edited after the replacement.'),
    );
    await fsp.writeFile(
      path.join(tree.alpha.dir, 'references', 'guide.md'),
      '# Guide\n\nEdited after the replacement.\n',
    );
    await converge(live, [tree.alpha, tree.beta]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({
      listChanged: true,
      updated: ['skill://alpha/references/guide.md', 'skill://beta/SKILL.md'],
    });

    const gamma = { uri: 'skill://gamma/SKILL.md', dir: path.join(tree.root, 'gamma') };
    mark = live.mark();
    await writeFilesAtomically(tree.root, {
      'gamma/SKILL.md': skillMd('gamma', 'Gamma skill, added after the replacement.'),
    });
    await converge(live, [tree.alpha, tree.beta, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    await live.verifyReads([tree.alpha, tree.beta, gamma]);
  });
});
