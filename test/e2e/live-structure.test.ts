/**
 * Live updates over real stdio, changes to the shape of the catalog: a skill directory deleted and recreated (in two
 * steps, and at once), nested skills added and removed inside a skill, and a `SKILL.md` broken then fixed (withdrawn
 * with a diagnostic on stderr, then back). Both a 2025-era and a 2026-07-28 host.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import {
  type BaseTree,
  LIVE_ERAS,
  type LiveServer,
  type LogLine,
  makeBaseTree,
  startOnBaseTree,
  stopLive,
  writeAtomically,
  writeFilesAtomically,
} from '../helpers/live.js';
import { eventsOf } from '../helpers/logs.js';
import { makeTree, skillMd } from '../helpers/tree.js';

/** stderr `diagnostic` events (warn lines) about `file` with rule `rule`. */
function diagnosticsFor(logs: readonly LogLine[], file: string, rule: string): LogLine[] {
  return eventsOf(logs, 'diagnostic', { level: 30, file, rule });
}

describe.each(LIVE_ERAS)('live structure, era $label', (era) => {
  let tree: BaseTree;
  let server: LiveServer | undefined;
  const extra: string[] = [];
  beforeEach(async () => {
    tree = await makeBaseTree();
    server = await startOnBaseTree(tree, era);
  });
  afterEach(async () => {
    await stopLive(server, tree.root, ...extra.splice(0));
    server = undefined;
  });

  it('a skill directory deleted is withdrawn; recreated, it comes back with its new files', async () => {
    const live = server!;
    let mark = live.mark();
    await fsp.rm(tree.beta.dir, { recursive: true, force: true });
    await converge(live, [tree.alpha, tree.inner]);
    await live.settle();
    // Withdrawn URIs are announced by list_changed, never by `updated` (they have no new digest).
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });

    mark = live.mark();
    await fsp.mkdir(tree.beta.dir);
    await writeFilesAtomically(tree.root, {
      'beta/notes.txt': 'beta notes, recreated\n',
      'beta/assets/data.bin': new Uint8Array([1, 2, 3, 4, 5]),
      'beta/SKILL.md': skillMd('beta', 'Beta skill, recreated.'),
    });
    await converge(live, tree.all);
    await live.settle();
    // The subscribed files that are back are announced as updated: a host that held them has a new version to read.
    expect(live.heardSince(mark)).toEqual({
      listChanged: true,
      updated: ['skill://beta/SKILL.md', 'skill://beta/assets/data.bin'],
    });
    expect((await live.connection.skills.get(tree.beta.uri)).skill.frontmatter['description']).toBe(
      'Beta skill, recreated.',
    );
    await live.verifyReads(tree.all);
  });

  it('a subscribed file deleted, then created again with other bytes, is announced as updated', async () => {
    const live = server!;
    const guide = 'skill://alpha/references/guide.md';
    const file = path.join(tree.alpha.dir, 'references', 'guide.md');
    let mark = live.mark();
    await fsp.rm(file);
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });

    mark = live.mark();
    await writeAtomically(file, '# Guide\n\nWritten again, other bytes.\n');
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [guide] });
    await live.verifyReads(tree.all);
  });

  it('a skill directory deleted and recreated at once (rm -rf && cp -r) ends with the new files', async () => {
    const live = server!;
    const stage = await makeTree({
      'beta/SKILL.md': `${skillMd('beta', 'Beta skill.')}\nCopied over.\n`,
      'beta/notes.txt': 'beta notes, copied\n',
      'beta/assets/data.bin': new Uint8Array([9, 8, 7]),
    });
    extra.push(stage);
    const mark = live.mark();
    await fsp.rm(tree.beta.dir, { recursive: true, force: true });
    await fsp.cp(path.join(stage, 'beta'), tree.beta.dir, { recursive: true });
    await converge(live, tree.all);
    await live.settle();
    const heard = live.heardSince(mark);
    // Whether one rebuild saw both steps (same URIs, new digests) or the withdrawal came first (list_changed, and
    // re-added URIs are not `updated`), only subscribed beta URIs may be updated, and without a list change both are.
    expect(
      heard.updated.filter((uri) => uri !== 'skill://beta/SKILL.md' && uri !== 'skill://beta/assets/data.bin'),
    ).toEqual([]);
    if (!heard.listChanged) expect(heard.updated).toEqual(['skill://beta/SKILL.md', 'skill://beta/assets/data.bin']);
    await live.verifyReads(tree.all);
  });

  it('nested skills added inside a skill are published with their files in every enclosing entry, and withdrawn when removed', async () => {
    const live = server!;
    const helper = { uri: 'skill://alpha/helper/SKILL.md', dir: path.join(tree.alpha.dir, 'helper') };
    const assets = { uri: 'skill://beta/assets/SKILL.md', dir: path.join(tree.beta.dir, 'assets') };

    let mark = live.mark();
    await writeFilesAtomically(tree.alpha.dir, {
      'helper/tool.md': 'a tool\n',
      'helper/SKILL.md': skillMd('helper', 'Helper nested in alpha.'),
    });
    const listed = await converge(live, [...tree.all, helper]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    const alphaUris = listed.find((skill) => skill.uri === tree.alpha.uri)?.resources;
    expect(Array.isArray(alphaUris) && alphaUris.map((resource) => resource.uri)).toContain(
      'skill://alpha/helper/tool.md',
    );

    // An existing directory becomes a nested skill: its files keep their URIs and digests, so nothing is `updated`.
    mark = live.mark();
    await writeAtomically(path.join(assets.dir, 'SKILL.md'), skillMd('assets', 'Assets of beta, now a skill.'));
    await converge(live, [...tree.all, helper, assets]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });

    mark = live.mark();
    await fsp.rm(helper.dir, { recursive: true });
    await fsp.rm(path.join(assets.dir, 'SKILL.md'));
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });

    mark = live.mark();
    await fsp.rm(tree.inner.dir, { recursive: true });
    await converge(live, [tree.alpha, tree.beta]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    await live.verifyReads([tree.alpha, tree.beta]);
  });

  // On POSIX `\` is an ordinary character of a name: a directory `grp\x` is one directory, not `grp/x` (on Windows no
  // name can hold it). Created outside every skill, it and the skill in it must be served once they appear.
  it.skipIf(process.platform === 'win32')(
    'a directory whose name holds a backslash, created with a skill in it, is served (POSIX)',
    async () => {
      const live = server!;
      const grouped = { uri: 'skill://grp%5Cx/tool/SKILL.md', dir: path.join(tree.root, 'grp\\x', 'tool') };
      const mark = live.mark();
      await fsp.mkdir(path.join(tree.root, 'grp\\x'));
      await writeFilesAtomically(tree.root, {
        'grp\\x/tool/a\\b.md': 'a file whose name holds a backslash\n',
        'grp\\x/tool/SKILL.md': skillMd('tool', 'In a backslashed folder.'),
      });
      await converge(live, [...tree.all, grouped]);
      await live.settle();
      expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
      // A later edit inside it is followed too (the walk watches the directory under its real name).
      await writeAtomically(path.join(grouped.dir, 'a\\b.md'), 'edited, and longer than before\n');
      await converge(live, [...tree.all, grouped]);
      await live.verifyReads([grouped]);
    },
  );

  it('a SKILL.md broken is withdrawn with one diagnostic on stderr, and comes back when fixed', async () => {
    const live = server!;
    const betaManifest = path.join(tree.beta.dir, 'SKILL.md');
    let mark = live.mark();
    await writeAtomically(betaManifest, skillMd('not-beta', 'Beta skill.'));
    await converge(live, [tree.alpha, tree.inner]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    const [diagnostic, ...more] = diagnosticsFor(live.logs(), betaManifest, 'name-mismatch');
    expect(more).toEqual([]);
    expect(diagnostic).toMatchObject({
      severity: 'error',
      skipped: 'skill',
      hint: expect.stringContaining('name: beta'),
    });

    mark = live.mark();
    await writeAtomically(betaManifest, skillMd('beta', 'Beta skill, fixed.'));
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({
      listChanged: true,
      updated: ['skill://beta/SKILL.md', 'skill://beta/assets/data.bin'],
    });
    expect((await live.connection.skills.get(tree.beta.uri)).skill.frontmatter['description']).toBe(
      'Beta skill, fixed.',
    );
    expect(diagnosticsFor(live.logs(), betaManifest, 'name-mismatch')).toHaveLength(1);

    // An enclosing skill that breaks leaves its nested skill published, files and digests untouched.
    const alphaManifest = path.join(tree.alpha.dir, 'SKILL.md');
    mark = live.mark();
    await writeAtomically(alphaManifest, '---\nname: alpha\n---\n\n# Alpha without a description\n');
    await converge(live, [tree.inner, tree.beta]);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    expect(diagnosticsFor(live.logs(), alphaManifest, 'required-fields')).toHaveLength(1);

    mark = live.mark();
    await writeAtomically(alphaManifest, skillMd('alpha', 'Alpha skill one.'));
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({
      listChanged: true,
      updated: ['skill://alpha/SKILL.md', 'skill://alpha/references/guide.md'],
    });
    await live.verifyReads(tree.all);
  });
});
