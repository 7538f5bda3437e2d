/**
 * Git roots with real git, over `file://` and smart HTTP on 127.0.0.1 (docs/git-roots.md): a pinned tag
 * materialized byte-exact and indexed like a folder, served from the cache afterwards without the network, a branch
 * followed after a push, the cache served when the remote is gone, and unknown refs and subdirectories refused by
 * name.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { buildSnapshot } from '../../src/index/build.js';
import { entryOf } from '../../src/index/entry.js';
import { findFile } from '../../src/index/snapshot.js';
import { GitSourceError } from '../../src/roots/git/errors.js';
import type { Checkout } from '../../src/roots/git/root.js';
import { sha256 } from '../helpers/disk.js';
import { committedTree, createRemote, diskTree, git } from '../helpers/git-repo.js';
import { gitSpec, makeGitRoot, recordingLogger, remoteUrl, TRANSPORTS } from '../helpers/git-root.js';
import { waitFor } from '../helpers/live.js';
import { makeTempDir, skillMd } from '../helpers/tree.js';

const BINARY = randomBytes(70_000);

/** A tree with what a checkout would alter or follow: CRLF text under eol attributes, binary, links, odd names. */
const TREE = {
  'skills/pdf/SKILL.md': skillMd('pdf', 'Summarize PDF files.'),
  // Committed under `text eol=crlf`: the blob holds LF endings; a checkout would write CRLF.
  'skills/pdf/references/guide.md': '# Guide\r\nA checkout would convert these line endings.\r\n',
  'skills/pdf/assets/logo.bin': BINARY,
  'skills/pdf/file with spaces é.txt': 'unicode name\n',
  'skills/pdf/run.sh': '#!/bin/sh\necho never run\n',
  'skills/pdf/link-inside.md': { symlink: 'references/guide.md' },
  'skills/pdf/link-outside': { symlink: '/etc/hostname' },
  'skills/.gitattributes': '*.md text eol=crlf ident\n',
  'skills/pdf/ident.md': '$Id$\n',
  'README.md': 'not served: outside the subdirectory\n',
};

describe.each(TRANSPORTS)('git roots over %s', (transport) => {
  it('materializes a pinned tag byte-exact, indexes it like a folder, then serves it from the cache offline', async () => {
    const remote = await createRemote();
    await remote.commit(TREE, 'first');
    git(remote.work, ['update-index', '--chmod=+x', 'skills/pdf/run.sh']);
    git(remote.work, ['commit', '--quiet', '-m', 'exec bit']);
    git(remote.work, ['push', '--quiet', 'origin', 'main']);
    remote.tag('v1.0');
    const tagged = git(remote.work, ['rev-parse', 'v1.0^{commit}']);
    await remote.commit({ 'skills/pdf/SKILL.md': skillMd('pdf', 'A later description.') }, 'after the tag');
    const { url, server } = await remoteUrl(remote, transport);
    const cacheDir = await makeTempDir();

    const root = await makeGitRoot(gitSpec(url, 'v1.0:skills'), { cacheDir });
    const checkout = await root.start();
    expect(checkout.kind).toBe('tag');
    expect(checkout.stale).toBe(false);
    expect(checkout.provenance).toEqual({ source: url, ref: 'v1.0', commit: tagged, subdir: 'skills' });
    expect(path.dirname(checkout.root.dir)).toBe(path.dirname(path.dirname(checkout.root.dir)) + path.sep + 'trees');
    expect(path.basename(checkout.root.dir).startsWith(`${tagged}-`)).toBe(true);
    // Every file holds its blob's bytes: no eol conversion, no ident expansion; links inside the tree stay links,
    // the absolute one is not written.
    const { 'pdf/link-outside': outside, ...expected } = committedTree(remote.bare, tagged, 'skills');
    expect(outside).toEqual({ symlink: '/etc/hostname' });
    expect([...Object.keys(expected), 'pdf/link-outside'].sort()).toEqual(
      Object.keys(TREE)
        .filter((rel) => rel.startsWith('skills/'))
        .map((rel) => rel.slice('skills/'.length))
        .sort(),
    );
    expect(await diskTree(checkout.root.dir)).toEqual(expected);
    expect((await diskTree(checkout.root.dir))['pdf/assets/logo.bin']).toEqual(BINARY);
    expect(((await diskTree(checkout.root.dir))['pdf/ident.md'] as Buffer).toString()).toBe('$Id$\n');
    expect(((await diskTree(checkout.root.dir))['pdf/references/guide.md'] as Buffer).toString()).toBe(
      '# Guide\nA checkout would convert these line endings.\n',
    );
    expect(checkout.materialized).toEqual({
      files: 9,
      bytes: Object.values(expected).reduce((sum, item) => sum + (Buffer.isBuffer(item) ? item.length : 0), 0),
      skipped: [{ path: 'pdf/link-outside', reason: 'link-outside-tree' }],
    });
    // Nothing is executable.
    expect((await fsp.stat(path.join(checkout.root.dir, 'pdf', 'run.sh'))).mode & 0o111).toBe(0);

    // The index serves the tree like a folder: digests of the committed bytes; the link out of the tree is gone.
    const snapshot = await buildSnapshot([{ dir: checkout.root.dir, prefix: ['team'] }]);
    const skill = snapshot.skills.get('skill://team/pdf/SKILL.md');
    const resources = skill === undefined ? [] : entryOf(skill).resources;
    expect(resources.find((resource) => resource.uri === 'skill://team/pdf/assets/logo.bin')).toMatchObject({
      digest: sha256(BINARY),
      size: BINARY.length,
    });
    expect(findFile(snapshot, 'skill://team/pdf/link-inside.md')).toBeDefined();
    expect(findFile(snapshot, 'skill://team/pdf/link-outside')).toBeUndefined();

    // Immutable: a second server on the same cache does not contact the remote at all, even once it is gone.
    await root.stop();
    const requestsBefore = server?.requests.length;
    await server?.close();
    await fsp.rm(remote.bare, { recursive: true });
    const again = await makeGitRoot(gitSpec(url, 'v1.0:skills'), { cacheDir });
    const second = await again.start();
    expect(second.root.dir).toBe(checkout.root.dir);
    expect(second.stale).toBe(false);
    expect(second.materialized).toBeUndefined();
    expect(server?.requests.length).toBe(requestsBefore);
  });

  it('pins a commit id, also one that is no branch tip', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'Second.') });
    const { url } = await remoteUrl(remote, transport);
    const checkout = await (await makeGitRoot(gitSpec(url, first))).start();
    expect(checkout.kind).toBe('commit');
    expect(checkout.provenance.commit).toBe(first);
    expect(await diskTree(checkout.root.dir)).toEqual(committedTree(remote.bare, first));
  });

  it('follows a branch: a push is picked up within the poll interval, materialized beside the old tree, announced, and the old tree is deleted on release', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url } = await remoteUrl(remote, transport);
    const logger = recordingLogger();
    const root = await makeGitRoot(gitSpec(url, 'main'), { pollMs: 1000, logger });
    const events: [Checkout, Checkout][] = [];
    root.on('commit', (next, previous) => events.push([next, previous]));
    const initial = await root.start();
    expect(initial.kind).toBe('branch');
    expect(initial.provenance.commit).toBe(first);

    const second = await remote.commit({ 'beta/SKILL.md': skillMd('beta', 'Added.') }, 'add beta');
    await waitFor(() => events.length === 1, { describe: () => logger.text() });
    const [next, previous] = events[0] as [Checkout, Checkout];
    expect(previous).toBe(initial);
    expect(next.provenance).toEqual({ source: url, ref: 'main', commit: second, subdir: '' });
    expect(next.root.dir).not.toBe(initial.root.dir);
    expect(await diskTree(next.root.dir)).toEqual(committedTree(remote.bare, second));
    // The old tree stays until its reference is released, then goes; a second release is a bug, and says so.
    expect(await diskTree(initial.root.dir)).toEqual(committedTree(remote.bare, first));
    await root.release(initial);
    await expect(fsp.stat(initial.root.dir)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(root.release(initial)).rejects.toThrow(
      new RangeError(`the tree of commit ${first} holds no reference`),
    );
    // The current tree is never deleted, even with no reference left.
    await root.release(next);
    expect((await fsp.stat(next.root.dir)).isDirectory()).toBe(true);
    // Nothing new: a poll announces nothing.
    expect(await root.pollNow()).toBe(false);
    expect(events).toHaveLength(1);
  });

  it('serves the last fetched commit with a warning when the remote is gone, and fails naming the URL and ref without a cache', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url, server } = await remoteUrl(remote, transport);
    const cacheDir = await makeTempDir();
    const root = await makeGitRoot(gitSpec(url, 'main'), { cacheDir, pollMs: 1000 });
    const checkout = await root.start();
    await root.stop();
    await server?.close();
    await fsp.rm(remote.bare, { recursive: true });

    const logger = recordingLogger();
    const offline = await makeGitRoot(gitSpec(url, 'main'), { cacheDir, pollMs: 1000, logger });
    const cached = await offline.start();
    expect(cached).toMatchObject({
      stale: true,
      kind: 'branch',
      provenance: { commit: first, ref: 'main', source: url },
    });
    expect(cached.root.dir).toBe(checkout.root.dir);
    expect(logger.warnings()).toHaveLength(1);
    expect(logger.warnings()[0]).toMatch(
      new RegExp(
        `^cannot fetch ${escape(url)} \\(ref main\\): .+; serving commit ${first} fetched \\S+ from the cache$`,
        'u',
      ),
    );
    // Polls during the outage do not repeat the warning.
    await offline.pollNow();
    expect(logger.warnings()).toHaveLength(1);

    const fresh = await makeGitRoot(gitSpec(url, 'main'));
    const failure = await fresh.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GitSourceError);
    expect(failure).toMatchObject({ reason: 'unreachable', code: 'ROOT_UNUSABLE' });
    expect((failure as Error).message).toMatch(
      new RegExp(
        `^cannot fetch ${escape(url)} \\(ref main\\): .+; no earlier fetch of ${escape(url)}#main is cached in `,
        'u',
      ),
    );
    expect((failure as Error).message).not.toContain('\n');
  });

  it('refuses an unknown branch, an unknown commit and a missing subdirectory by name', async () => {
    const remote = await createRemote();
    await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url } = await remoteUrl(remote, transport);
    await expect((await makeGitRoot(gitSpec(url, 'no-such-branch'))).start()).rejects.toMatchObject({
      reason: 'unknown-ref',
      message: `${url} has no branch or tag "no-such-branch"`,
    });
    const missing = 'a'.repeat(40);
    await expect((await makeGitRoot(gitSpec(url, missing))).start()).rejects.toMatchObject({
      reason: 'unknown-ref',
      message: `${url} has no commit ${missing} (or does not serve it by id)`,
    });
    await expect((await makeGitRoot(gitSpec(url, 'main:nope/skills'))).start()).rejects.toMatchObject({
      reason: 'unknown-subdir',
      message: expect.stringMatching(
        new RegExp(
          `^${escape(url)}#main:nope/skills: there is no directory "nope/skills" at commit [0-9a-f]{40}$`,
          'u',
        ),
      ),
    });
    await expect((await makeGitRoot(gitSpec(url, 'main:alpha/SKILL.md'))).start()).rejects.toMatchObject({
      reason: 'unknown-subdir',
    });
  });

  it('follows the default branch when no ref is given', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url } = await remoteUrl(remote, transport);
    const checkout = await (await makeGitRoot(gitSpec(url))).start();
    expect(checkout).toMatchObject({ kind: 'branch', provenance: { ref: 'HEAD', commit: first } });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}
