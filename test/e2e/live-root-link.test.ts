/**
 * Roots that are links (`~/.claude/skills -> ~/dotfiles/skills`, git-sync's `current -> .worktrees/<sha>`, release
 * layouts `current -> releases/N`), end to end over real stdio, watching (native events and `--poll`) and not: the
 * root is served; an atomic re-point of the link (`ln -s new tmp && mv -T tmp current`) is followed: the
 * listing shows the new tree, reads match the new digests, and hosts hear `list_changed` and `updated`.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import { type ExpectedSkill, LIVE_ERAS, type LiveServer, startLive, stopLive } from '../helpers/live.js';
import { makeTree, skillMd } from '../helpers/tree.js';

/** Two releases of one catalog, and `current` pointing at the first. */
async function makeReleases(): Promise<{ base: string; current: string; release1: string; release2: string }> {
  const base = await makeTree({
    'releases/1/alpha/SKILL.md': skillMd('alpha', 'Alpha, release 1.'),
    'releases/1/alpha/references/guide.md': '# Guide\n\nRelease 1.\n',
    'releases/1/beta/SKILL.md': skillMd('beta', 'Beta, release 1 only.'),
    'releases/2/alpha/SKILL.md': skillMd('alpha', 'Alpha, release 2.'),
    'releases/2/alpha/references/guide.md': '# Guide\n\nRelease 2, rewritten.\n',
    'releases/2/gamma/SKILL.md': skillMd('gamma', 'Gamma, new in release 2.'),
  });
  const current = path.join(base, 'current');
  await fsp.symlink(path.join('releases', '1'), current);
  return { base, current, release1: path.join(base, 'releases', '1'), release2: path.join(base, 'releases', '2') };
}

/** Re-points `link` at `target` atomically, the way deployment tools do: a new link renamed over the old one. */
async function repoint(link: string, target: string): Promise<void> {
  const temp = `${link}.tmp`;
  await fsp.symlink(target, temp);
  await fsp.rename(temp, link);
}

const MODES = [
  { label: 'native events', flags: [] as string[] },
  { label: '--poll 200', flags: ['--poll', '200'] },
] as const;

describe.each(LIVE_ERAS)('a root that is a link, era $label', (era) => {
  let server: LiveServer | undefined;
  let base: string | undefined;
  afterEach(async () => {
    await stopLive(server, base);
    server = undefined;
  });

  it.each(MODES)('is served and follows an atomic re-point ($label)', async ({ flags }) => {
    const tree = await makeReleases();
    base = tree.base;
    server = await startLive([tree.current], { era, subscribe: ['skill://alpha/references/guide.md'], flags });
    const alpha: ExpectedSkill = { uri: 'skill://alpha/SKILL.md', dir: path.join(tree.current, 'alpha') };
    const beta: ExpectedSkill = { uri: 'skill://beta/SKILL.md', dir: path.join(tree.current, 'beta') };
    const gamma: ExpectedSkill = { uri: 'skill://gamma/SKILL.md', dir: path.join(tree.current, 'gamma') };
    await converge(server, [alpha, beta]);
    await server.verifyReads([alpha, beta]);

    const mark = server.mark();
    await repoint(tree.current, path.join('releases', '2'));
    // How fast the re-point is followed is measured by bench:live; here only that it converges (the default bound).
    await converge(server, [alpha, gamma]);
    await server.settle();
    expect(server.heardSince(mark)).toEqual({ listChanged: true, updated: ['skill://alpha/references/guide.md'] });
    await server.verifyReads([alpha, gamma]);

    // Edits in the new target are followed.
    await fsp.writeFile(path.join(tree.release2, 'gamma', 'notes.md'), 'notes added after the re-point\n');
    await converge(server, [alpha, gamma]);
    await server.verifyReads([gamma]);
  });

  it('is served with --no-watch', async () => {
    const tree = await makeReleases();
    base = tree.base;
    server = await startLive([tree.current], { era, subscribe: [], flags: ['--no-watch'] });
    const alpha: ExpectedSkill = { uri: 'skill://alpha/SKILL.md', dir: path.join(tree.current, 'alpha') };
    const beta: ExpectedSkill = { uri: 'skill://beta/SKILL.md', dir: path.join(tree.current, 'beta') };
    await converge(server, [alpha, beta]);
    await server.verifyReads([alpha, beta]);
  });
});
