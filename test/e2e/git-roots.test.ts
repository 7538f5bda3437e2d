/**
 * Git roots through the CLI, over real stdio and real git (bare repositories on disk, and over smart HTTP on
 * 127.0.0.1 through `git http-backend`): a pinned tag served byte-exact with its provenance in `_meta`; a branch
 * followed after a push within `--git-poll` (plus a few seconds), with `list_changed` and the new commit in `_meta`;
 * the cache served once the remote is gone; an unknown ref exits non-zero naming the ref, without a stack trace;
 * `manifest --check` naming the commit that changed; the cache hint (`ttlMs`) of a pinned commit.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { sha256 } from '../helpers/disk.js';
import { type GitHttpServer, startGitHttp } from '../helpers/git-http.js';
import { createRemote, type TestRemote } from '../helpers/git-repo.js';
import { waitFor } from '../helpers/live.js';
import { logLines } from '../helpers/logs.js';
import { connect, type Connection, ERAS, rawRequest } from '../helpers/server.js';
import { makeTempDir, removeTree, skillMd } from '../helpers/tree.js';

const PROVENANCE = 'dev.skills-serve/source';

/** A remote holding `skills/alpha` (with a binary file) at tag v1 on main. */
async function makeRemote(): Promise<{ remote: TestRemote; v1: string }> {
  const remote = await createRemote();
  const v1 = await remote.commit({
    'skills/alpha/SKILL.md': skillMd('alpha', 'Alpha, from git.'),
    'skills/alpha/assets/data.bin': Buffer.from([0, 1, 2, 255, 254, 13, 10]),
    'README.md': 'not served: outside the subdirectory\n',
  });
  remote.tag('v1');
  return { remote, v1 };
}

describe('git roots', () => {
  const cleanup: string[] = [];
  let connection: Connection | undefined;
  let http: GitHttpServer | undefined;
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    await http?.close();
    http = undefined;
    for (const dir of cleanup.splice(0)) await removeTree(dir);
  });

  it.each(['file', 'http'] as const)(
    'serves a pinned tag byte-exact with its provenance, over %s; the cache once the remote is gone',
    async (transport) => {
      const { remote, v1 } = await makeRemote();
      const cache = await makeTempDir();
      cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
      if (transport === 'http') http = await startGitHttp(remote.projectRoot);
      const url = transport === 'file' ? remote.fileUrl : `${http?.base ?? ''}/${remote.name}`;
      const arg = `git+${url}#v1:skills`;
      connection = await connect([arg, '--cache-dir', cache], ERAS[2]);
      const { skills } = await connection.skills.list();
      expect(skills.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
      const entry = skills[0]!;
      expect(entry.resources).toEqual(
        [
          {
            uri: 'skill://alpha/SKILL.md',
            digest: sha256(skillMd('alpha', 'Alpha, from git.')),
            size: Buffer.byteLength(skillMd('alpha', 'Alpha, from git.')),
          },
          { uri: 'skill://alpha/assets/data.bin', digest: sha256(Buffer.from([0, 1, 2, 255, 254, 13, 10])), size: 7 },
        ].sort((a, b) => (a.uri < b.uri ? -1 : 1)),
      );
      expect((entry as { _meta?: Record<string, unknown> })._meta).toEqual({
        [PROVENANCE]: { source: url, ref: 'v1', commit: v1, subdir: 'skills' },
      });
      const data = await connection.skills.read(entry, 'skill://alpha/assets/data.bin');
      expect([...data.bytes]).toEqual([0, 1, 2, 255, 254, 13, 10]);
      // A pinned tag never changes: a long cache hint.
      expect((await rawRequest(connection, 'skills/list', {}))['ttlMs']).toBe(86_400_000);
      await connection.close();
      connection = undefined;

      // The remote gone: the cached tree is served as it was.
      await http?.close();
      http = undefined;
      await fsp.rm(remote.bare, { recursive: true, force: true });
      connection = await connect([arg, '--cache-dir', cache], ERAS[1]);
      expect((await connection.skills.list()).skills.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    },
  );

  it('follows a branch: a push is served within --git-poll plus a few seconds, with list_changed and the new commit', async () => {
    const { remote } = await makeRemote();
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    connection = await connect(
      [`git+${remote.fileUrl}#main:skills`, '--cache-dir', cache, '--git-poll', '1000'],
      ERAS[1],
    );
    let listChanged = 0;
    connection.client.setNotificationHandler('notifications/resources/list_changed', () => {
      listChanged++;
    });
    expect((await connection.skills.list()).skills.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    const next = await remote.commit({ 'skills/beta/SKILL.md': skillMd('beta', 'Beta, pushed later.') });
    const live = connection;
    await waitFor(async () => (await live.skills.list()).skills.length === 2, { timeoutMs: 10_000 });
    const { skills } = await connection.skills.list();
    expect(
      skills.map((skill) => [
        skill.uri,
        (skill as { _meta?: Record<string, { commit?: string }> })._meta?.[PROVENANCE]?.commit,
      ]),
    ).toEqual([
      ['skill://alpha/SKILL.md', next],
      ['skill://beta/SKILL.md', next],
    ]);
    await waitFor(() => listChanged > 0);
    await connection.skills.read(skills[1]!, 'skill://beta/SKILL.md');
  });

  it('a branch under --no-watch is served as fetched at start, with ttlMs 0 (no poll is coming); a followed one with the time to its next poll', async () => {
    const { remote } = await makeRemote();
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    connection = await connect([`git+${remote.fileUrl}#main:skills`, '--cache-dir', cache, '--no-watch'], ERAS[2]);
    expect((await rawRequest(connection, 'skills/list', {}))['ttlMs']).toBe(0);
    await connection.close();
    connection = await connect(
      [`git+${remote.fileUrl}#main:skills`, '--cache-dir', cache, '--git-poll', '600000'],
      ERAS[2],
    );
    const ttl = (await rawRequest(connection, 'skills/list', {}))['ttlMs'] as number;
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });

  it('SKILLS_SERVE_GIT_ALLOW holds several comma-separated entries; a remote off the list is refused, exit 2', async () => {
    const { remote } = await makeRemote();
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    const root = `git+${remote.fileUrl}#main:skills`;
    const admitted = cli(['manifest', '--cache-dir', cache, root], undefined, {
      SKILLS_SERVE_GIT_ALLOW: `github.com/acme, file://${remote.projectRoot}`,
    });
    expect(admitted.status).toBe(0);
    expect((JSON.parse(admitted.stdout) as { skills: { uri: string }[] }).skills.map((skill) => skill.uri)).toEqual([
      'skill://alpha/SKILL.md',
    ]);
    const refused = cli(['manifest', '--cache-dir', cache, '--git-allow', 'github.com/acme,git.example.com', root]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`is not allowed by --git-allow (allowed: github.com/acme, git.example.com)`);
  });

  it('exits 1 naming an unknown ref, without a stack trace; manifest --check names the commit that changed', async () => {
    const { remote, v1 } = await makeRemote();
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    const unknown = cli(['check', '--cache-dir', cache, `git+${remote.fileUrl}#no-such-branch:skills`]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no-such-branch');
    expect(unknown.stderr).not.toMatch(/\n\s+at /u);

    const saved = path.join(cache, 'manifest.json');
    const first = cli(['manifest', '--cache-dir', cache, `git+${remote.fileUrl}#main:skills`]);
    expect(first.status).toBe(0);
    await fsp.writeFile(saved, first.stdout);
    const v2 = await remote.commit({ 'skills/alpha/notes.md': 'notes added in v2\n' });
    const check = cli(['manifest', '--cache-dir', cache, '--check', saved, `git+${remote.fileUrl}#main:skills`]);
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(
      `~ skill://alpha/SKILL.md: 1 file(s) added, ${PROVENANCE} changed (commit ${v1.slice(0, 12)} → ${v2.slice(0, 12)})`,
    );
    expect(check.stdout).toContain('    + skill://alpha/notes.md');
    // --content-only: the one content change, not every entry's new commit.
    const root = `git+${remote.fileUrl}#main:skills`;
    const content = cli(['manifest', '--cache-dir', cache, '--check', saved, '--content-only', root]);
    expect({ status: content.status, stdout: content.stdout }).toEqual({
      status: 1,
      stdout: [
        `the tree no longer matches ${saved}:`,
        '~ skill://alpha/SKILL.md: 1 file(s) added',
        '    + skill://alpha/notes.md',
        '1 skill(s) differ: 0 added, 0 removed, 0 left out, 1 changed',
        '',
      ].join('\n'),
    });
    // A commit outside the served folder changes every entry's provenance and no content.
    await fsp.writeFile(saved, cli(['manifest', '--cache-dir', cache, root]).stdout);
    await remote.commit({ 'README.md': 'not a skill\n' });
    expect(cli(['manifest', '--cache-dir', cache, '--check', saved, root]).status).toBe(1);
    expect(cli(['manifest', '--cache-dir', cache, '--check', saved, '--content-only', root])).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^manifest matches: \d+ skill\(s\)\n$/u) as unknown,
    });
  });

  it.each(['check', 'manifest'] as const)(
    '%s logs fetching a git root at info by default; --log-level warn quiets it',
    async (command) => {
      const { remote, v1 } = await makeRemote();
      const cache = await makeTempDir();
      cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
      const arg = `git+${remote.fileUrl}#main:skills`;
      const loud = cli([command, '--cache-dir', cache, arg]);
      expect(loud.status).toBe(0);
      expect(logLines(loud.stderr)).toMatchObject([
        { level: 30, event: 'git-serving', source: remote.fileUrl, ref: 'main', commit: v1, stale: false },
      ]);
      const quiet = cli([command, '--cache-dir', cache, '--log-level', 'warn', arg]);
      expect(quiet).toEqual({ status: 0, stdout: loud.stdout, stderr: '' });
    },
  );
});
