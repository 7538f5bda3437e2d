/**
 * Special and unreadable files inside skills (docs/ARCHITECTURE.md, "Policies": special files): skipped with one
 * warning each, never opened in a way that blocks, and the rest of the skill is served.
 */
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { findFile, findSkill } from '../../src/index/snapshot.js';
import { fileOnDisk } from '../helpers/disk.js';
import { skillMd, tempTrees } from '../helpers/tree.js';
import { buildOne, diagKeys, expectSnapshotMatchesDisk, resourcesOf, servedFileUris, skillUris } from './snapshot.js';

/** A FIFO that is opened for reading without O_NONBLOCK hangs the build: bound each such test. */
const FIFO_TIMEOUT_MS = 10_000;
const RUNNING_AS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

describe('special files', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());
  const { tree } = temps;

  it(
    'skips a FIFO inside a skill with special-file, without hanging, and serves the rest',
    async () => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill holding a FIFO.'),
        's/notes.md': 'Notes.\n',
        's/pipe': { fifo: true },
      });
      expect((await fsp.lstat(path.join(root, 's/pipe'))).isFIFO()).toBe(true);
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual([
        { severity: 'warning', rule: 'special-file', file: path.join(root, 's/pipe') },
      ]);
      expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md'))).toEqual([
        fileOnDisk('skill://s/SKILL.md', path.join(root, 's/SKILL.md')),
        fileOnDisk('skill://s/notes.md', path.join(root, 's/notes.md')),
      ]);
      expect(findFile(snapshot, 'skill://s/pipe')).toBeUndefined();
    },
    FIFO_TIMEOUT_MS,
  );

  it(
    'skips a symlink to a FIFO (and the FIFO) with special-file each',
    async () => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill linking a FIFO.'),
        's/pipes/pipe': { fifo: true },
        's/pipe-link': { symlink: 'pipes/pipe' },
      });
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual([
        { severity: 'warning', rule: 'special-file', file: path.join(root, 's/pipe-link') },
        { severity: 'warning', rule: 'special-file', file: path.join(root, 's/pipes/pipe') },
      ]);
      expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md']);
      expectSnapshotMatchesDisk(snapshot);
    },
    FIFO_TIMEOUT_MS,
  );

  it(
    'does not treat a FIFO named SKILL.md as a skill',
    async () => {
      const root = await tree({
        'fake/SKILL.md': { fifo: true },
        'fake/notes.md': 'Notes.\n',
        'real/SKILL.md': skillMd('real', 'A real skill.'),
      });
      const snapshot = await buildOne(root);
      expect(diagKeys(snapshot)).toEqual([
        { severity: 'warning', rule: 'special-file', file: path.join(root, 'fake/SKILL.md') },
      ]);
      expect(skillUris(snapshot)).toEqual(['skill://real/SKILL.md']);
      expect(findFile(snapshot, 'skill://fake/notes.md')).toBeUndefined();
    },
    FIFO_TIMEOUT_MS,
  );

  it('does not treat a directory named SKILL.md, or a lowercase skill.md, as a skill', async () => {
    const root = await tree({
      'fake/SKILL.md/x.md': 'X.\n',
      'lower/skill.md': skillMd('lower', 'Manifest name in the wrong case.'),
      'real/SKILL.md': skillMd('real', 'A real skill.'),
    });
    const snapshot = await buildOne(root);
    expect(snapshot.diagnostics).toEqual([]);
    expect(skillUris(snapshot)).toEqual(['skill://real/SKILL.md']);
  });

  it('skips a file whose name is not valid UTF-8 with unrepresentable-name', async () => {
    const root = await tree({ 's/SKILL.md': skillMd('s', 'Skill with a Latin-1 file name.'), 's/ok.md': 'OK.\n' });
    await fsp.writeFile(
      Buffer.concat([Buffer.from(`${root}/s/caf`), Buffer.from([0xe9]), Buffer.from('.md')]),
      'Latin-1 name.\n',
    );
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'unrepresentable-name', file: path.join(root, 's', 'caf\uFFFD.md') },
    ]);
    expect(servedFileUris(snapshot)).toEqual(['skill://s/SKILL.md', 'skill://s/ok.md']);
    expectSnapshotMatchesDisk(snapshot);
  });

  it.skipIf(RUNNING_AS_ROOT)('skips an unreadable file with unreadable-file and serves the rest', async () => {
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill with a locked file.'),
      's/locked.md': 'Locked.\n',
      's/ok.md': 'OK.\n',
    });
    await fsp.chmod(path.join(root, 's/locked.md'), 0o000);
    const snapshot = await buildOne(root);
    expect(diagKeys(snapshot)).toEqual([
      { severity: 'warning', rule: 'unreadable-file', file: path.join(root, 's/locked.md') },
    ]);
    expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md')).map((row) => row.uri)).toEqual([
      'skill://s/SKILL.md',
      'skill://s/ok.md',
    ]);
  });

  it.skipIf(RUNNING_AS_ROOT)(
    'skips an unlistable directory with unreadable-directory and serves the rest',
    async () => {
      const root = await tree({
        's/SKILL.md': skillMd('s', 'Skill with a locked folder.'),
        's/locked/a.md': 'A.\n',
        's/ok.md': 'OK.\n',
      });
      await fsp.chmod(path.join(root, 's/locked'), 0o000);
      try {
        const snapshot = await buildOne(root);
        expect(diagKeys(snapshot)).toEqual([
          { severity: 'warning', rule: 'unreadable-directory', file: path.join(root, 's/locked') },
        ]);
        expect(resourcesOf(findSkill(snapshot, 'skill://s/SKILL.md')).map((row) => row.uri)).toEqual([
          'skill://s/SKILL.md',
          'skill://s/ok.md',
        ]);
      } finally {
        await fsp.chmod(path.join(root, 's/locked'), 0o755);
      }
    },
  );

  it('skips files and folders that vanish between the listing and their reading, without a diagnostic', async () => {
    const root = await tree({
      's/SKILL.md': skillMd('s', 'Skill saved atomically, over and over.'),
      's/notes.md': 'Notes.\n',
    });
    // An editor's atomic save, in a loop: write a temporary, rename it over the file. The temporary is listed by
    // some builds and gone when they open it (ENOENT): that is a change in progress, not an unreadable file.
    // Folders likewise: `mkdir -p` then `rm -rf`, listed by the parent and gone when listed themselves.
    const script =
      'while :; do printf x > s/notes.md.tmp; mv s/notes.md.tmp s/notes.md; mkdir -p s/tmp/a/b; rm -rf s/tmp; done';
    // Its own process group, killed whole: a `mkdir -p` of the loop outliving the shell would write into the tree
    // while it is removed (ENOTEMPTY, seen once in a CI run).
    const saver = spawn('sh', ['-c', script], {
      cwd: root,
      stdio: 'ignore',
      detached: true,
    });
    try {
      const seen = new Set<string>();
      for (let build = 0; build < 300; build++) {
        const snapshot = await buildOne(root);
        for (const diagnostic of diagKeys(snapshot)) seen.add(`${diagnostic.rule} ${diagnostic.file}`);
        expect(findFile(snapshot, 'skill://s/SKILL.md')).toBeDefined();
      }
      expect([...seen]).toEqual([]);
    } finally {
      const exited = new Promise((resolve) => saver.once('exit', resolve));
      process.kill(-(saver.pid as number), 'SIGKILL');
      await exited;
    }
  });
});
