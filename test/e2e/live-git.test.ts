/**
 * Live updates over real stdio for `git checkout` of a branch that changes several skills at once (a real git
 * repository as the root; `.git/` itself is never published). Both a 2025-era and a 2026-07-28 host.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import {
  type ExpectedSkill,
  LIVE_ERAS,
  type LiveServer,
  startLive,
  stopLive,
  writeFilesAtomically,
} from '../helpers/live.js';
import { eventsOf } from '../helpers/logs.js';
import { addToTree, makeTree, skillMd } from '../helpers/tree.js';

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=skills-serve tests',
      '-c',
      'user.email=tests@example.invalid',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'core.hooksPath=/dev/null',
      ...args,
    ],
    { cwd, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } },
  );
}

/** URIs that differ between the branches and are subscribed: exactly these may and must be `updated` (see below). */
const CHANGED_SUBSCRIBED = ['skill://s1/ref.md', 'skill://s2/SKILL.md'];
/** s2/ref.md changes too but is not subscribed; s4 and s5/SKILL.md do not change; s3 is removed on `other`. */
const SUBSCRIBED = [
  ...CHANGED_SUBSCRIBED,
  'skill://s3/SKILL.md',
  'skill://s4/SKILL.md',
  'skill://s4/ref.md',
  'skill://s5/SKILL.md',
];

describe.each(LIVE_ERAS)('live git checkout, era $label', (era) => {
  let server: LiveServer | undefined;
  let repo: string | undefined;
  afterEach(async () => {
    await stopLive(server, repo);
    server = undefined;
  });

  it('follows `git checkout other` and back: several skills changed, removed and added at once', async () => {
    repo = await makeTree({
      's1/SKILL.md': skillMd('s1', 'Skill one.'),
      's1/ref.md': 's1 ref on main\n',
      's2/SKILL.md': skillMd('s2', 'Skill two.'),
      's2/ref.md': 's2 ref on main\n',
      's3/SKILL.md': skillMd('s3', 'Skill three, only on main.'),
      's3/ref.md': 's3 ref\n',
      's4/SKILL.md': skillMd('s4', 'Skill four, the same everywhere.'),
      's4/ref.md': 's4 ref\n',
      's5/SKILL.md': skillMd('s5', 'Skill five.'),
    });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'main');
    git(repo, 'checkout', '-q', '-b', 'other');
    git(repo, 'rm', '-q', '-r', 's3');
    await addToTree(repo, {
      's1/ref.md': 's1 ref on other, changed\n',
      's2/SKILL.md': skillMd('s2', 'Skill two, as described on other.'),
      's2/ref.md': 's2 ref on other\n',
      's5/extra/notes.md': 's5 notes, only on other\n',
      's6/SKILL.md': skillMd('s6', 'Skill six, only on other.'),
      's6/ref.md': 's6 ref\n',
    });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'other');
    git(repo, 'checkout', '-q', 'main');

    const skill = (name: string): ExpectedSkill => ({ uri: `skill://${name}/SKILL.md`, dir: path.join(repo!, name) });
    const onMain = ['s1', 's2', 's3', 's4', 's5'].map(skill);
    const onOther = ['s1', 's2', 's4', 's5', 's6'].map(skill);
    server = await startLive([repo], { era, subscribe: SUBSCRIBED });
    const live = server;
    const initial = await converge(live, onMain);

    /**
     * The exact `updated` set is due when the checkout was seen in one piece. git replaces a file by unlinking it and
     * creating it anew; a rebuild that ran inside that window would legitimately withdraw and re-add the URI
     * (list_changed, no `updated`). Such a window shows as more than one rebuild before the catalog converged.
     */
    const checkout = async (branch: string, expected: ExpectedSkill[], back: readonly string[]): Promise<void> => {
      const mark = live.mark();
      const rebuildsBefore = await rebuilds(live);
      git(repo!, 'checkout', '-q', branch);
      await converge(live, expected);
      const rebuildsDuring = (await rebuilds(live)) - rebuildsBefore;
      await live.settle();
      const heard = live.heardSince(mark);
      expect(heard.listChanged).toBe(true);
      const due = [...CHANGED_SUBSCRIBED, ...back].sort();
      if (rebuildsDuring === 1) expect(heard.updated).toEqual(due);
      else expect(heard.updated.filter((uri) => !due.includes(uri))).toEqual([]);
      await live.verifyReads(expected);
    };

    await checkout('other', onOther, []);
    expect((await live.connection.skills.get('skill://s2/SKILL.md')).skill.frontmatter['description']).toBe(
      'Skill two, as described on other.',
    );
    // s3 is back: its subscribed SKILL.md is announced as updated.
    await checkout('main', onMain, ['skill://s3/SKILL.md']);
    expect(await live.list()).toEqual(initial);

    // Work on the checked-out tree is followed as usual; .git/ churn (index, objects, refs) is not published.
    const mark = live.mark();
    await writeFilesAtomically(repo, { 's4/ref.md': 's4 ref, edited on main\n' });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'edit s4');
    await converge(live, onMain);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://s4/ref.md'] });
  });
});

/**
 * How many incremental rebuilds the server has logged so far. The server writes a rebuild's stderr line synchronously
 * when it swaps the snapshot, before any later response; one request round trip first lets our reader of its stderr
 * catch up.
 */
async function rebuilds(live: LiveServer): Promise<number> {
  await live.list();
  return eventsOf(live.logs(), 'index-updated').length;
}
