/**
 * The eight watcher behaviour cases of the engine issue, end to end over real stdio, in the default mode (one
 * `fs.watch` per directory, attached by the walk) and with `--poll`: an append; an atomic save (temp file renamed
 * over the target); `mkdir -p a/b/c` then immediate writes; a later write in the new nested directory; `rm -rf` of a
 * skill; `mv` of a skill directory; an edit inside the renamed directory; an unlink. Each case checks the catalog
 * against the disk (every entry mirrors its directory, byte for byte) and that every file reads back verified.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import {
  type BaseTree,
  type ExpectedSkill,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startOnBaseTree,
  stopLive,
} from '../helpers/live.js';
import { skillMd } from '../helpers/tree.js';

const MODES = [
  { label: 'native events', flags: [] as string[] },
  { label: '--poll 100', flags: ['--poll', '100'] },
] as const;

describe.each(MODES)('watcher cases ($label)', ({ flags }) => {
  const era = LIVE_ERAS[0];
  let tree: BaseTree;
  let server: LiveServer | undefined;
  beforeEach(async () => {
    tree = await makeBaseTree();
    server = await startOnBaseTree(tree, era, flags);
  });
  afterEach(async () => {
    await stopLive(server, tree.root);
    server = undefined;
  });

  it('1. an append to a file', async () => {
    await fsp.appendFile(path.join(tree.alpha.dir, 'references', 'guide.md'), 'Appended line.\n');
    await converge(server!, tree.all);
    await server!.verifyReads(tree.all);
  });

  it('2. an atomic save: a temp file written, then renamed over the target', async () => {
    const target = path.join(tree.beta.dir, 'notes.txt');
    const temp = path.join(tree.beta.dir, 'notes.txt.tmp-save');
    await fsp.writeFile(temp, 'beta notes, saved atomically\n');
    await fsp.rename(temp, target);
    await converge(server!, tree.all);
    await server!.verifyReads(tree.all);
  });

  it('3. mkdir -p of a new skill with subdirectories, then files written at once', async () => {
    const dir = path.join(tree.root, 'group', 'gamma', 'references', 'deep');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(
      path.join(tree.root, 'group', 'gamma', 'SKILL.md'),
      skillMd('gamma', 'Gamma, made with mkdir -p.'),
    );
    await fsp.writeFile(path.join(dir, 'one.md'), 'one\n');
    const gamma: ExpectedSkill = { uri: 'skill://group/gamma/SKILL.md', dir: path.join(tree.root, 'group', 'gamma') };
    await converge(server!, [...tree.all, gamma]);
    await server!.verifyReads([gamma]);
  });

  it('4. a later write in a directory made with mkdir -p inside a skill', async () => {
    const dir = path.join(tree.alpha.dir, 'new', 'nested', 'dir');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(path.join(dir, 'first.md'), 'first\n');
    await converge(server!, tree.all);
    await fsp.writeFile(path.join(dir, 'second.md'), 'second, written after the directory was indexed\n');
    await converge(server!, tree.all);
    await fsp.writeFile(path.join(dir, 'first.md'), 'first, edited later\n');
    await converge(server!, tree.all);
    await server!.verifyReads(tree.all);
  });

  it('5. rm -rf of a skill', async () => {
    await fsp.rm(tree.beta.dir, { recursive: true, force: true });
    await converge(server!, [tree.alpha, tree.inner]);
  });

  it('6 and 7. mv of a skill directory, then an edit inside the renamed directory', async () => {
    const moved = path.join(tree.root, 'archive', 'beta');
    await fsp.mkdir(path.dirname(moved), { recursive: true });
    await fsp.rename(tree.beta.dir, moved);
    const beta: ExpectedSkill = { uri: 'skill://archive/beta/SKILL.md', dir: moved };
    await converge(server!, [tree.alpha, tree.inner, beta]);
    await fsp.writeFile(path.join(moved, 'notes.txt'), 'beta notes, edited after the move\n');
    await fsp.writeFile(path.join(moved, 'assets', 'more.txt'), 'a new file in a subdirectory of the moved skill\n');
    await converge(server!, [tree.alpha, tree.inner, beta]);
    await server!.verifyReads([beta]);
  });

  it('8. an unlink', async () => {
    await fsp.unlink(path.join(tree.alpha.dir, 'scripts', 'run.sh'));
    const listed = await converge(server!, tree.all);
    const alpha = listed.find((skill) => skill.uri === tree.alpha.uri);
    expect(alpha?.resources === 'dynamic' ? [] : alpha?.resources.map((resource) => resource.uri)).toEqual([
      'skill://alpha/SKILL.md',
      'skill://alpha/inner/SKILL.md',
      'skill://alpha/inner/notes.md',
      'skill://alpha/references/guide.md',
    ]);
  });
});
