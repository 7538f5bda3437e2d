/**
 * Fault injection on access rights: read permission removed from a served file or
 * directory, a file unreadable from the start, and a root on a read-only bind mount.
 *
 * The tests run as root, for whom permission bits do not apply, so the permission cases start the server as user
 * `nobody` through `setpriv` (util-linux); the read-only bind is made with `unshare -m` in a mount namespace of the
 * server's own, so nothing changes for the rest of the machine. Each case is skipped, with the reason, only where
 * its tool is missing or refused.
 */
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { converge, getEntry, listAll } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { readableInstall } from '../helpers/dist.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf, logLines, waitForEvent } from '../helpers/logs.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { bytesOfRead, errorOf, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const NOBODY = 65_534;

/** `setpriv` can start a process as `nobody` here (and we are root, so permission bits would not bite otherwise). */
const SETPRIV =
  spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'true']).status === 0;
/** A private mount namespace can be made here (root, or an unprivileged user namespace). */
const UNSHARE = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;

const AS_NOBODY = ['setpriv', '--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups'];

const dirs: string[] = [];
afterEach(async () => {
  await stopAll();
  for (const dir of dirs.splice(0)) {
    // Give back every permission taken away, so that the tree can be removed.
    spawnSync('chmod', ['-R', 'u+rwX', dir]);
    await removeTree(dir);
  }
});

/** A tree `nobody` can read: the temp directory is made 0755 (mkdtemp makes it 0700). */
async function readableTree(spec: Record<string, string>): Promise<string> {
  const root = await makeTree(spec);
  dirs.push(root);
  await fsp.chmod(root, 0o755);
  return root;
}

function spec(): Record<string, string> {
  return {
    'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
    'alpha/notes.txt': 'alpha notes\n',
    'alpha/refs/guide.md': '# guide\n',
    'alpha/refs/more.md': 'more\n',
    'beta/SKILL.md': skillMd('beta', 'Second skill.'),
    'beta/data.txt': 'beta data\n',
  };
}

/** The real uid a process runs as (`/proc/<pid>/status`). */
function uidOf(pid: number): number {
  return Number(/^Uid:\s+(\d+)/mu.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

/** Whether `dir` is a read-only mount point in the mount namespace of process `pid`. */
function isReadOnlyMount(pid: number, dir: string): boolean {
  // mountinfo fields: id parent major:minor root mount-point options …
  return readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === dir && (line.split(' ')[5] ?? '').split(',').includes('ro'));
}

async function expectReadsVerified(wire: Wire): Promise<void> {
  for (const skill of (await listAll(wire)).skills) {
    for (const file of skill.resources)
      expect(sha256(bytesOfRead(await wire.request('resources/read', { uri: file.uri }))), file.uri).toBe(file.digest);
  }
}

describe.skipIf(!SETPRIV)('read permission removed (server runs as nobody through setpriv)', () => {
  // nobody may not be able to enter the checkout (a clone under a 0700 folder): it runs a world-readable copy.
  let install: { dir: string; bin: string } | undefined;
  beforeAll(async () => {
    install = await readableInstall();
  });
  afterAll(async () => {
    if (install !== undefined) await removeTree(install.dir);
  });
  const asNobody = (args: readonly string[]): Wire => {
    if (install === undefined) throw new Error('the readable install was not made');
    return spawnWire({ args, wrap: AS_NOBODY, bin: install.bin, cwd: install.dir });
  };

  it.each([
    ['--no-watch', ['--no-watch']],
    ['watching', [] as string[]],
  ])(
    'a served file made unreadable after indexing (%s): refused naming the URI and logged; readable again, served again',
    async (_label, flags) => {
      const root = await readableTree(spec());
      const wire = asNobody([...flags, root]);
      await wire.handshake();
      expect(uidOf(wire.pid), 'the server does not run as nobody: permission bits would not apply').toBe(NOBODY);
      const watching = flags.length === 0;
      if (watching) await waitForEvent(wire.stderr, 'watching');
      await converge(wire, root);
      const uri = 'skill://alpha/notes.txt';
      const file = path.join(root, 'alpha', 'notes.txt');
      const logsBefore = logLines(wire.stderr()).length;
      await fsp.chmod(file, 0o000);
      if (watching) {
        // A permission change is a change: the watcher re-indexes, and the unreadable file is left out with a warning.
        await waitForEvent(wire.stderr, 'diagnostic', { rule: 'unreadable-file', file }, { after: logsBefore });
        expect(errorOf(await wire.request('resources/read', { uri }))).toEqual({
          code: -32602,
          message: `Resource not found: ${uri}`,
        });
      } else {
        // Still published: the read meets EACCES, answers -32603 and logs the file's path.
        expect(errorOf(await wire.request('resources/read', { uri }))).toEqual({
          code: -32603,
          message: `${uri} could not be read`,
        });
        expect(await waitForEvent(wire.stderr, 'read-failed', {}, { after: logsBefore })).toMatchObject({
          level: 40,
          path: file,
        });
      }
      // The other files are untouched.
      expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://alpha/refs/guide.md' })).toString()).toBe(
        '# guide\n',
      );

      await fsp.chmod(file, 0o644);
      if (flags.length === 0) await converge(wire, root);
      expect(bytesOfRead(await wire.request('resources/read', { uri })).toString()).toBe('alpha notes\n');
      await converge(wire, root);
      expect(wire.badLines).toEqual([]);
    },
  );

  it('a directory made untraversable after indexing (--no-watch): its files answer -32603 naming the URI, the rest is served', async () => {
    const root = await readableTree(spec());
    const wire = asNobody(['--no-watch', root]);
    await wire.handshake();
    await converge(wire, root);
    const logsBefore = logLines(wire.stderr()).length;
    await fsp.chmod(path.join(root, 'alpha', 'refs'), 0o000);
    for (const uri of ['skill://alpha/refs/guide.md', 'skill://alpha/refs/more.md']) {
      expect(errorOf(await wire.request('resources/read', { uri })), uri).toEqual({
        code: -32603,
        message: `${uri} could not be read`,
      });
    }
    await waitFor(() => eventsOf(logLines(wire.stderr()).slice(logsBefore), 'read-failed').length >= 2);
    expect(eventsOf(logLines(wire.stderr()).slice(logsBefore), 'read-failed').map((line) => line['path'])).toEqual([
      path.join(root, 'alpha', 'refs', 'guide.md'),
      path.join(root, 'alpha', 'refs', 'more.md'),
    ]);
    expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://alpha/notes.txt' })).toString()).toBe(
      'alpha notes\n',
    );
    expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://beta/data.txt' })).toString()).toBe(
      'beta data\n',
    );
    await fsp.chmod(path.join(root, 'alpha', 'refs'), 0o755);
    await expectReadsVerified(wire);
    expect(wire.badLines).toEqual([]);
  });

  it('a file unreadable from the start: left out with a warning naming it, the rest of its skill served; readable again, published (watching)', async () => {
    const root = await readableTree(spec());
    await fsp.chmod(path.join(root, 'alpha', 'refs', 'more.md'), 0o000);
    const wire = asNobody([root]);
    await wire.handshake();
    const { skills } = await listAll(wire);
    const alpha = skills.find((skill) => skill.uri === 'skill://alpha/SKILL.md');
    expect(alpha?.resources.map((file) => file.uri)).toEqual([
      'skill://alpha/SKILL.md',
      'skill://alpha/notes.txt',
      'skill://alpha/refs/guide.md',
    ]);
    // A build's diagnostics are logged before its index-built line.
    await waitForEvent(wire.stderr, 'index-built');
    expect(eventsOf(wire.stderr(), 'diagnostic'), `stderr:\n${wire.stderr()}`).toMatchObject([
      { level: 30, rule: 'unreadable-file', severity: 'warning', file: path.join(root, 'alpha', 'refs', 'more.md') },
    ]);
    await expectReadsVerified(wire);

    await waitForEvent(wire.stderr, 'watching');
    await fsp.chmod(path.join(root, 'alpha', 'refs', 'more.md'), 0o644);
    // A permission change is a change: once readable, the file is published.
    await converge(wire, root);
    expect((await getEntry(wire, 'skill://alpha/SKILL.md'))?.resources.map((file) => file.uri)).toContain(
      'skill://alpha/refs/more.md',
    );
    expect(wire.badLines).toEqual([]);
  });
});

describe.skipIf(!UNSHARE)(
  'a root on a read-only bind mount (unshare -m: a mount namespace of the server alone)',
  () => {
    /** Starts the server with `mnt` a read-only bind of `src` in its own mount namespace. */
    function serveReadOnly(src: string, mnt: string, flags: readonly string[]): Wire {
      const script = 'mount --bind "$1" "$2" && mount -o remount,ro,bind "$2" && shift 2 && exec "$@"';
      return spawnWire({
        args: [...flags, mnt],
        wrap: ['unshare', '-m', '--propagation', 'private', 'sh', '-c', script, 'sh', src, mnt],
      });
    }

    it.each([
      ['watching', [] as string[]],
      ['--no-watch', ['--no-watch']],
    ])('serves every file verified, and follows changes made to the tree underneath (%s)', async (_label, flags) => {
      const src = await readableTree(spec());
      const mnt = await makeTempDir();
      dirs.push(mnt);
      const wire = serveReadOnly(src, mnt, flags);
      await wire.handshake();
      expect(isReadOnlyMount(wire.pid, mnt), 'the server does not see a read-only mount').toBe(true);
      await converge(wire, src);
      await expectReadsVerified(wire);
      // The server sees a read-only file system: nothing it does may need to write there (no warning, no error).
      if (flags.length === 0) await waitForEvent(wire.stderr, 'watching');
      expect(logLines(wire.stderr()).filter((line) => (line.level ?? 0) >= 40)).toEqual([]);

      await fsp.writeFile(path.join(src, 'alpha', 'notes.txt'), 'alpha notes, edited underneath the bind\n');
      if (flags.length === 0) {
        await fsp.mkdir(path.join(src, 'gamma'));
        await fsp.writeFile(path.join(src, 'gamma', 'SKILL.md'), skillMd('gamma', 'Added underneath the bind.'));
        await converge(wire, src);
      } else {
        // Without the watcher, the read finds the change and re-indexes before serving.
        expect(bytesOfRead(await wire.request('resources/read', { uri: 'skill://alpha/notes.txt' })).toString()).toBe(
          'alpha notes, edited underneath the bind\n',
        );
        await converge(wire, src);
      }
      await expectReadsVerified(wire);
      expect(wire.badLines).toEqual([]);
    });
  },
);
