/**
 * Watch modes over real stdio: `--no-watch` serves a fixed snapshot (nothing on disk changes what is listed, and no
 * notification is sent), and `--poll 100` follows changes by polling. Both a 2025-era and a 2026-07-28 host.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import {
  type BaseTree,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startOnBaseTree,
  stopLive,
  writeFilesAtomically,
} from '../helpers/live.js';
import { eventsOf, hasEvent } from '../helpers/logs.js';
import { skillMd } from '../helpers/tree.js';

describe.each(LIVE_ERAS)('watch modes, era $label', (era) => {
  let server: LiveServer | undefined;
  let tree: BaseTree | undefined;
  afterEach(async () => {
    await stopLive(server, tree?.root);
    server = undefined;
  });

  it('--no-watch: edits, new skills and deletions on disk change nothing and announce nothing', async () => {
    tree = await makeBaseTree();
    server = await startOnBaseTree(tree, era, ['--no-watch']);
    const live = server;
    expect(await live.waitForEvent('serving')).toMatchObject({ watch: false });
    await live.waitForEvent('index-built');
    expect(hasEvent(live.logs(), 'watching')).toBe(false);
    const before = await live.list();
    const mark = live.mark();

    await fsp.writeFile(path.join(tree.alpha.dir, 'references', 'guide.md'), '# Guide\n\nEdited while not watched.\n');
    await fsp.writeFile(path.join(tree.beta.dir, 'SKILL.md'), skillMd('beta', 'Beta skill, edited while not watched.'));
    await writeFilesAtomically(tree.root, {
      'gamma/SKILL.md': skillMd('gamma', 'Gamma skill, added while not watched.'),
    });
    await fsp.rm(tree.inner.dir, { recursive: true });
    // A negative claim ("nothing happens") has no event to wait for: give a (wrongly) running watcher 1 s, about 25
    // debounce windows, to show itself.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(await live.list()).toEqual(before);
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: [] });
    expect(live.heard).toEqual([]);
    expect(eventsOf(live.logs(), 'index-updated')).toEqual([]);
  });

  it('--poll 100: follows edits, additions and deletions by polling', async () => {
    tree = await makeBaseTree();
    server = await startOnBaseTree(tree, era, ['--poll', '100']);
    const live = server;
    expect(await live.waitForEvent('watching')).toMatchObject({ mode: 'polling' });
    expect(await live.waitForEvent('serving')).toMatchObject({ watch: true, pollMs: 100 });

    const guide = '# Guide\n\nEdited under polling, with other length.\n';
    const gamma = { uri: 'skill://gamma/SKILL.md', dir: path.join(tree.root, 'gamma') };
    let mark = live.mark();
    await fsp.writeFile(path.join(tree.alpha.dir, 'references', 'guide.md'), guide);
    await fsp.writeFile(path.join(tree.beta.dir, 'notes.txt'), 'beta notes, polled\n'); // not subscribed
    await writeFilesAtomically(tree.root, {
      'gamma/ref.md': 'gamma ref\n',
      'gamma/SKILL.md': skillMd('gamma', 'Gamma skill, found by polling.'),
    });
    await converge(live, [...tree.all, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: ['skill://alpha/references/guide.md'] });
    await live.verifyReads([...tree.all, gamma]);

    mark = live.mark();
    await fsp.rm(tree.beta.dir, { recursive: true });
    await converge(live, [tree.alpha, tree.inner, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
  });
});
