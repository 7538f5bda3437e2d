/**
 * Verified git sources (`--git-allowed-signers`, docs/git-roots.md "Verified commits") through the built CLI, with
 * real git and real keys: `ssh-keygen -t ed25519` keys made in the test's temp directory, commits signed with
 * `git -c gpg.format=ssh -c user.signingkey=… commit -S`, a bare repository over `file://`. A signed commit is served
 * with its signer in every entry's `_meta` over stdio; an unsigned or foreign-signed commit fails the start with the
 * exact message; a followed branch that moves to such commits keeps serving the verified one with a
 * `git-signature-refused` line, a `/readyz` reason and a counter, until a signed commit comes.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { createRemote, type TestRemote } from '../helpers/git-repo.js';
import { eventsOf, isEvent, type LogLine, waitForEvent } from '../helpers/logs.js';
import { connect, type Connection, ERAS, type HttpServer, startHttpServer } from '../helpers/server.js';
import { makeTempDir, removeTree, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';
import { spawnWire } from '../helpers/wire.js';

const PROVENANCE = 'dev.skills-serve/source';

/** An ed25519 key pair made by `ssh-keygen`: the private key's path and the public key's fingerprint. */
interface Key {
  readonly file: string;
  readonly fingerprint: string;
  readonly publicKey: string;
}

function makeKey(dir: string, name: string): Key {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  // `256 SHA256:… alice (ED25519)`
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' }).split(' ')[1]!;
  const publicKey = execFileSync('cat', [`${file}.pub`], { encoding: 'utf8' })
    .split(' ')
    .slice(0, 2)
    .join(' ');
  return { file, fingerprint, publicKey };
}

/** Keys of alice (listed in the allowed signers file) and mallory (not), and the file. */
async function makeSigners(): Promise<{ dir: string; alice: Key; mallory: Key; allowed: string }> {
  const dir = await makeTempDir();
  const alice = makeKey(dir, 'alice');
  const mallory = makeKey(dir, 'mallory');
  const allowed = path.join(dir, 'allowed_signers');
  await fsp.writeFile(allowed, `# who may publish skills\nalice@example.com namespaces="git" ${alice.publicKey}\n`);
  return { dir, alice, mallory, allowed };
}

/** The provenance of every entry listed, in URI order. */
function provenances(skills: readonly { uri: string }[]): [string, unknown][] {
  return skills.map((skill) => [skill.uri, (skill as { _meta?: Record<string, unknown> })._meta?.[PROVENANCE]]);
}

describe('verified git sources (--git-allowed-signers)', () => {
  const cleanup: string[] = [];
  let connection: Connection | undefined;
  let http: HttpServer | undefined;
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    await http?.stop();
    http = undefined;
    for (const dir of cleanup.splice(0)) await removeTree(dir);
  });

  /** A remote, a cache and the signers, removed after the test. */
  async function setUp(): Promise<{
    remote: TestRemote;
    cache: string;
    signers: Awaited<ReturnType<typeof makeSigners>>;
  }> {
    const remote = await createRemote();
    const cache = await makeTempDir();
    const signers = await makeSigners();
    cleanup.push(cache, signers.dir, remote.projectRoot, path.dirname(remote.work));
    return { remote, cache, signers };
  }

  it('serves a signed commit with its signer in _meta; a branch moving to unsigned and foreign-signed commits keeps serving it until a signed one comes', async () => {
    const { remote, cache, signers } = await setUp();
    const { alice, mallory, allowed } = signers;
    const signed = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'Alpha, signed.') }, 'signed', {
      signingKey: alice.file,
    });
    const url = remote.fileUrl;
    connection = await connect(
      [
        `git+${url}#main:skills`,
        '--cache-dir',
        cache,
        '--git-allowed-signers',
        allowed,
        '--git-poll',
        '1000',
        '--log-level',
        'info',
      ],
      ERAS[1],
    );
    const signer = { principal: 'alice@example.com', key: alice.fingerprint };
    const provenance = (commit: string): unknown => ({ source: url, ref: 'main', commit, subdir: 'skills', signer });
    expect(provenances(await connection.list())).toEqual([['skill://alpha/SKILL.md', provenance(signed)]]);
    const live = connection;
    const stderr = (): string => live.stderr();
    expect((await waitForEvent(stderr, 'git-serving'))['signer']).toEqual(signer);

    // An unsigned commit is refused; the verified commit stays served.
    const unsigned = await remote.commit({ 'skills/beta/SKILL.md': skillMd('beta', 'Beta, unsigned.') }, 'unsigned');
    const refusedUnsigned = await waitForEvent(stderr, 'git-signature-refused', { commit: unsigned });
    expect(refusedUnsigned).toMatchObject({
      level: 40,
      source: url,
      ref: 'main',
      commit: unsigned,
      serving: signed,
      reason: 'it is not signed',
      msg: `${url}#main:skills at commit ${unsigned} is not served: it is not signed (--git-allowed-signers ${allowed}); still serving commit ${signed}`,
    });
    expect(provenances(await connection.list())).toEqual([['skill://alpha/SKILL.md', provenance(signed)]]);

    // A commit signed by a key the file does not list: refused the same way.
    const foreign = await remote.commit({ 'skills/gamma/SKILL.md': skillMd('gamma', 'Gamma, foreign.') }, 'foreign', {
      signingKey: mallory.file,
    });
    const refusedForeign = await waitForEvent(stderr, 'git-signature-refused', { commit: foreign });
    expect(refusedForeign['reason']).toBe(
      `it is signed by a key not in the allowed signers (ED25519 key ${mallory.fingerprint})`,
    );
    expect(refusedForeign['serving']).toBe(signed);
    expect(provenances(await connection.list())).toEqual([['skill://alpha/SKILL.md', provenance(signed)]]);

    // A signed commit on top is served, with everything the branch holds by then.
    const next = await remote.commit({ 'skills/alpha/notes.md': 'notes\n' }, 'signed again', {
      signingKey: alice.file,
    });
    const moved = await waitForEvent(stderr, 'git-moved', { commit: next });
    expect(moved).toMatchObject({ previous: signed, signer });
    await waitFor(async () => (await live.list()).length === 3);
    expect(provenances(await connection.list())).toEqual([
      ['skill://alpha/SKILL.md', provenance(next)],
      ['skill://beta/SKILL.md', provenance(next)],
      ['skill://gamma/SKILL.md', provenance(next)],
    ]);
    // Each refused commit was logged once.
    const refusals = (connection.wire.logs() as LogLine[]).filter((line) => isEvent(line, 'git-signature-refused'));
    expect(refusals.map((line) => line['commit'])).toEqual([unsigned, foreign]);
  });

  it('an unsigned or foreign-signed commit at start, with no verified commit cached, fails with the exact message, exit 1', async () => {
    const { remote, cache, signers } = await setUp();
    const { mallory, allowed } = signers;
    const unsigned = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'Alpha.') }, 'unsigned');
    const root = `git+${remote.fileUrl}#main:skills`;
    const check = cli(['check', '--cache-dir', cache, '--git-allowed-signers', allowed, root]);
    expect({ status: check.status, stdout: check.stdout }).toEqual({ status: 1, stdout: '' });
    expect(eventsOf(check.stderr, 'start-failed').map((line) => [line['code'], line.msg])).toEqual([
      [
        'ROOT_UNUSABLE',
        `${remote.fileUrl}#main:skills at commit ${unsigned} is not served: it is not signed (--git-allowed-signers ${allowed})`,
      ],
    ]);
    // Nothing of the unverified commit was written to be served.
    const trees = await fsp
      .readdir(path.join(cache, 'git'))
      .then((names) =>
        Promise.all(names.map((name) => fsp.readdir(path.join(cache, 'git', name, 'trees')).catch(() => []))),
      );
    expect(trees.flat()).toEqual([]);

    // A tag names the commit whose tree is served: that commit is verified, also when its tree is already in the
    // cache (written by a run without the option).
    remote.tag('v1');
    const tagRoot = `git+${remote.fileUrl}#v1:skills`;
    expect(cli(['manifest', '--cache-dir', cache, tagRoot]).status).toBe(0);
    const tagged = cli(['manifest', '--cache-dir', cache, '--git-allowed-signers', allowed, tagRoot]);
    expect({ status: tagged.status, stdout: tagged.stdout }).toEqual({ status: 1, stdout: '' });
    expect(eventsOf(tagged.stderr, 'start-failed').map((line) => line.msg)).toEqual([
      `${remote.fileUrl}#v1:skills at commit ${unsigned} is not served: it is not signed (--git-allowed-signers ${allowed})`,
    ]);

    // A file that lists no signer, or cannot be read, is a usage error (exit 2).
    const empty = path.join(signers.dir, 'empty_signers');
    await fsp.writeFile(empty, '# nobody yet\n\n');
    const none = cli(['check', '--cache-dir', cache, '--git-allowed-signers', empty, root]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain(
      `--git-allowed-signers ${empty} lists no signer (one "principals keytype key" line each)`,
    );
    const missing = cli(['check', '--cache-dir', cache, '--git-allowed-signers', `${empty}.missing`, root]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`--git-allowed-signers ${empty}.missing cannot be read (ENOENT)`);

    // Without ssh-keygen on PATH (only git there), nothing can be verified: the root does not start.
    const bin = path.join(signers.dir, 'bin');
    await fsp.mkdir(bin);
    await fsp.symlink(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), path.join(bin, 'git'));
    const noKeygen = cli(['check', '--cache-dir', cache, '--git-allowed-signers', allowed, root], undefined, {
      PATH: bin,
    });
    expect(noKeygen.status).toBe(1);
    expect(eventsOf(noKeygen.stderr, 'start-failed').map((line) => line.msg)).toEqual([
      '--git-allowed-signers needs the ssh-keygen program (OpenSSH 8.2 or later) to verify signatures; it is not on PATH',
    ]);

    // The server over stdio: the same message, logged as it stops.
    const foreign = await remote.commit({ 'skills/alpha/notes.md': 'notes\n' }, 'foreign', {
      signingKey: mallory.file,
    });
    const server = spawnWire({ args: [root, '--cache-dir', cache, '--git-allowed-signers', allowed] });
    expect((await server.exited()).code).toBe(1);
    expect(server.logs().find((line) => isEvent(line, 'start-failed'))).toMatchObject({
      code: 'ROOT_UNUSABLE',
      msg: `${remote.fileUrl}#main:skills at commit ${foreign} is not served: it is signed by a key not in the allowed signers (ED25519 key ${mallory.fingerprint}) (--git-allowed-signers ${allowed})`,
    });
  });

  it('over HTTP: /readyz tells the refusal and /metrics counts it, also for a start that serves the verified commit from the cache', async () => {
    const { remote, cache, signers } = await setUp();
    const { alice, allowed } = signers;
    const signed = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'Alpha.') }, 'signed', {
      signingKey: alice.file,
    });
    const describe = `${remote.fileUrl}#main:skills`;
    const args = [`git+${describe}`, '--cache-dir', cache, '--git-allowed-signers', allowed, '--git-poll', '1000'];
    http = await startHttpServer(args);
    const base = `http://127.0.0.1:${http.port}`;
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', skills: 1, generation: 1 });
    const unsigned = await remote.commit({ 'skills/alpha/notes.md': 'notes\n' }, 'unsigned');
    await waitForEvent(http.stderr, 'git-signature-refused', { commit: unsigned });
    const refused = {
      code: 'git-signature-refused',
      root: describe,
      refused: unsigned,
      serving: signed,
      reason: 'it is not signed',
    };
    const ready = await fetch(`${base}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 200,
      body: { status: 'ready', skills: 1, generation: 1, refused: [refused] },
    });
    const counter = (text: string): string[] =>
      text.split('\n').filter((line) => line.startsWith('skills_serve_git_signature_refusals_total'));
    expect(counter(await (await fetch(`${base}/metrics`)).text())).toEqual([
      'skills_serve_git_signature_refusals_total{root="0"} 1',
    ]);
    await http.stop();

    // A new start while the branch is at the unsigned commit: the verified commit from the cache, and the same reason.
    http = await startHttpServer(args);
    const restarted = `http://127.0.0.1:${http.port}`;
    expect(http.wire.logs().find((line) => isEvent(line, 'git-signature-refused'))).toMatchObject({
      commit: unsigned,
      serving: signed,
    });
    expect(await (await fetch(`${restarted}/readyz`)).json()).toEqual({
      status: 'ready',
      skills: 1,
      generation: 1,
      refused: [refused],
    });
    expect(counter(await (await fetch(`${restarted}/metrics`)).text())).toEqual([
      'skills_serve_git_signature_refusals_total{root="0"} 1',
    ]);
  });
});

describe('--git-allowed-signers without a git root', () => {
  it('says it verifies nothing there, and serves the folders', async () => {
    const signers = await makeSigners();
    const server = spawnWire({
      args: ['--git-allowed-signers', signers.allowed, path.resolve('sample-skills')],
      env: { SKILLS_SERVE_LOG_LEVEL: 'warn' },
    });
    try {
      await server.handshake();
      const listed = await server.request('skills/list', {});
      expect((listed['result'] as { skills: unknown[] }).skills).toHaveLength(6);
      expect(
        server
          .logs()
          .filter((line) => line['event'] === 'config-suspect')
          .map((line) => [line['option'], line['msg']]),
      ).toEqual([
        [
          '--git-allowed-signers',
          '--git-allowed-signers verifies git roots only, and no root given is one: folders are served as they are',
        ],
      ]);
    } finally {
      await server.stop();
      await removeTree(signers.dir);
    }
  });
});
