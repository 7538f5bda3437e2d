/**
 * The window between a directory's listing and its watch (docs/ARCHITECTURE.md, "Watching"): the first snapshot is
 * served before the directories it listed are watched, and each watch, once set, is followed by a check of what
 * changed in its directory since the listing. A `--require` preload stops the server (SIGSTOP) inside `fs.watch` of
 * one directory, before that watch exists and after the walk listed the directory; the test edits, adds and removes
 * there while it is stopped, lets it go on, and waits for the exact state and notifications over real stdio.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import {
  type BaseTree,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startLive,
  stopLive,
  waitFor,
} from '../helpers/live.js';
import { eventsOf, logLines, waitForEvent } from '../helpers/logs.js';
import { addToTree, makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { procStatus, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

let preloadDir: string;
let preload: string;
beforeAll(async () => {
  preloadDir = await makeTempDir();
  preload = path.join(preloadDir, 'pause-at-watch.cjs');
  // Stops the process the first time it is about to watch the directory PAUSE_AT_WATCH names (its real path).
  await fsp.writeFile(
    preload,
    [
      "const fs = require('node:fs');",
      'const watch = fs.watch;',
      'const target = process.env.PAUSE_AT_WATCH;',
      'let paused = false;',
      'fs.watch = function (file, ...rest) {',
      "  if (!paused && String(file) === target) { paused = true; process.kill(process.pid, 'SIGSTOP'); }",
      '  return watch.call(this, file, ...rest);',
      '};',
      '',
    ].join('\n'),
  );
});
afterAll(() => removeTree(preloadDir));

/** The environment that stops the server inside `fs.watch(dir)`; `dir` is a real path (temp trees are made so). */
function pauseAtWatchOf(dir: string): Record<string, string> {
  return { NODE_OPTIONS: `--require ${preload}`, PAUSE_AT_WATCH: dir };
}

/** Resolves once the process `pid` is stopped (`T` in `/proc/<pid>/status`). */
async function stopped(pid: number, stderr: () => string): Promise<void> {
  await waitFor(() => procStatus(pid).state === 'T', {
    describe: () => `state ${procStatus(pid).state}; stderr ${stderr()}`,
  });
}

describe('changes between the first walk and the watches (server stopped inside fs.watch of one directory)', () => {
  let root: string | undefined;
  let wire: Wire | undefined;
  afterEach(async () => {
    wire?.child.kill('SIGCONT');
    await stopAll();
    if (root !== undefined) await removeTree(root);
    root = undefined;
    wire = undefined;
  });

  /** Starts the server on the base tree, stopped inside the watch of `rel`; returns once it is stopped. */
  async function startStoppedAt(rel: string): Promise<BaseTree> {
    const tree = await makeBaseTree();
    root = tree.root;
    wire = spawnWire({ args: [tree.root], env: pauseAtWatchOf(path.join(tree.root, rel)) });
    await stopped(wire.pid, wire.stderr);
    return tree;
  }

  /** Lets the server go on, then waits until it serves the disk; returns the parsed stderr. */
  async function resumeAndConverge(tree: BaseTree): Promise<void> {
    const server = wire!;
    server.child.kill('SIGCONT');
    await server.handshake();
    await converge(server, tree.root);
    await waitForEvent(server.stderr, 'watching');
    // The first snapshot was the tree before the window: 3 skills, 8 files.
    expect(eventsOf(logLines(server.stderr()), 'index-built')).toMatchObject([{ skills: 3, files: 8, generation: 1 }]);
  }

  it('in a directory inside a skill: a file edited in place, one added, one removed', async () => {
    const tree = await startStoppedAt('alpha/references');
    const references = path.join(tree.alpha.dir, 'references');
    await fsp.writeFile(path.join(references, 'guide.md'), '# Guide\n\nEdited in the window.\n');
    await fsp.writeFile(path.join(references, 'added.md'), 'added in the window\n');
    await fsp.rm(path.join(tree.alpha.dir, 'scripts', 'run.sh')); // alpha/scripts is not watched yet either
    await resumeAndConverge(tree);
  });

  it('in the root: a skill added, a skill removed, a nested skill removed', async () => {
    const tree = await startStoppedAt('');
    await addToTree(tree.root, {
      'gamma/SKILL.md': skillMd('gamma', 'Added in the window.'),
      'gamma/notes.md': 'gamma notes\n',
    });
    await fsp.rm(tree.beta.dir, { recursive: true });
    await fsp.rm(tree.inner.dir, { recursive: true });
    await resumeAndConverge(tree);
  });
});

describe.each(LIVE_ERAS)('changes between a rebuild and the watch of a new directory, era $label', (era) => {
  let tree: BaseTree | undefined;
  let outside: string | undefined;
  let server: LiveServer | undefined;
  afterEach(async () => {
    server?.wire.child.kill('SIGCONT');
    await stopLive(server, tree?.root, outside);
    server = undefined;
  });

  it('a skill moved in, then edited, added to and removed from before its watch: the exact notifications', async () => {
    tree = await makeBaseTree();
    const gammaDir = path.join(tree.root, 'gamma');
    const notes = 'skill://gamma/notes.md';
    server = await startLive([tree.root], {
      era,
      subscribe: [notes, 'skill://gamma/old.md'],
      env: pauseAtWatchOf(gammaDir),
    });
    const live = server;
    await converge(live, tree.all);
    // Made elsewhere and moved in whole, so the rebuild that adds it walks it complete.
    outside = await makeTree({
      'gamma/SKILL.md': skillMd('gamma', 'Gamma, moved in.'),
      'gamma/notes.md': 'gamma notes v1\n',
      'gamma/old.md': 'to be removed in the window\n',
    });
    const mark = live.mark();
    await fsp.rename(path.join(outside, 'gamma'), gammaDir);
    await stopped(live.wire.pid, live.wire.stderr);

    const notesV2 = 'gamma notes v2, written in the window\n';
    await fsp.writeFile(path.join(gammaDir, 'notes.md'), notesV2);
    await fsp.writeFile(path.join(gammaDir, 'new.md'), 'new in the window\n');
    await fsp.rm(path.join(gammaDir, 'old.md'));
    live.wire.child.kill('SIGCONT');

    const gamma = { uri: 'skill://gamma/SKILL.md', dir: gammaDir };
    const listed = await converge(live, [...tree.all, gamma]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [notes, 'skill://gamma/old.md'] });
    const entry = listed.find((skill) => skill.uri === gamma.uri);
    const resources = entry?.resources === 'dynamic' ? [] : (entry?.resources ?? []);
    expect(resources.map((resource) => resource.uri).sort()).toEqual([gamma.uri, 'skill://gamma/new.md', notes]);
    expect(resources.find((resource) => resource.uri === notes)).toMatchObject({
      digest: sha256(notesV2),
      size: notesV2.length,
    });
    await live.verifyReads([...tree.all, gamma]);
  });
});
