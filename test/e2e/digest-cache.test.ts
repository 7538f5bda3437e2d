/**
 * The persistent digest cache never serves a wrong digest (docs/ARCHITECTURE.md, "Digest cache"): the built CLI over
 * real stdio, on real directories, a first start writing the cache and a later start reading it, and every digest and
 * size served compared with the SHA-256 of the file on disk. Each fault case fails without the mechanism it covers:
 * ctime and inode in the identity, racy entries left out, the magic/version/checksum/root checks, the atomic write.
 *
 * A start trusts an entry only when the file was not changed within 2 s of being hashed (ctime included, which no
 * test can set), so the roots are made once, up front, and the tests start once their files' ctimes are that old: a
 * wait computed from the files' own timestamps, taken once for the whole file.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIGEST_CACHE_VERSION, digestCacheFile, encodeDigestCache } from '../../src/index/digest-cache.js';
import { identityOfStat, makeKey, RACY_WINDOW_MS } from '../../src/index/record.js';
import type { FileNode } from '../../src/index/types.js';
import { cli } from '../helpers/cli.js';
import { reduceListing } from '../helpers/converge.js';
import { diskCatalog, sha256 } from '../helpers/disk.js';
import { type LogLine, waitForEvent } from '../helpers/logs.js';
import { connect, type Connection } from '../helpers/server.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';

/** The files of every root: two skills, four files, two of them the same size so an edit can keep the size. */
const TREE = {
  'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
  'alpha/notes.txt': 'alpha notes, version one\n',
  'beta/SKILL.md': skillMd('beta', 'Second skill.'),
  'beta/data/table.csv': 'a,b\n1,2\n',
} as const;
const FILES = Object.keys(TREE).length;
const SKILLS = ['alpha', 'beta'] as const;
/** Entries a start can trust: every file, `SKILL.md`s included (their parsed frontmatter is stored beside them). */
const TRUSTABLE = FILES;
/** Every file's atime and mtime before the first start: whole seconds, so `utimes` can put them back exactly. */
const PAST = new Date('2026-01-01T00:00:00Z');

const CASES = [
  'warm',
  'manifest',
  'utimes',
  'rename',
  'racy',
  'truncated',
  'garbage',
  'version',
  'other-root',
  'fifo',
  'device-link',
  'unwritable',
  'readonly-file',
  'two',
  'eight',
  'forged',
  'verify-warm',
  'verify-forged',
  'verify-edited',
  'verify-none',
] as const;
type Case = (typeof CASES)[number];

let cacheDir: string;
const roots = new Map<Case, string>();

beforeAll(async () => {
  cacheDir = await makeTempDir();
  for (const name of CASES) {
    const root = realpathSync(await makeTree(TREE));
    for (const rel of Object.keys(TREE)) utimesSync(path.join(root, rel), PAST, PAST);
    roots.set(name, root);
  }
  // Until every file's ctime (and mtime) is older than the racy window: the only wait, computed, not guessed.
  let newestMs = 0;
  for (const root of roots.values())
    for (const rel of Object.keys(TREE)) {
      const stat = statSync(path.join(root, rel));
      newestMs = Math.max(newestMs, stat.ctimeMs, stat.mtimeMs);
    }
  const dueMs = newestMs + RACY_WINDOW_MS + 50;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueMs - Date.now())));
}, 30_000);

afterAll(async () => {
  for (const root of roots.values()) await removeTree(root);
  await removeTree(cacheDir);
});

function rootOf(name: Case): string {
  return roots.get(name) as string;
}

/** A started server: its connection and its first `index-built` line. */
interface Started {
  readonly connection: Connection;
  readonly built: LogLine;
}

/** Starts the CLI on `root` with debug logs and the test's own cache directory, and waits for its first build. */
async function start(root: string, dir = cacheDir): Promise<Started> {
  const connection = await connect([root], undefined, {
    env: { SKILLS_SERVE_LOG_LEVEL: 'debug', SKILLS_SERVE_CACHE_DIR: dir },
  });
  const built = await waitForEvent(() => connection.stderr(), 'index-built');
  return { connection, built };
}

/** Every served `{ uri, digest, size }` equals the SHA-256 and size of the file on disk, for every skill. */
async function expectServedMatchesDisk(connection: Connection, root: string): Promise<void> {
  const served = reduceListing(await connection.list());
  expect(served.map((skill) => skill.uri)).toEqual(SKILLS.map((name) => `skill://${name}/SKILL.md`));
  expect(served).toEqual(diskCatalog(root));
}

/** Starts, checks every digest against disk, waits for the cache write, stops. */
async function warmUp(root: string, dir = cacheDir): Promise<Started> {
  const started = await start(root, dir);
  await expectServedMatchesDisk(started.connection, root);
  await waitForEvent(() => started.connection.stderr(), 'digest-cache-written');
  await started.connection.close();
  return started;
}

/** A start that found `stored` entries and trusted `trusted` of them, and served only right digests. */
async function expectStart(root: string, stored: number | undefined, trusted: number | undefined): Promise<Started> {
  const started = await start(root);
  try {
    expect(started.built['digestsStored']).toBe(stored);
    expect(started.built['digestsTrusted']).toBe(trusted);
    await expectServedMatchesDisk(started.connection, root);
  } catch (error) {
    await started.connection.close();
    throw error;
  }
  return started;
}

/**
 * Rewrites `rel` with same-size contents (`from` replaced by `to`) and puts its atime and mtime back: only ctime (and
 * inode) tell.
 */
function editKeepingSizeAndMtime(
  root: string,
  rel: string,
  replace: (file: string, text: string) => void,
  [from, to] = ['one', 'two'],
): void {
  const file = path.join(root, rel);
  const before = statSync(file, { bigint: true });
  const text = readFileSync(file, 'utf8');
  const edited = text.replace(from, to);
  expect(edited).not.toBe(text);
  expect(edited.length).toBe(text.length);
  replace(file, edited);
  utimesSync(file, Number(before.atimeNs / 1_000_000_000n), Number(before.mtimeNs / 1_000_000_000n));
  const after = statSync(file, { bigint: true });
  expect(after.size).toBe(before.size);
  expect(after.mtimeNs).toBe(before.mtimeNs);
  expect(after.ctimeNs).not.toBe(before.ctimeNs);
}

/** A forged digest: 32 bytes of 0x42. */
const FORGED = Buffer.alloc(32, 0x42);

/**
 * Writes `root`'s cache file by hand: every file of the tree with its identity now and its real digest, but `rel`
 * with {@link FORGED}, so a start trusts a wrong digest for it.
 */
function forgeCache(root: string, rel: string): void {
  const records = Object.keys(TREE).map((entry) => {
    const stat = statSync(path.join(root, entry));
    const digest =
      entry === rel
        ? FORGED
        : createHash('sha256')
            .update(readFileSync(path.join(root, entry)))
            .digest();
    return { rel: entry, node: { key: makeKey(digest, stat.size, identityOfStat(stat), false) } as FileNode };
  });
  const file = digestCacheFile(cacheDir, root);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, encodeDigestCache(root, records).bytes);
}

describe('persistent digest cache over stdio', () => {
  it('a warm start trusts every entry the last start wrote', async () => {
    const root = rootOf('warm');
    const first = await warmUp(root);
    expect(first.built['digestsStored']).toBeUndefined();
    const second = await expectStart(root, FILES, TRUSTABLE);
    // Every SKILL.md trusted unread: the entries are the stored frontmatter's, and the same as the first start's.
    const { skills } = await second.connection.skills.list();
    expect(skills.map((skill) => skill.frontmatter)).toEqual([
      { name: 'alpha', description: 'First skill.' },
      { name: 'beta', description: 'Second skill.' },
    ]);
    await second.connection.close();
  });

  it('a SKILL.md edited with size and mtime restored is read again: its new frontmatter is served', async () => {
    const root = rootOf('manifest');
    await warmUp(root);
    editKeepingSizeAndMtime(root, 'alpha/SKILL.md', (file, text) => writeFileSync(file, text), ['First', 'Fresh']);
    const started = await expectStart(root, FILES, TRUSTABLE - 1);
    const { skills } = await started.connection.skills.list();
    expect(skills.map((skill) => skill.frontmatter.description)).toEqual(['Fresh skill.', 'Second skill.']);
    await started.connection.close();
  });

  it('content edited with size and mtime restored (utimes) is hashed again: ctime betrays it', async () => {
    const root = rootOf('utimes');
    await warmUp(root);
    editKeepingSizeAndMtime(root, 'alpha/notes.txt', (file, text) => writeFileSync(file, text));
    const started = await expectStart(root, FILES, TRUSTABLE - 1);
    await started.connection.close();
  });

  it('a file replaced by rename (new inode, same size and mtime) is hashed again', async () => {
    const root = rootOf('rename');
    await warmUp(root);
    editKeepingSizeAndMtime(root, 'alpha/notes.txt', (file, text) => {
      writeFileSync(`${file}.new`, text);
      renameSync(`${file}.new`, file);
    });
    const started = await expectStart(root, FILES, TRUSTABLE - 1);
    await started.connection.close();
  });

  it('a file changed within the racy window of being hashed is left out of the cache, then hashed again', async () => {
    const root = rootOf('racy');
    const file = path.join(root, 'alpha/notes.txt');
    // An mtime one minute ahead: within the racy window of any moment the first start hashes it.
    const ahead = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
    utimesSync(file, ahead, ahead);
    await warmUp(root);
    // Edited in the same tick as far as size and mtime tell: the cache must not hold its digest at all.
    editKeepingSizeAndMtime(root, 'alpha/notes.txt', (target, text) => writeFileSync(target, text));
    const started = await expectStart(root, FILES - 1, TRUSTABLE - 1);
    await started.connection.close();
  });

  const spoilers: { name: Case; reason: string; spoil: (file: string) => void }[] = [
    {
      name: 'truncated',
      reason: 'truncated or corrupted (checksum mismatch)',
      spoil: (file) => writeFileSync(file, readFileSync(file).subarray(0, -7)),
    },
    {
      name: 'garbage',
      reason: 'not a digest cache file',
      spoil: (file) => writeFileSync(file, Buffer.alloc(4096, 0xa5)),
    },
    {
      name: 'version',
      reason: `version 99, not ${DIGEST_CACHE_VERSION}`,
      spoil: (file) => {
        const bytes = readFileSync(file);
        bytes[Buffer.byteLength('skills-serve digest cache\n')] = 99;
        writeFileSync(file, bytes);
      },
    },
    {
      name: 'other-root',
      reason: 'written for another root',
      spoil: (file) => copyFileSync(digestCacheFile(cacheDir, rootOf('warm')), file),
    },
    {
      // Opened for reading, a FIFO with no writer would block the start for ever.
      name: 'fifo',
      reason: 'not a regular file',
      spoil: (file) => {
        rmSync(file);
        expect(spawnSync('mkfifo', [file]).status).toBe(0);
      },
    },
    {
      // Read to its end, /dev/zero would fill the memory.
      name: 'device-link',
      reason: 'not a regular file',
      spoil: (file) => {
        rmSync(file);
        symlinkSync('/dev/zero', file);
      },
    },
  ];

  it.each(spoilers)(
    'a $name cache file is ignored with its reason, digests are hashed, and a valid file is written again',
    async ({ name, reason, spoil }) => {
      const root = rootOf(name);
      if (name === 'other-root') await warmUp(rootOf('warm'));
      await warmUp(root);
      const file = digestCacheFile(cacheDir, root);
      spoil(file);
      const spoiled = await expectStart(root, undefined, undefined);
      expect(
        await waitForEvent(() => spoiled.connection.stderr(), 'digest-cache-ignored', { file, root, reason }),
      ).toBeTruthy();
      await waitForEvent(() => spoiled.connection.stderr(), 'digest-cache-written', { roots: 1, entries: FILES });
      await spoiled.connection.close();
      const healed = await expectStart(root, FILES, TRUSTABLE);
      await healed.connection.close();
    },
  );

  it('an unwritable cache directory costs only the cache: every digest is still right', async () => {
    const root = rootOf('unwritable');
    // `digests` is a file: the directory can be neither made nor written (as root, mode bits would not stop a write).
    const dir = await makeTempDir();
    writeFileSync(path.join(dir, 'digests'), 'not a directory');
    const started = await start(root, dir);
    await expectServedMatchesDisk(started.connection, root);
    const unwritable = await waitForEvent(() => started.connection.stderr(), 'digest-cache-unwritable');
    expect(unwritable['file']).toBe(digestCacheFile(dir, root));
    await expectServedMatchesDisk(started.connection, root);
    await started.connection.close();
    await removeTree(dir);
  });

  it('a current cache file is only touched; a read-only one is replaced (rename) when written', async () => {
    const root = rootOf('readonly-file');
    await warmUp(root);
    const file = digestCacheFile(cacheDir, root);
    chmodSync(file, 0o444);
    const before = statSync(file).ino;
    // Every entry trusted, nothing else asked for: the file already holds what a write would, so its mtime (what
    // pruning reads) is set to now and its bytes are left alone.
    utimesSync(file, PAST, PAST);
    const bytes = readFileSync(file);
    const current = await expectStart(root, FILES, TRUSTABLE);
    await waitForEvent(() => current.connection.stderr(), 'digest-cache-written', { roots: 0, current: 1 });
    await current.connection.close();
    expect(statSync(file).ino).toBe(before);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(statSync(file).mtimeMs).toBeGreaterThan(PAST.getTime());
    // One file changed: hashed again, so the file is written (its new entry is racy, so left out).
    appendFileSync(path.join(root, 'alpha', 'notes.txt'), 'version two\n');
    const started = await expectStart(root, FILES, TRUSTABLE - 1);
    await waitForEvent(() => started.connection.stderr(), 'digest-cache-written', { roots: 1, entries: FILES - 1 });
    await started.connection.close();
    expect(statSync(file).ino).not.toBe(before);
    const after = await expectStart(root, FILES - 1, TRUSTABLE - 1);
    await after.connection.close();
  });

  it.each([
    { name: 'two' as const, servers: 2 },
    { name: 'eight' as const, servers: 8 },
  ])(
    '$servers servers started at once on one root are each correct and leave a valid file a ninth trusts',
    async ({ name, servers }) => {
      const root = rootOf(name);
      const all = await Promise.all(Array.from({ length: servers }, () => start(root)));
      try {
        for (const { connection, built } of all) {
          // On a loaded machine a server may start after a sibling wrote its file (1 s after its build): it then
          // found at most every file, and what it serves must be right all the same.
          expect(built['digestsStored'] ?? 0).toBeLessThanOrEqual(FILES);
          await expectServedMatchesDisk(connection, root);
        }
        for (const { connection } of all)
          await waitForEvent(() => connection.stderr(), 'digest-cache-written', { roots: 1, entries: FILES });
      } finally {
        await Promise.all(all.map(({ connection }) => connection.close()));
      }
      const ninth = await expectStart(root, FILES, TRUSTABLE);
      await ninth.connection.close();
    },
    60_000,
  );

  it('a forged cache entry (identity right, digest wrong) never reaches the host as verified content', async () => {
    const root = rootOf('forged');
    const rel = 'alpha/notes.txt';
    forgeCache(root, rel);

    const started = await start(root);
    try {
      expect(started.built['digestsStored']).toBe(FILES);
      // A cache written by hand holds no parsed frontmatter: each SKILL.md is read, the rest trusted.
      expect(started.built['digestsTrusted']).toBe(TRUSTABLE - SKILLS.length);
      const { skills } = await started.connection.skills.list();
      const alpha = skills.find((skill) => skill.uri === 'skill://alpha/SKILL.md');
      if (alpha === undefined || alpha.resources === 'dynamic') throw new Error('alpha is not listed');
      const uri = 'skill://alpha/notes.txt';
      expect(alpha.resources.find((resource) => resource.uri === uri)?.digest).toBe(`sha256:${FORGED.toString('hex')}`);
      const onDisk = readFileSync(path.join(root, rel));
      // The server verified the bytes, found the entry wrong, re-indexed and sent the file's own bytes: the host,
      // holding the forged digest from the listing, refuses them instead of taking them as verified.
      await expect(started.connection.skills.read(alpha, uri)).rejects.toThrow(
        `${uri} has digest ${sha256(onDisk)}; the skill entry lists sha256:${FORGED.toString('hex')}`,
      );
      await waitForEvent(() => started.connection.stderr(), 'reindex', { uri });
      // After the re-index every digest served is the file's own, and the read verifies.
      await expectServedMatchesDisk(started.connection, root);
      const relisted = (await started.connection.skills.list()).skills.find((skill) => skill.uri === alpha.uri);
      if (relisted === undefined) throw new Error('alpha is not listed');
      const read = await started.connection.skills.read(relisted, uri);
      expect(read.verified).toBe(true);
      expect(Buffer.from(read.bytes).equals(onDisk)).toBe(true);
    } finally {
      await started.connection.close();
    }
  });
});

describe('check --verify-cache', () => {
  /** `check --verify-cache <root>` with the test's cache directory in the environment (or `args` naming it). */
  const verify = (root: string, args: readonly string[] = []): ReturnType<typeof cli> =>
    cli(['check', '--verify-cache', ...args, root], undefined, { SKILLS_SERVE_CACHE_DIR: cacheDir });
  /** The root's summary line. */
  const counts = (root: string, entries: number, right: number, lied: number, stale: number, missing: number): string =>
    `${root}: ${entries} cache entries: ${right} trusted and right, ${lied} lied, ${stale} not trusted (changed since hashed), ${missing} missing\n`;
  const sha256Of = (root: string, rel: string): string => sha256(readFileSync(path.join(root, rel)));

  it('after a server start wrote the cache, every entry (SKILL.md included) is trusted and right: exit 0', async () => {
    const root = rootOf('verify-warm');
    await warmUp(root);
    // --cache-dir wins over the environment, as for serve.
    const other = await makeTempDir();
    const run = cli(['check', '--verify-cache', '--cache-dir', cacheDir, root], undefined, {
      SKILLS_SERVE_CACHE_DIR: other,
    });
    await removeTree(other);
    expect(run).toEqual({ status: 0, stdout: counts(root, FILES, FILES, 0, 0, 0), stderr: '' });
    // Verifying writes nothing: the cache file is the one the server wrote.
    const before = statSync(digestCacheFile(cacheDir, root), { bigint: true });
    expect(verify(root).status).toBe(0);
    expect(statSync(digestCacheFile(cacheDir, root), { bigint: true }).mtimeNs).toBe(before.mtimeNs);
  });

  it('a forged entry the cache trusts is named with both digests: exit 1, in text and in JSON', () => {
    const root = rootOf('verify-forged');
    const rel = 'alpha/notes.txt';
    forgeCache(root, rel);
    const cached = `sha256:${FORGED.toString('hex')}`;
    const actual = sha256Of(root, rel);
    expect(verify(root)).toEqual({
      status: 1,
      stdout: `lied    ${rel}: the cache says ${cached}, the file hashes to ${actual}\n${counts(root, FILES, FILES - 1, 1, 0, 0)}`,
      stderr: '',
    });
    const json = verify(root, ['--json']);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      roots: [
        {
          root,
          cacheFile: digestCacheFile(cacheDir, root),
          entries: FILES,
          right: FILES - 1,
          lied: [{ file: rel, cached, actual }],
          stale: 0,
          missing: 0,
        },
      ],
      gitRoots: [],
    });
  });

  it('an edited file is not trusted and a deleted one is missing: neither is a lie, exit 0', async () => {
    const root = rootOf('verify-edited');
    await warmUp(root);
    editKeepingSizeAndMtime(root, 'alpha/notes.txt', (file, text) => writeFileSync(file, text));
    rmSync(path.join(root, 'beta/data/table.csv'));
    expect(verify(root)).toEqual({ status: 0, stdout: counts(root, FILES, FILES - 2, 0, 1, 1), stderr: '' });
  });

  it('a root without a cache file says so, exit 0; a git root is named as not verified', () => {
    const root = rootOf('verify-none');
    expect(verify(root)).toEqual({
      status: 0,
      stdout: `${root}: no digest cache to verify (missing): ${digestCacheFile(cacheDir, root)}\n`,
      stderr: '',
    });
    const withGit = cli(['check', '--verify-cache', root, 'github:acme/skills'], undefined, {
      SKILLS_SERVE_CACHE_DIR: cacheDir,
    });
    expect(withGit).toEqual({
      status: 0,
      stdout:
        `${root}: no digest cache to verify (missing): ${digestCacheFile(cacheDir, root)}\n` +
        "git+https://github.com/acme/skills.git: a git root, not verified (its tree is written from git's objects under git/ in the cache directory)\n",
      stderr: '',
    });
  });
});
