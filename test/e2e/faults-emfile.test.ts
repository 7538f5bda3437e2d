/**
 * Fault injection on file descriptors (`EMFILE` on reads): the server runs out of
 * open-file slots while reading, while rebuilding, during its first build, and at its first file watch (it falls
 * back to polling and says which limit to raise).
 *
 * The limit is set with `prlimit --pid` (util-linux) to leave exactly K descriptors free (the limit is the number of
 * the (K+1)-th lowest free descriptor), which does not depend on how many descriptors Node itself holds: on a running
 * server, or on one paused (SIGSTOP from a `--require` preload) before the CLI's code runs, so that its first build
 * meets the shortage. A shell's `sh -c 'ulimit -n N; exec node …'` is used too, with N probed as the lowest limit
 * at which the CLI starts at all. A shortage of descriptors is transient: reads may fail with a clear error while it
 * lasts, but nothing may crash or hang, and once descriptors are available the catalog must be the disk's.
 */
import { spawnSync } from 'node:child_process';
import { promises as fsp, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { converge, listAll } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { waitFor } from '../helpers/live.js';
import { eventsOf, type LogLine, logLines, waitForEvent } from '../helpers/logs.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { bytesOfRead, errorOf, type Message, procStatus, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const PRLIMIT = spawnSync('prlimit', ['--version']).status === 0;
const BULK_FILES = 64;
/** Files over `SYNC_READ_MAX_BYTES` (256 KiB) are read on the thread pool, each holding a descriptor meanwhile. */
const LARGE_FILES = 8;

const dirs: string[] = [];
afterEach(async () => {
  await stopAll();
  for (const dir of dirs.splice(0)) await removeTree(dir);
});

function spec(skills = 4): Record<string, string> {
  const out: Record<string, string> = {
    'bulk/SKILL.md': skillMd('bulk', 'Many small files.'),
  };
  for (let index = 0; index < BULK_FILES; index++)
    out[`bulk/refs/r${String(index).padStart(2, '0')}.md`] = `bulk reference ${index}\n`.repeat(8);
  for (let index = 0; index < LARGE_FILES; index++)
    out[`bulk/large/l${index}.txt`] = `large file ${index} `.repeat(24_000);
  for (let index = 0; index < skills; index++) {
    const name = `s${String(index).padStart(3, '0')}`;
    out[`${name}/SKILL.md`] = skillMd(name, `Skill ${index}.`);
    out[`${name}/notes.md`] = `notes of ${name}\n`;
    out[`${name}/refs/a.md`] = `a of ${name}\n`;
  }
  return out;
}

async function tree(skills?: number): Promise<string> {
  const root = await makeTree(spec(skills));
  dirs.push(root);
  return root;
}

/** The soft and hard open-file limits of `pid`. */
function openFileLimits(pid: number): { soft: number; hard: number } {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Max open files')) as string;
  const [soft, hard] = line.replace('Max open files', '').trim().split(/\s+/u);
  return { soft: Number(soft), hard: Number(hard) };
}

/**
 * The soft open-file limit that leaves exactly `spare` descriptors free for `pid`: the number of its
 * (`spare`+1)-th lowest unused descriptor (new descriptors take the lowest free number, and fail with EMFILE when
 * that number reaches the limit).
 */
function limitLeaving(pid: number, spare: number): number {
  const open = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
  const free: number[] = [];
  for (let fd = 0; free.length <= spare; fd++) if (!open.has(fd)) free.push(fd);
  return free[spare] as number;
}

/**
 * Caps a running server's descriptors at `spare` free ones. It is stopped (SIGSTOP) while `/proc` is read and the
 * limit set, so it opens or closes nothing in between, then continued.
 */
async function capRunning(wire: Wire, spare: number): Promise<void> {
  wire.child.kill('SIGSTOP');
  await waitFor(() => procStatus(wire.pid).state === 'T', { describe: () => 'the server did not stop' });
  setSoftLimit(wire.pid, limitLeaving(wire.pid, spare));
  wire.child.kill('SIGCONT');
}

function setSoftLimit(pid: number, soft: number): void {
  const result = spawnSync('prlimit', ['--pid', String(pid), `--nofile=${soft}:`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`prlimit failed: ${result.stderr}`);
  expect(openFileLimits(pid).soft).toBe(soft);
}

/**
 * Sends every read at once; each answer must be the listed bytes or -32603 `<uri> could not be read`, and each such
 * error must have been logged as one `read-failed` event naming the file's path and `code: "EMFILE"`. Returns the
 * errors.
 */
async function readStorm(wire: Wire, files: readonly { uri: string; digest: string }[]): Promise<Message[]> {
  const logsBefore = logLines(wire.stderr()).length;
  const failuresLogged = (): LogLine[] => eventsOf(logLines(wire.stderr()).slice(logsBefore), 'read-failed');
  const answers = await Promise.all(
    files.map((file) => wire.request('resources/read', { uri: file.uri }, 20_000).then((answer) => ({ file, answer }))),
  );
  const errors: Message[] = [];
  for (const { file, answer } of answers) {
    const error = errorOf(answer);
    if (error === undefined) {
      expect(sha256(bytesOfRead(answer)), file.uri).toBe(file.digest);
      continue;
    }
    expect(error, file.uri).toEqual({ code: -32603, message: `${file.uri} could not be read` });
    errors.push(answer);
  }
  // stderr and stdout are separate pipes: a failure's log line may be read a little after its answer.
  await waitFor(() => failuresLogged().length >= errors.length, {
    describe: () => `${errors.length} read(s) failed, ${failuresLogged().length} read-failed event(s) logged`,
  });
  expect(failuresLogged()).toHaveLength(errors.length);
  for (const line of failuresLogged())
    expect(line).toMatchObject({ level: 40, path: expect.stringMatching(/^\//u), code: 'EMFILE' });
  return errors;
}

describe.skipIf(!PRLIMIT)('EMFILE on a running server (prlimit --pid)', () => {
  it.each([
    ['--no-watch', ['--no-watch']],
    ['watching', [] as string[]],
  ])(
    '%s: a storm of reads with two spare descriptors is answered in full; with descriptors back, every read is served',
    async (_label, flags) => {
      const root = await tree();
      const wire = spawnWire({ args: [...flags, root] });
      await wire.handshake();
      if (flags.length === 0) await waitForEvent(wire.stderr, 'watching');
      await converge(wire, root);
      const files = (await listAll(wire)).skills.flatMap((skill) => skill.resources);
      const { soft } = openFileLimits(wire.pid);

      await capRunning(wire, 2);
      const errors = await readStorm(wire, files);
      expect((await wire.request('ping'))['result']).toEqual({});
      // Small files are read synchronously, one descriptor at a time; the large ones concurrently on the thread pool,
      // each holding a descriptor meanwhile, so with two spare some reads meet EMFILE.
      expect(errors.length, 'two spare descriptors for a storm of large reads: some must fail').toBeGreaterThan(0);

      setSoftLimit(wire.pid, soft);
      expect(await readStorm(wire, files)).toEqual([]);
      // A read that met EMFILE must not have changed what is published.
      await converge(wire, root);
      expect(wire.running()).toBe(true);
      expect(wire.badLines).toEqual([]);
    },
  );

  it('watching: a rebuild that meets EMFILE leaves no wrong entry once descriptors are back (no further edits)', async () => {
    const root = await tree();
    const wire = spawnWire({ args: [root] });
    await wire.handshake();
    await waitForEvent(wire.stderr, 'watching');
    await converge(wire, root);
    const { soft } = openFileLimits(wire.pid);
    const updatesBefore = eventsOf(wire.stderr(), 'index-updated').length;

    // No descriptor at all while the rebuild runs.
    await capRunning(wire, 0);
    for (let index = 0; index < 16; index++)
      await fsp.writeFile(
        path.join(root, 'bulk', 'refs', `r${String(index).padStart(2, '0')}.md`),
        `edited ${index}\n`,
      );
    await fsp.mkdir(path.join(root, 'added'));
    await fsp.writeFile(path.join(root, 'added', 'SKILL.md'), skillMd('added', 'Added while descriptors ran short.'));
    // The rebuild has run (and met the shortage) before descriptors come back.
    await waitFor(() => eventsOf(wire.stderr(), 'index-updated').length > updatesBefore, {
      describe: () => wire.stderr().slice(-1500),
    });

    setSoftLimit(wire.pid, soft);
    await converge(wire, root);
    expect(
      await readStorm(
        wire,
        (await listAll(wire)).skills.flatMap((skill) => skill.resources),
      ),
    ).toEqual([]);
    expect(wire.badLines).toEqual([]);
  });
});

/** The lowest `ulimit -n` at which the CLI answers `initialize` (on an empty root), probing upwards from 8. */
async function lowestStartingLimit(flags: readonly string[]): Promise<number> {
  const empty = await makeTempDir();
  dirs.push(empty);
  for (let limit = 8; limit <= 64; limit++) {
    const wire = spawnWire({ args: [...flags, empty], wrap: ['sh', '-c', `ulimit -n ${limit} && exec "$@"`, 'sh'] });
    const answered = await wire.handshake().then(
      () => true,
      () => false,
    );
    await wire.stop();
    if (answered) return limit;
  }
  throw new Error('the CLI did not start with up to 64 open files');
}

describe('EMFILE on reads under a low ulimit (sh -c "ulimit -n N; exec node …")', () => {
  it('with N four above the least the CLI starts with: built, a storm of reads answered in full, the catalog intact', async () => {
    const limit = (await lowestStartingLimit(['--no-watch'])) + 4;
    const root = await tree();
    const wire = spawnWire({ args: ['--no-watch', root], wrap: ['sh', '-c', `ulimit -n ${limit} && exec "$@"`, 'sh'] });
    await wire.handshake();
    expect(openFileLimits(wire.pid).soft).toBe(limit);
    await converge(wire, root);
    const files = (await listAll(wire)).skills.flatMap((skill) => skill.resources);
    await readStorm(wire, files);
    // One at a time, every read fits in the descriptors there are.
    for (const file of files) expect(await readStorm(wire, [file])).toEqual([]);
    await converge(wire, root);
    expect(wire.badLines).toEqual([]);
  });
});

describe.skipIf(!PRLIMIT)(
  'EMFILE during the first build (paused at its first directory listing, then prlimit --pid)',
  () => {
    let preloadDir: string;
    let preload: string;
    beforeAll(async () => {
      preloadDir = await makeTempDir();
      preload = path.join(preloadDir, 'pause.cjs');
      // Stops the process at the first directory listing (the first build's start, once the CLI is loaded), so the
      // descriptors left are those the build has, not those the module loader needs to start the CLI.
      await fsp.writeFile(
        preload,
        [
          "const fs = require('node:fs');",
          'const readdirSync = fs.readdirSync;',
          'let paused = false;',
          'fs.readdirSync = function (...args) {',
          "  if (!paused) { paused = true; process.kill(process.pid, 'SIGSTOP'); }",
          '  return readdirSync.apply(this, args);',
          '};',
          '',
        ].join('\n'),
      );
    });
    afterAll(() => removeTree(preloadDir));

    // --no-watch needs one descriptor at a time; watching holds one more (the inotify instance).
    it.each([
      ['--no-watch', 1, ['--no-watch']],
      ['watching', 2, [] as string[]],
    ])(
      '%s, %i spare descriptor(s): skills/list is answered and the catalog ends equal to the disk',
      async (_label, spare, flags) => {
        const root = await tree(40);
        const wire = spawnWire({ args: [...flags, root], env: { NODE_OPTIONS: `--require ${preload}` } });
        await waitFor(() => wire.status().state === 'T', {
          describe: () => `state ${wire.status().state}; stderr ${wire.stderr()}`,
        });
        setSoftLimit(wire.pid, limitLeaving(wire.pid, spare));
        wire.child.kill('SIGCONT');
        await wire.handshake();
        // Fewer descriptors than one listing needs at times: the build is retried until it has them (raised here).
        // Answered at all (a hang here is one failure), then with the whole catalog (an empty one is another).
        await listAll(wire);
        await converge(wire, root);
        expect(wire.badLines).toEqual([]);
      },
    );
  },
);

describe.skipIf(!PRLIMIT)('EMFILE on the first file watch (paused at its first fs.watch, then prlimit --pid)', () => {
  let preloadDir: string;
  let preload: string;
  beforeAll(async () => {
    preloadDir = await makeTempDir();
    preload = path.join(preloadDir, 'pause-at-watch.cjs');
    // Stops the process at its first fs.watch (the watcher starting, before the first build), so that the OS has no
    // descriptor left for the inotify instance when the watch is really made.
    await fsp.writeFile(
      preload,
      [
        "const fs = require('node:fs');",
        'const watch = fs.watch;',
        'let paused = false;',
        'fs.watch = function (...args) {',
        "  if (!paused) { paused = true; process.kill(process.pid, 'SIGSTOP'); }",
        '  return watch.apply(this, args);',
        '};',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => removeTree(preloadDir));

  it('no spare descriptor: falls back to polling naming the limit and how to raise it; serves the disk and follows edits once descriptors are back', async () => {
    const root = await tree();
    const wire = spawnWire({ args: [root], env: { NODE_OPTIONS: `--require ${preload}` } });
    await waitFor(() => wire.status().state === 'T', {
      describe: () => `state ${wire.status().state}; stderr ${wire.stderr()}`,
    });
    const { soft } = openFileLimits(wire.pid);
    setSoftLimit(wire.pid, limitLeaving(wire.pid, 0));
    wire.child.kill('SIGCONT');
    const fallback = await waitForEvent(wire.stderr, 'watch-fallback');
    expect(fallback).toMatchObject({
      level: 40,
      root,
      code: 'EMFILE',
      pollMs: 1000,
      hint: 'the open-file or inotify-instance limit was reached; raise `ulimit -n` or fs.inotify.max_user_instances',
    });
    setSoftLimit(wire.pid, soft);
    await wire.handshake();
    await converge(wire, root);
    // Polled from now on: an edit is still followed.
    await fsp.writeFile(path.join(root, 's000', 'notes.md'), 'notes of s000, edited while polling\n');
    await converge(wire, root);
    expect(eventsOf(wire.stderr(), 'watch-fallback')).toHaveLength(1);
    expect(wire.badLines).toEqual([]);
  });
});
