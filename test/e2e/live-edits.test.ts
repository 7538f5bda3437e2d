/**
 * Live updates over real stdio, file edits: in-place writes, editors' atomic saves, slow writes of a large file, and
 * files under ignored names. Each case asserts the entries afterwards against the disk, the exact notifications a
 * 2025-era host (subscribed with `resources/subscribe`) and a 2026-07-28 host (`subscriptions/listen`) hear, and that
 * every file reads back verified.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import type { Skill } from '@modelcontextprotocol/client/ext/skills';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import {
  type BaseTree,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startOnBaseTree,
  stopLive,
  writeAtomically,
} from '../helpers/live.js';
import { errorCodeOf, rawRequest } from '../helpers/server.js';
import { addToTree, skillMd } from '../helpers/tree.js';

/** The `{ uri, digest, size }` entry of `fileUri` in the listed skill `skillUri`. */
function resourceOf(listed: readonly Skill[], skillUri: string, fileUri: string): unknown {
  const skill = listed.find((candidate) => candidate.uri === skillUri);
  return skill?.resources === 'dynamic' ? undefined : skill?.resources.find((resource) => resource.uri === fileUri);
}

describe.each(LIVE_ERAS)('live edits, era $label', (era) => {
  let tree: BaseTree;
  let server: LiveServer | undefined;
  beforeEach(async () => {
    tree = await makeBaseTree();
    server = await startOnBaseTree(tree, era);
  });
  afterEach(async () => {
    await stopLive(server, tree.root);
    server = undefined;
  });

  it('an in-place edit updates exactly the edited URIs, in every skill holding them, without list_changed', async () => {
    const live = server!;
    // A file of the nested skill alone: it belongs to the enclosing skill too, whose entry must follow.
    const notes = 'inner notes v2\n';
    let mark = live.mark();
    await fsp.writeFile(path.join(tree.inner.dir, 'notes.md'), notes);
    let listed = await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://alpha/inner/notes.md'] });
    for (const skillUri of [tree.alpha.uri, tree.inner.uri]) {
      expect(resourceOf(listed, skillUri, 'skill://alpha/inner/notes.md')).toEqual({
        uri: 'skill://alpha/inner/notes.md',
        digest: sha256(notes),
        size: notes.length,
      });
      expect((await live.connection.skills.get(skillUri)).skill).toEqual(
        listed.find((skill) => skill.uri === skillUri),
      );
    }

    const guide = '# Guide\n\nSecond version, a little longer.\n';
    mark = live.mark();
    await fsp.writeFile(path.join(tree.alpha.dir, 'references', 'guide.md'), guide);
    await fsp.writeFile(path.join(tree.alpha.dir, 'scripts', 'run.sh'), '#!/bin/sh\necho two\n'); // not subscribed
    listed = await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://alpha/references/guide.md'] });
    expect(resourceOf(listed, tree.alpha.uri, 'skill://alpha/references/guide.md')).toEqual({
      uri: 'skill://alpha/references/guide.md',
      digest: sha256(guide),
      size: Buffer.byteLength(guide),
    });
    await live.verifyReads(tree.all);
  });

  it('an atomic save (temp file + rename over) is one update, never a withdrawal; a new description is list_changed', async () => {
    const live = server!;
    const guide = '# Guide\n\nSaved atomically.\n';
    let mark = live.mark();
    await writeAtomically(path.join(tree.alpha.dir, 'references', 'guide.md'), guide);
    await writeAtomically(path.join(tree.beta.dir, 'notes.txt'), 'beta notes v2, saved atomically\n'); // not subscribed
    const listed = await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://alpha/references/guide.md'] });
    expect(resourceOf(listed, tree.alpha.uri, 'skill://alpha/references/guide.md')).toMatchObject({
      digest: sha256(guide),
    });

    mark = live.mark();
    const manifest = skillMd('beta', 'Beta skill, described anew.');
    await writeAtomically(path.join(tree.beta.dir, 'SKILL.md'), manifest);
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: ['skill://beta/SKILL.md'] });
    const beta = (await live.connection.skills.get(tree.beta.uri)).skill;
    expect(beta.frontmatter['description']).toBe('Beta skill, described anew.');
    expect(resourceOf([beta], tree.beta.uri, tree.beta.uri)).toEqual({
      uri: tree.beta.uri,
      digest: sha256(manifest),
      size: manifest.length,
    });
    await live.verifyReads(tree.all);
  });

  it('after unsubscribing from a URI, its changes are no longer announced with `updated`', async () => {
    const live = server!;
    await live.unsubscribe('skill://alpha/references/guide.md');
    const mark = live.mark();
    await fsp.writeFile(
      path.join(tree.alpha.dir, 'references', 'guide.md'),
      '# Guide\n\nChanged after unsubscribing.\n',
    );
    await fsp.writeFile(path.join(tree.inner.dir, 'notes.md'), 'inner notes, still subscribed\n');
    await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://alpha/inner/notes.md'] });
  });

  it('a large file written slowly, in many chunks, ends with the digest of its final bytes', async () => {
    const live = server!;
    const CHUNK = 128 * 1024;
    const big = Buffer.alloc(32 * CHUNK);
    for (let index = 0; index < big.length; index++) big[index] = (index * 31 + (index >> 12)) & 0xff;
    const mark = live.mark();
    const handle = await fsp.open(path.join(tree.beta.dir, 'assets', 'data.bin'), 'w');
    for (let offset = 0; offset < big.length; offset += CHUNK) {
      await handle.write(big, offset, CHUNK, offset);
      // Pacing of the simulated slow writer (longer than the debounce, so rebuilds see partial files), not a wait.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await handle.close();
    const listed = await converge(live, tree.all);
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: ['skill://beta/assets/data.bin'] });
    expect(resourceOf(listed, tree.beta.uri, 'skill://beta/assets/data.bin')).toEqual({
      uri: 'skill://beta/assets/data.bin',
      digest: sha256(big),
      size: big.length,
    });
    const beta = listed.find((skill) => skill.uri === tree.beta.uri)!;
    const read = await live.connection.skills.read(beta, 'assets/data.bin');
    expect(read.verified).toBe(true);
    expect(Buffer.from(read.bytes).equals(big)).toBe(true);
  });

  it('files under ignored names are never published and cause no notification', async () => {
    const live = server!;
    const before = await live.list();
    const mark = live.mark();
    await addToTree(tree.root, {
      'alpha/.guide.md.swp': 'vim swap\n',
      'alpha/references/.guide.md.swp': 'vim swap\n',
      'alpha/node_modules/x/index.js': 'module.exports = 1;\n',
      'alpha/node_modules/x/SKILL.md': skillMd('x', 'A skill inside node_modules.'),
      'node_modules/x/SKILL.md': skillMd('x', 'A skill inside node_modules.'),
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/objects/ab/cdef0123': 'blob\n',
      'alpha/.git/config': '[core]\n',
      '.hidden/SKILL.md': skillMd('hidden', 'A skill in a dot directory.'),
      'beta/.DS_Store': new Uint8Array([0, 0, 0, 1, 66, 117, 100, 49]),
    });
    await fsp.appendFile(path.join(tree.alpha.dir, '.guide.md.swp'), 'more swap\n');
    await fsp.rm(path.join(tree.root, '.git', 'objects', 'ab', 'cdef0123'));
    await live.settle();

    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: [] });
    expect(await live.list()).toEqual(before);
    for (const uri of [
      'skill://alpha/.guide.md.swp',
      'skill://alpha/node_modules/x/index.js',
      'skill://node_modules/x/SKILL.md',
      'skill://beta/.DS_Store',
    ]) {
      expect(await errorCodeOf(live.connection.client.readResource({ uri }))).toBe(-32602);
    }
    expect(
      await errorCodeOf(rawRequest(live.connection, 'skills/get', { uri: 'skill://node_modules/x/SKILL.md' })),
    ).toBe(-32602);
    const children = (await live.connection.skills.readDirectory('skill://alpha')).resources
      .map((child) => child.name)
      .sort();
    expect(children).toEqual(['SKILL.md', 'inner', 'references', 'scripts']);
  });
});
