/**
 * Git roots against hostile repositories and configurations, with real git on loopback only (docs/git-roots.md):
 * hooks, filters, fsmonitor, templates and `ext::` rewrites never run (sentinel files prove it, and the
 * same traps are shown to fire under a plain `git clone`); trees and downloads over the limits are refused and leave
 * nothing behind; the allowlist refuses before any request; a token is sent as HTTP auth and never appears in an
 * error, a log line, provenance or the cache; ssh works through the user's ssh command; submodules are skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { GitSourceError } from '../../src/roots/git/errors.js';
import { parseGitAllow } from '../../src/roots/git/url.js';
import { committedTree, createRemote, diskTree, git, isolatedGitEnv } from '../helpers/git-repo.js';
import { gitSpec, makeGitRoot, recordingLogger, remoteUrl, TRANSPORTS } from '../helpers/git-root.js';
import { addToTree, makeTempDir, skillMd } from '../helpers/tree.js';

/** Every hook git knows of (githooks(5)); each trap writes a sentinel file named after itself. */
const HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
  'post-index-change',
  'pre-upload-pack',
  'post-upload-pack',
];

/** A user git configuration that runs a trap for everything a repository could trigger on a normal clone. */
async function armTraps(): Promise<{
  env: Record<string, string>;
  sentinels: string;
  fired(): Promise<string[]>;
  hooksDir: string;
}> {
  const base = await makeTempDir();
  const sentinels = path.join(base, 'sentinels');
  const hooksDir = path.join(base, 'hooks');
  const templateHooks = path.join(base, 'template', 'hooks');
  await Promise.all([fsp.mkdir(sentinels), fsp.mkdir(hooksDir), fsp.mkdir(templateHooks, { recursive: true })]);
  const trap = async (file: string, name: string, body = ''): Promise<void> => {
    await fsp.writeFile(file, `#!/bin/sh\ntouch '${path.join(sentinels, name)}'\n${body}`, { mode: 0o755 });
  };
  for (const hook of HOOKS) {
    await trap(path.join(hooksDir, hook), `hook-${hook}`);
    await trap(path.join(templateHooks, hook), `template-${hook}`);
  }
  await trap(path.join(base, 'smudge'), 'filter-smudge', 'echo SMUDGED\n');
  await trap(path.join(base, 'clean'), 'filter-clean', 'cat\n');
  await trap(path.join(base, 'lfs-smudge'), 'filter-lfs-smudge', 'echo LFS-SMUDGED\n');
  await trap(path.join(base, 'fsmonitor'), 'fsmonitor');
  await trap(path.join(base, 'ext'), 'ext-transport');
  const config = path.join(base, 'gitconfig');
  await fsp.writeFile(
    config,
    [
      '[core]',
      `\thooksPath = ${hooksDir}`,
      `\tfsmonitor = ${path.join(base, 'fsmonitor')}`,
      '[init]',
      `\ttemplateDir = ${path.join(base, 'template')}`,
      '[filter "evil"]',
      `\tsmudge = ${path.join(base, 'smudge')}`,
      `\tclean = ${path.join(base, 'clean')}`,
      '\trequired = true',
      '[filter "lfs"]',
      `\tsmudge = ${path.join(base, 'lfs-smudge')}`,
      '\trequired = true',
      '[protocol "ext"]',
      '\tallow = always',
      `[url "ext::${path.join(base, 'ext')}"]`,
      '\tinsteadOf = file:///rewrite-me/skills.git',
      '',
    ].join('\n'),
  );
  return {
    env: isolatedGitEnv({ GIT_CONFIG_GLOBAL: config }),
    sentinels,
    hooksDir,
    fired: async () => (await fsp.readdir(sentinels)).sort(),
  };
}

/** A repository whose attributes route every file through the `evil` filter and `*.bin` through LFS. */
async function trappedRemote(): Promise<Awaited<ReturnType<typeof createRemote>>> {
  const remote = await createRemote();
  await remote.commit({
    '.gitattributes': '* filter=evil\n*.bin filter=lfs diff=lfs merge=lfs -text\n',
    'alpha/SKILL.md': skillMd('alpha', 'Filtered on checkout.'),
    'alpha/model.bin': 'version https://git-lfs.github.com/spec/v1\noid sha256:0000\nsize 4\n',
  });
  return remote;
}

describe.each(TRANSPORTS)('nothing from the repository runs (%s)', (transport) => {
  it('runs no hook, template hook, clean/smudge/LFS filter or fsmonitor, and writes the blobs unfiltered', async () => {
    const traps = await armTraps();
    const remote = await trappedRemote();
    // Hooks in the remote repository too.
    for (const hook of HOOKS)
      await fsp.copyFile(path.join(traps.hooksDir, hook), path.join(remote.bare, 'hooks', hook));
    await fsp.chmod(path.join(remote.bare, 'hooks'), 0o755);
    const { url } = await remoteUrl(remote, transport);

    const root = await makeGitRoot(gitSpec(url, 'main'), { env: traps.env });
    const checkout = await root.start();
    expect(await diskTree(checkout.root.dir)).toEqual(committedTree(remote.bare, checkout.provenance.commit));
    expect(await root.pollNow()).toBe(false);
    expect(await traps.fired()).toEqual([]);

    // The traps are armed: an ordinary clone with the same configuration fires them.
    const clone = path.join(await makeTempDir(), 'clone');
    execFileSync('git', ['clone', '--quiet', remote.fileUrl, clone], { env: traps.env, stdio: 'pipe' });
    expect(await traps.fired()).toEqual(
      expect.arrayContaining([
        'filter-smudge',
        'filter-lfs-smudge',
        'hook-post-checkout',
        'hook-reference-transaction',
      ]),
    );
    expect(await fsp.readFile(path.join(clone, 'alpha', 'SKILL.md'), 'utf8')).toBe('SMUDGED\n');
  });
});

describe('transports', () => {
  it('never follows a URL rewritten to ext:: (the same rewrite runs a command under plain git)', async () => {
    const traps = await armTraps();
    const root = await makeGitRoot(gitSpec('file:///rewrite-me/skills.git', 'main'), { env: traps.env });
    const failure = (await root.start().catch((error: unknown) => error)) as GitSourceError;
    expect(failure).toBeInstanceOf(GitSourceError);
    expect(failure.reason).toBe('unreachable');
    expect(failure.message).toMatch(
      /^cannot fetch file:\/\/\/rewrite-me\/skills\.git \(ref main\): .*transport 'ext' not allowed/u,
    );
    expect(await traps.fired()).toEqual([]);
    spawnSync('git', ['ls-remote', 'file:///rewrite-me/skills.git'], { env: traps.env, stdio: 'pipe' });
    expect(await traps.fired()).toEqual(['ext-transport']);
  });

  it('fetches over ssh through the user ssh command (GIT_SSH_COMMAND), never touching the named host', async () => {
    const remote = await createRemote();
    const commit = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'Over ssh.') });
    const dir = await makeTempDir();
    const ssh = path.join(dir, 'fake-ssh');
    const log = path.join(dir, 'ssh-calls');
    // Runs the remote command here instead of on the host: the last argument is `git-upload-pack '<path>'`.
    await fsp.writeFile(ssh, `#!/bin/sh\necho "$@" >> '${log}'\nfor last; do :; done\nexec sh -c "$last"\n`, {
      mode: 0o755,
    });
    const env = isolatedGitEnv({ GIT_SSH_COMMAND: ssh, GIT_SSH_VARIANT: 'simple' });
    const checkout = await (
      await makeGitRoot(gitSpec(`ssh://git@skills.example.invalid${remote.bare}`, 'main'), { env })
    ).start();
    expect(checkout.provenance).toEqual({
      source: `ssh://git@skills.example.invalid${remote.bare}`,
      ref: 'main',
      commit,
      subdir: '',
    });
    expect(await diskTree(checkout.root.dir)).toEqual(committedTree(remote.bare, commit));
    expect(await fsp.readFile(log, 'utf8')).toContain(`git@skills.example.invalid git-upload-pack '${remote.bare}'`);
  });
});

describe.each(TRANSPORTS)('limits (%s)', (transport) => {
  /** The cache holds no tree and no partial tree. */
  async function expectNothingMaterialized(cacheDir: string): Promise<void> {
    const [remoteDir] = await fsp.readdir(path.join(cacheDir, 'git'));
    const entries = async (name: string): Promise<string[]> =>
      fsp.readdir(path.join(cacheDir, 'git', remoteDir as string, name)).catch(() => []);
    expect(await entries('trees')).toEqual([]);
    expect(await entries('tmp')).toEqual([]);
  }

  it('refuses a tree with more files or bytes than allowed, before writing anything', async () => {
    const remote = await createRemote();
    const commit = await remote.commit(
      Object.fromEntries(Array.from({ length: 5 }, (_, index) => [`s/f${index}.txt`, 'x'.repeat(1000)])),
    );
    const { url } = await remoteUrl(remote, transport);
    const byFiles = await makeTempDir();
    await expect(
      (await makeGitRoot(gitSpec(url, 'main'), { cacheDir: byFiles, limits: { maxFiles: 4 } })).start(),
    ).rejects.toMatchObject({
      reason: 'over-limits',
      message: `${url}#main at commit ${commit} is not served: its tree holds 5 files, over the limit of 4 (--git-max-files)`,
    });
    await expectNothingMaterialized(byFiles);
    const byBytes = await makeTempDir();
    await expect(
      (await makeGitRoot(gitSpec(url, 'main'), { cacheDir: byBytes, limits: { maxBytes: 4999 } })).start(),
    ).rejects.toMatchObject({
      reason: 'over-limits',
      message: `${url}#main at commit ${commit} is not served: its tree holds 5000 bytes, over the limit of 4999 (--git-max-bytes)`,
    });
    await expectNothingMaterialized(byBytes);
    // At the limit exactly, it is served.
    const checkout = await (
      await makeGitRoot(gitSpec(url, 'main'), { limits: { maxFiles: 5, maxBytes: 5000 } })
    ).start();
    expect(checkout.materialized).toEqual({ files: 5, bytes: 5000, skipped: [] });
  });

  it('stops a download over the fetch limit and keeps none of it', async () => {
    const remote = await createRemote();
    await remote.commit({ 'big/SKILL.md': skillMd('big', 'Large.'), 'big/blob.bin': randomBytes(3 * 1024 * 1024) });
    const { url } = await remoteUrl(remote, transport);
    const cacheDir = await makeTempDir();
    const failure = (await (
      await makeGitRoot(gitSpec(url, 'main'), { cacheDir, limits: { maxFetchBytes: 1024 * 1024 } })
    )
      .start()
      .catch((error: unknown) => error)) as GitSourceError;
    expect(failure).toBeInstanceOf(GitSourceError);
    expect(failure.reason).toBe('over-limits');
    expect(failure.message).toMatch(
      new RegExp(
        `^fetching ${url.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')} \\(ref main\\) was stopped at \\d+ bytes: over the download limit of 1048576 bytes \\(--git-max-fetch-bytes\\)$`,
        'u',
      ),
    );
    await expectNothingMaterialized(cacheDir);
    const [remoteDir] = await fsp.readdir(path.join(cacheDir, 'git'));
    expect(await fsp.readdir(path.join(cacheDir, 'git', remoteDir as string, 'repo.git', 'objects', 'pack'))).toEqual(
      [],
    );
  });

  it('keeps serving the current commit when a pushed commit is over the limits, and follows the next one', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url } = await remoteUrl(remote, transport);
    const logger = recordingLogger();
    const root = await makeGitRoot(gitSpec(url, 'main'), { limits: { maxFiles: 3 }, logger });
    const commits: string[] = [];
    root.on('commit', (next) => commits.push(next.provenance.commit));
    await root.start();
    const tooBig = await remote.commit(
      Object.fromEntries(Array.from({ length: 4 }, (_, index) => [`alpha/f${index}.txt`, 'x'])),
    );
    expect(await root.pollNow()).toBe(false);
    expect(await root.pollNow()).toBe(false);
    expect(logger.warnings()).toEqual([
      `${url}#main at commit ${tooBig} is not served: its tree holds 5 files, over the limit of 3 (--git-max-files); still serving commit ${first}`,
    ]);
    expect(commits).toEqual([]);
    const fixed = await remote.commit({}, 'trim', { remove: ['alpha/f0.txt', 'alpha/f1.txt', 'alpha/f2.txt'] });
    expect(await root.pollNow()).toBe(true);
    expect(commits).toEqual([fixed]);
  });
});

describe('an outage while following a branch', () => {
  it('is warned about once however many polls, and its end is logged once, when a poll goes through', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const logger = recordingLogger();
    const root = await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { logger });
    await root.start();
    await fsp.rename(remote.bare, `${remote.bare}.away`);
    for (let poll = 0; poll < 3; poll++) expect(await root.pollNow()).toBe(false);
    await fsp.rename(`${remote.bare}.away`, remote.bare);
    expect(await root.pollNow()).toBe(false);
    expect(await root.pollNow()).toBe(false);
    const events = logger.lines
      .map((line) => (line.object as { event?: string }).event)
      .filter((event) => event === 'git-warning' || event === 'git-reachable');
    expect(events).toEqual(['git-warning', 'git-reachable']);
    expect(logger.lines.find((line) => (line.object as { event?: string }).event === 'git-warning')?.message).toMatch(
      new RegExp(`; still serving commit ${first}$`, 'u'),
    );
  });
});

describe('a pushed commit without the subdirectory', () => {
  it('keeps serving the current commit, warns once however many polls, and follows the commit that restores it', async () => {
    const remote = await createRemote();
    const first = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'First.') });
    const cacheDir = await makeTempDir();
    const logger = recordingLogger();
    const root = await makeGitRoot(gitSpec(remote.fileUrl, 'main:skills'), { cacheDir, logger });
    const commits: string[] = [];
    root.on('commit', (next) => commits.push(next.provenance.commit));
    await root.start();
    const moved = await remote.commit({ 'elsewhere/alpha/SKILL.md': skillMd('alpha', 'Moved.') }, 'move', {
      remove: ['skills/alpha/SKILL.md'],
    });
    expect(await root.pollNow()).toBe(false);
    expect(await root.pollNow()).toBe(false);
    expect(await root.pollNow()).toBe(false);
    expect(logger.warnings()).toEqual([
      `${remote.fileUrl}#main:skills: there is no directory "skills" at commit ${moved}; still serving commit ${first}`,
    ]);
    // A restart meanwhile starts from the last commit fetched, with the same one warning, and polls quietly.
    const restartLogger = recordingLogger();
    const restarted = await makeGitRoot(gitSpec(remote.fileUrl, 'main:skills'), { cacheDir, logger: restartLogger });
    expect((await restarted.start()).provenance.commit).toBe(first);
    expect(await restarted.pollNow()).toBe(false);
    expect(restartLogger.warnings()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${remote.fileUrl.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}#main:skills: there is no directory "skills" at commit ${moved}; serving commit ${first} fetched .* from the cache$`,
          'u',
        ),
      ),
    ]);
    await restarted.stop();
    const restored = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'Back.') });
    expect(await root.pollNow()).toBe(true);
    expect(commits).toEqual([restored]);
    expect(logger.warnings()).toHaveLength(1);
  });
});

describe('allowlist', () => {
  it('follows no HTTP redirect, with or without a token: a remote cannot lead git somewhere else', async () => {
    const remote = await createRemote();
    await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url: target, server } = await remoteUrl(remote, 'http');
    // An allowed address that answers every request with a redirect to another server.
    const redirector = http.createServer((request, response) => {
      response.writeHead(301, { location: `${target.replace(/\/skills\.git$/u, '')}${request.url ?? '/'}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const port = (redirector.address() as { port: number }).port;
      for (const token of [undefined, 'a-token-for-the-redirect-test']) {
        const root = await makeGitRoot(gitSpec(`http://127.0.0.1:${port}/skills.git`, 'main'), {
          ...(token === undefined ? {} : { token }),
        });
        await expect(root.start()).rejects.toMatchObject({ reason: 'unreachable' });
      }
      expect(server?.requests).toEqual([]);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  it('refuses a remote off the --git-allow list before any request, and admits one on it', async () => {
    const remote = await createRemote();
    await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const { url, server } = await remoteUrl(remote, 'http');
    const refused = await makeGitRoot(gitSpec(url, 'main'), {
      allow: [parseGitAllow('github.com/acme'), parseGitAllow('127.0.0.1/other')],
    });
    await expect(refused.start()).rejects.toMatchObject({
      reason: 'not-allowed',
      code: 'CONFIG_INVALID',
      message: `git root ${url} is not allowed by --git-allow (allowed: github.com/acme, 127.0.0.1/other)`,
    });
    expect(server?.requests).toEqual([]);
    await expect(
      (await makeGitRoot(gitSpec(url, 'main'), { allow: [parseGitAllow('127.0.0.1/skills')] })).start(),
    ).resolves.toMatchObject({ kind: 'branch' });
    await expect(
      (await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { allow: [parseGitAllow('127.0.0.1')] })).start(),
    ).rejects.toMatchObject({ reason: 'not-allowed' });
    await expect(
      (
        await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { allow: [parseGitAllow(`file://${remote.projectRoot}`)] })
      ).start(),
    ).resolves.toMatchObject({ kind: 'branch' });
  });
});

describe('SKILLS_SERVE_GIT_TOKEN', () => {
  const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
  const WRONG = `tok-${randomBytes(12).toString('hex')}`;
  const basic = (token: string): string => `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  /** Every form in which a token could leak. */
  const forms = (token: string): string[] => [token, Buffer.from(`x-access-token:${token}`).toString('base64')];

  /** All bytes of every file under a directory, as latin1 text. */
  async function allText(dir: string): Promise<string> {
    const out: string[] = [];
    const walk = async (abs: string): Promise<void> => {
      for (const entry of await fsp.readdir(abs, { withFileTypes: true })) {
        const child = path.join(abs, entry.name);
        if (entry.isDirectory()) await walk(child);
        else if (entry.isFile()) out.push(await fsp.readFile(child, 'latin1'));
      }
    };
    await walk(dir);
    return out.join('\n');
  }

  it('is sent as HTTP Basic auth and appears in no error, log line, provenance or cache file, even with git tracing on', async () => {
    const remote = await createRemote();
    const commit = await remote.commit({ 'alpha/SKILL.md': skillMd('alpha', 'Private.') });
    const { url, server } = await remoteUrl(remote, 'http', {
      basicAuth: { username: 'x-access-token', password: TOKEN },
    });
    const tracing = isolatedGitEnv({
      GIT_TRACE: '1',
      GIT_TRACE_CURL: '1',
      GIT_CURL_VERBOSE: '1',
      GIT_TRACE_PACKET: '1',
    });

    // Without a token the private repository is refused (and git does not wait for a password prompt).
    const anonymous = await makeGitRoot(gitSpec(url, 'main'), { env: tracing });
    await expect(anonymous.start()).rejects.toMatchObject({
      reason: 'unreachable',
      message: expect.stringContaining(`cannot fetch ${url} (ref main): `),
    });

    // A wrong token: sent, refused, and absent from the error and the logs.
    const wrongLogger = recordingLogger();
    const wrongCache = await makeTempDir();
    const wrong = await makeGitRoot(gitSpec(url, 'main'), {
      env: tracing,
      token: WRONG,
      logger: wrongLogger,
      cacheDir: wrongCache,
    });
    const failure = (await wrong.start().catch((error: unknown) => error)) as GitSourceError;
    expect(failure).toBeInstanceOf(GitSourceError);
    expect(failure.message).toMatch(
      new RegExp(`^cannot fetch ${url.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')} \\(ref main\\): `, 'u'),
    );
    expect(server?.requests.some((request) => request.authorization === basic(WRONG))).toBe(true);
    for (const form of forms(WRONG)) {
      expect(`${failure.message}\n${String(failure.stack)}\n${wrongLogger.text()}`).not.toContain(form);
      expect(await allText(wrongCache)).not.toContain(form);
    }

    // The right token: every answered request carried it.
    const logger = recordingLogger();
    const cacheDir = await makeTempDir();
    server?.requests.splice(0);
    const root = await makeGitRoot(gitSpec(url, 'main'), {
      env: tracing,
      token: TOKEN,
      logger,
      cacheDir,
      pollMs: 1000,
    });
    const checkout = await root.start();
    expect(checkout.provenance).toEqual({ source: url, ref: 'main', commit, subdir: '' });
    expect(await diskTree(checkout.root.dir)).toEqual(committedTree(remote.bare, commit));
    expect(server?.requests.length).toBeGreaterThan(0);
    expect(
      server?.requests
        .filter((request) => request.status === 200)
        .every((request) => request.authorization === basic(TOKEN)),
    ).toBe(true);
    // An outage while polling: the warning carries git's reason, never the token.
    await server?.close();
    await root.pollNow();
    expect(logger.warnings()).toHaveLength(1);
    for (const form of forms(TOKEN)) {
      expect(`${JSON.stringify(checkout)}\n${logger.text()}\n${logger.warnings().join('\n')}`).not.toContain(form);
      expect(await allText(cacheDir)).not.toContain(form);
    }
  });
});

describe('symlinks in a repository', () => {
  it('keeps links that resolve inside the tree; removes and reports absolute, climbing, chained and dangling ones', async () => {
    const victim = await makeTempDir();
    await addToTree(victim, { 'secret/SKILL.md': skillMd('secret', 'Not part of the repository.') });
    const remote = await createRemote();
    await remote.commit({
      'skills/alpha/SKILL.md': skillMd('alpha', 'Has links.'),
      'skills/alpha/notes.md': 'Notes.\n',
      'skills/alpha/inside': { symlink: 'notes.md' },
      'skills/alpha/sibling': { symlink: '../beta' },
      'skills/beta/SKILL.md': skillMd('beta', 'Linked to.'),
      'skills/absolute': { symlink: path.join(victim, 'secret') },
      'skills/alpha/climbing': { symlink: '../../../../../../../../..' + path.join(victim, 'secret') },
      'skills/up': { symlink: '../README.md' },
      // No single link's text leaves the tree, but the chain does: here -> top, parent -> here/.. (one level up).
      'skills/here': { symlink: '.' },
      'skills/parent': { symlink: 'here/..' },
      'skills/nowhere': { symlink: 'alpha/missing' },
      'README.md': 'Top.\n',
    });
    // A target no file system resolves (longer than PATH_MAX): git stores it, and it is left out like the others.
    const longTarget = git(remote.work, ['hash-object', '-w', '--stdin'], 'x/'.repeat(3000));
    git(remote.work, ['update-index', '--add', '--cacheinfo', `120000,${longTarget},skills/long`]);
    git(remote.work, ['commit', '--quiet', '-m', 'a link with a very long target']);
    git(remote.work, ['push', '--quiet', 'origin', 'main']);
    const logger = recordingLogger();
    const checkout = await (await makeGitRoot(gitSpec(remote.fileUrl, 'main:skills'), { logger })).start();
    const { commit } = checkout.provenance;
    const removed = ['absolute', 'alpha/climbing', 'long', 'nowhere', 'parent', 'up'];
    expect(checkout.materialized?.skipped).toEqual(
      removed.map((link) => ({ path: link, reason: 'link-outside-tree' })),
    );
    const tree = checkout.root.dir;
    expect(await fsp.readlink(path.join(tree, 'alpha', 'inside'))).toBe('notes.md');
    expect(await fsp.readlink(path.join(tree, 'alpha', 'sibling'))).toBe('../beta');
    expect(await fsp.readlink(path.join(tree, 'here'))).toBe('.');
    for (const gone of removed)
      await expect(fsp.lstat(path.join(tree, ...gone.split('/')))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        object: {
          event: 'git-links-skipped',
          source: remote.fileUrl,
          ref: 'main',
          commit,
          paths: removed,
        },
        message: `${remote.fileUrl}#main:skills at commit ${commit}: 6 symlink(s) resolving outside the tree or to nothing removed, so not served: ${removed.join(', ')}`,
      },
    ]);
  });
});

describe('submodules', () => {
  it('skips a submodule (gitlink) and reports it, in the checkout and in one warning; nothing is fetched for it', async () => {
    const remote = await createRemote();
    await remote.commit({
      'alpha/SKILL.md': skillMd('alpha', 'Has a submodule.'),
      '.gitmodules': '[submodule "vendor"]\n\tpath = vendor\n\turl = https://example.invalid/vendor.git\n',
    });
    git(remote.work, ['update-index', '--add', '--cacheinfo', `160000,${'b'.repeat(40)},vendor`]);
    git(remote.work, ['commit', '--quiet', '-m', 'submodule']);
    git(remote.work, ['push', '--quiet', 'origin', 'main']);
    const logger = recordingLogger();
    const checkout = await (await makeGitRoot(gitSpec(remote.fileUrl, 'main'), { logger })).start();
    expect(checkout.materialized?.skipped).toEqual([{ path: 'vendor', reason: 'submodule' }]);
    const { commit } = checkout.provenance;
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        object: { event: 'git-submodules-skipped', source: remote.fileUrl, ref: 'main', commit, paths: ['vendor'] },
        message: `${remote.fileUrl}#main at commit ${commit}: 1 submodule(s) not fetched, so not served: vendor`,
      },
    ]);
    expect(logger.lines.find((line) => line.level === 'info')?.object).toEqual({
      event: 'git-serving',
      source: remote.fileUrl,
      ref: 'main',
      commit,
      stale: false,
      files: checkout.materialized?.files,
      bytes: checkout.materialized?.bytes,
    });
    expect(Object.keys(await diskTree(checkout.root.dir)).sort()).toEqual(['.gitmodules', 'alpha/SKILL.md']);
  });
});
