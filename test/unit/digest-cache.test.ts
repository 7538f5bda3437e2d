/**
 * The digest cache file format (`src/index/digest-cache.ts`): what is written is read back entry for entry, it stays
 * within 64 bytes per file plus paths, anything cut short or not a cache file is ignored with its reason, and the
 * directory is kept bounded (stale roots' files and the oldest beyond the limit removed).
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  type Stats,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  DIGEST_CACHE_VERSION,
  digestCacheDir,
  digestCacheFile,
  DigestCacheKeeper,
  encodeDigestCache,
  FIRST_WRITE_DELAY_MS,
  MAX_CACHE_FILES,
  readDigestCache,
  STALE_CACHE_MS,
  type StoredDigests,
  writeDigestCache,
} from '../../src/index/digest-cache.js';
import type { ManifestFacts } from '../../src/index/manifest.js';
import { identityOfStat, makeKey } from '../../src/index/record.js';
import { FileNode } from '../../src/index/types.js';
import { makeTempDir, makeTree, removeTree } from '../helpers/tree.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await removeTree(dir);
});

/**
 * A real tree of `files`, and the records the index would hold for it (digests of the real bytes, identities of real
 * stats), the files named in `racy` marked racy.
 */
async function indexedTree(
  files: Record<string, string> = { 'a/SKILL.md': 'a\n', 'a/x.txt': 'x', 'a/deep/y.bin': 'yy', 'b/z.txt': 'zzz' },
  racy: readonly string[] = [],
): Promise<{ root: string; records: { rel: string; node: FileNode }[] }> {
  const root = await makeTree(files);
  made.push(root);
  const records = Object.keys(files).map((rel) => {
    const stat = statSync(path.join(root, rel));
    const digest = createHash('sha256')
      .update(readFileSync(path.join(root, rel)))
      .digest();
    const key = makeKey(digest, stat.size, identityOfStat(stat), false, racy.includes(rel));
    return { rel, node: new FileNode(path.basename(rel), stat.size, key, undefined) };
  });
  return { root, records };
}

/** Looks every record but `skip` up in `read`, with a fresh stat of its file (as a first walk does). */
function lookUpAll(read: StoredDigests, root: string, records: { rel: string }[], skip = ''): void {
  for (const { rel } of records) {
    if (rel === skip) continue;
    const slash = rel.lastIndexOf('/');
    read.lookup(rel.slice(0, slash), rel.slice(slash + 1), statSync(path.join(root, rel)));
  }
}

/** Writes the cache file of `root` for `records` (and `SKILL.md` facts) in a fresh cache directory; its path. */
function encodeTo(
  root: string,
  records: { rel: string; node: FileNode }[],
  manifest?: (dirRel: string) => ManifestFacts | undefined,
): string {
  const cache = path.join(root, '..', `${path.basename(root)}-cache`);
  made.push(cache);
  const file = digestCacheFile(cache, root);
  writeDigestCache(file, encodeDigestCache(root, records, manifest).bytes);
  return file;
}

describe('digest cache file', () => {
  it('round-trips: every entry is read back and trusted for the identity it was written with', async () => {
    const { root, records } = await indexedTree();
    const cache = await makeTempDir();
    made.push(cache);
    const file = digestCacheFile(cache, root);
    const { bytes, entries } = encodeDigestCache(root, records);
    expect(entries).toBe(records.length);
    writeDigestCache(file, bytes);
    const read = readDigestCache(file, root);
    if ('ignored' in read) throw new Error(read.ignored);
    expect(read.entries).toBe(records.length);
    for (const { rel, node } of records) {
      const slash = rel.lastIndexOf('/');
      const stat = statSync(path.join(root, rel));
      expect(read.lookup(rel.slice(0, slash), rel.slice(slash + 1), stat)).toBe(node.key);
    }
    expect(read.trusted).toBe(records.length);
  });

  it('round-trips names of every length and script, and inodes and devices past 2^53', async () => {
    const root = await makeTempDir();
    made.push(root);
    const names = ['a.txt', 'é-ü.md', 'x'.repeat(200), 'ø'.repeat(60), '日本語のファイル名'.repeat(5)];
    const stats = names.map(
      (_, index) =>
        ({
          size: 100 + index,
          mtimeMs: 1_700_000_000_000.25 + index,
          // Every other file has a ctime of its own (the flag that drops it when equal).
          ctimeMs: 1_700_000_000_000.25 + index * (index % 2),
          // Past 2^53, as `Stats` gives them: distinct float64s.
          ino: 2 ** 63 + index * 2 ** 11,
          dev: index < 2 ? 2 ** 40 + 1 : 2049,
          mode: 0o100644,
        }) as unknown as Stats,
    );
    const records = names.map((name, index) => ({
      rel: `dir/${name}`,
      node: { key: makeKey(Buffer.alloc(32, index + 1), 100 + index, stats[index] as Stats, false) } as FileNode,
    }));
    const read = readDigestCache(encodeTo(root, records), root);
    if ('ignored' in read) throw new Error(read.ignored);
    expect([...read.names()].map(({ name }) => name)).toEqual(names);
    names.forEach((name, index) => {
      expect(read.lookup('dir', name, stats[index] as Stats)).toBe(records[index]?.node.key);
    });
    expect(read.current).toBe(true);
    expect(read.lookup('dir', 'not-stored.txt', stats[0] as Stats)).toBeUndefined();
    expect(read.current).toBe(false);
  });

  it('is current only while every entry was trusted and nothing asked for was missing', async () => {
    const { root, records } = await indexedTree();
    const file = encodeTo(root, records);
    const lookAll = (read: StoredDigests, skip = ''): void => lookUpAll(read, root, records, skip);
    const all = readDigestCache(file, root) as StoredDigests;
    lookAll(all);
    expect(all.current).toBe(true);
    const one = readDigestCache(file, root) as StoredDigests;
    lookAll(one, 'b/z.txt');
    expect(one.current).toBe(false); // an entry no file now has: the file would lose it
    const facts = readDigestCache(file, root) as StoredDigests;
    lookAll(facts);
    expect(facts.manifest('a', 'a')).toBeUndefined(); // none stored: the SKILL.md is parsed, the file gains them
    expect(facts.current).toBe(false);
  });

  it('names every entry in file order, and lookups still trust each one after (and while) they are named', async () => {
    const { root, records } = await indexedTree();
    const read = readDigestCache(encodeTo(root, records), root);
    if ('ignored' in read) throw new Error(read.ignored);
    const named: string[] = [];
    for (const { dirRel, name } of read.names()) {
      named.push(dirRel === '' ? name : `${dirRel}/${name}`);
      const stat = statSync(path.join(root, dirRel, name));
      expect(read.lookup(dirRel, name, stat)).toBe(records.find((record) => record.rel === named.at(-1))?.node.key);
    }
    expect(named).toEqual(records.map(({ rel }) => rel));
    expect([...read.names()]).toHaveLength(records.length);
    expect(read.trusted).toBe(records.length);
  });

  it('holds at most 64 bytes per file plus its path', async () => {
    const { root, records } = await indexedTree();
    const { bytes } = encodeDigestCache(root, records);
    const paths = records.reduce((sum, { rel }) => sum + Buffer.byteLength(rel), 0);
    const header = Buffer.byteLength('skills-serve digest cache\n') + 5 + 200 + Buffer.byteLength(root) + 32;
    expect(bytes.length).toBeLessThanOrEqual(64 * records.length + paths + header);
  });

  it.each([
    ['empty', (bytes: Buffer) => bytes.subarray(0, 0), 'not a digest cache file'],
    ['cut short', (bytes: Buffer) => bytes.subarray(0, bytes.length - 1), 'truncated or corrupted (checksum mismatch)'],
    [
      'cut in half',
      (bytes: Buffer) => bytes.subarray(0, bytes.length >> 1),
      'truncated or corrupted (checksum mismatch)',
    ],
    ['garbage', (bytes: Buffer) => Buffer.alloc(bytes.length, 0x5a), 'not a digest cache file'],
    [
      'one bit flipped',
      (bytes: Buffer) => {
        const copy = Buffer.from(bytes);
        copy[copy.length - 40] = (copy[copy.length - 40] as number) ^ 1;
        return copy;
      },
      'truncated or corrupted (checksum mismatch)',
    ],
  ])('a file %s is ignored: %s', async (_name, spoil, reason) => {
    const { root, records } = await indexedTree();
    const cache = await makeTempDir();
    made.push(cache);
    const file = digestCacheFile(cache, root);
    writeDigestCache(file, spoil(encodeDigestCache(root, records).bytes));
    expect(readDigestCache(file, root)).toEqual({ ignored: reason });
  });

  it('a file written for another root, or none at all, is ignored', async () => {
    const { root, records } = await indexedTree();
    const cache = await makeTempDir();
    made.push(cache);
    const file = digestCacheFile(cache, root);
    expect(readDigestCache(file, root)).toEqual({ ignored: 'missing' });
    writeDigestCache(file, encodeDigestCache(`${root}-other`, records).bytes);
    expect(readDigestCache(file, root)).toEqual({ ignored: 'written for another root' });
  });

  it('writing prunes stale roots, leftover temporary files, and the oldest beyond the limit', async () => {
    const cache = await makeTempDir();
    made.push(cache);
    const dir = digestCacheDir(cache);
    const { root, records } = await indexedTree();
    const { bytes } = encodeDigestCache(root, records);
    const stale = digestCacheFile(cache, '/gone/root');
    writeDigestCache(stale, bytes);
    const longAgo = new Date(Date.now() - STALE_CACHE_MS - 60_000);
    utimesSync(stale, longAgo, longAgo);
    const leftover = path.join(dir, 'crashed.123.tmp');
    writeFileSync(leftover, 'partial');
    utimesSync(leftover, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    // Older and older roots, then one more: the oldest beyond the limit go.
    for (let index = 0; index < MAX_CACHE_FILES + 5; index++) {
      const file = digestCacheFile(cache, `/root/${index}`);
      writeDigestCache(file, bytes);
      const when = new Date(Date.now() - (MAX_CACHE_FILES + 5 - index) * 60_000);
      utimesSync(file, when, when);
    }
    const latest = digestCacheFile(cache, root);
    writeDigestCache(latest, bytes);
    const left = readdirSync(dir);
    expect(left.length).toBe(MAX_CACHE_FILES);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(latest)).toBe(true);
    expect(existsSync(digestCacheFile(cache, '/root/0'))).toBe(false);
    expect(existsSync(digestCacheFile(cache, `/root/${MAX_CACHE_FILES + 4}`))).toBe(true);
  });
});

describe('digest cache keeper', () => {
  /** A keeper of `root`'s file in `cacheDir` whose first build looked every record up; and what it said it wrote. */
  function keeperAfterFirstBuild(
    cacheDir: string,
    root: string,
    records: { rel: string; node: FileNode }[],
  ): { keeper: DigestCacheKeeper; wrote: Record<string, number>[] } {
    const wrote: Record<string, number>[] = [];
    const keeper = new DigestCacheKeeper({
      cacheDir,
      roots: () => [{ real: root, files: records, manifest: () => undefined }],
      note: () => undefined,
      wrote: (fields) => wrote.push({ ...fields, ms: 0 }),
    });
    const read = keeper.load(root);
    if (read === undefined) throw new Error('the cache file was not read');
    lookUpAll(read, root, records);
    keeper.schedule(FIRST_WRITE_DELAY_MS);
    return { keeper, wrote };
  }

  it('only touches a file the first build found current, and writes it whole when it is gone by then', async () => {
    const { root, records } = await indexedTree();
    const file = encodeTo(root, records);
    const cacheDir = path.dirname(path.dirname(file));
    const bytes = readFileSync(file);
    const past = new Date('2026-01-01T00:00:00Z');
    utimesSync(file, past, past);
    const touched = keeperAfterFirstBuild(cacheDir, root, records);
    touched.keeper.flush();
    expect(touched.wrote).toEqual([{ roots: 0, current: 1, entries: 0, bytes: 0, ms: 0 }]);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(statSync(file).mtimeMs).toBeGreaterThan(past.getTime());
    // Removed between the first build and the touch: the touch fails, and the file is written instead.
    const gone = keeperAfterFirstBuild(cacheDir, root, records);
    rmSync(file);
    gone.keeper.flush();
    expect(gone.wrote).toEqual([{ roots: 1, current: 0, entries: records.length, bytes: bytes.length, ms: 0 }]);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});

describe('digest cache file: SKILL.md facts', () => {
  const valid: ManifestFacts = {
    skillPath: 'acme/a',
    hidden: { count: 2, kinds: ['bidirectional controls', 'zero-width characters'], line: 3, column: 7 },
    read: {
      frontmatterJson: '{"name":"a","description":"Été \\"quoted\\"","metadata":{"k":"v"}}',
      name: 'a',
      description: 'Été "quoted"',
      headings: 'A\nB',
      modelInvocable: false,
      userInvocable: true,
    },
  };
  const invalid: ManifestFacts = {
    skillPath: 'acme/b',
    hidden: undefined,
    read: {
      problems: [
        { rule: 'name-mismatch', message: 'the name is not the folder', hint: 'rename', line: 2 },
        { rule: 'skill-too-large', message: 'too large', hint: 'split it', line: 1, column: 1 },
        { rule: 'description-blank', message: 'blank', hint: 'describe it' },
      ],
    },
  };

  /** A tree of two skills and the records the index would hold for it, `b/SKILL.md` racy when `racyB`. */
  const twoSkills = (racyB: boolean): ReturnType<typeof indexedTree> =>
    indexedTree({ 'a/SKILL.md': 'a\n', 'a/x.txt': 'x', 'b/SKILL.md': 'b\n' }, racyB ? ['b/SKILL.md'] : []);

  const factsOf = (dirRel: string): ManifestFacts | undefined =>
    dirRel === 'a' ? valid : dirRel === 'b' ? invalid : undefined;

  it('are read back field for field, beside the digest, for the skill path they were read under only', async () => {
    const { root, records } = await twoSkills(false);
    const read = readDigestCache(encodeTo(root, records, factsOf), root);
    if ('ignored' in read) throw new Error(read.ignored);
    // As a walk asks: each directory once (its records are decoded once, then dropped), SKILL.md first.
    expect(read.manifest('a', 'acme/a')).toEqual(valid);
    // Under another skill path (another prefix, a root served under another name) they do not hold.
    expect(read.manifest('a', 'a')).toBeUndefined();
    for (const { rel, node } of records) {
      if (rel === 'b/SKILL.md') {
        expect(read.manifest('b', 'other/b')).toBeUndefined();
        expect(read.manifest('b', 'acme/b')).toEqual(invalid);
      }
      const stat = statSync(path.join(root, rel));
      expect(read.lookup(path.dirname(rel), path.basename(rel), stat)).toBe(node.key);
    }
    expect([...read.names()].map(({ dirRel, name }) => `${dirRel}/${name}`)).toEqual(records.map(({ rel }) => rel));
  });

  it('are left out with a racy SKILL.md entry', async () => {
    const { root, records } = await twoSkills(true);
    const read = readDigestCache(encodeTo(root, records, factsOf), root);
    if ('ignored' in read) throw new Error(read.ignored);
    expect(read.entries).toBe(records.length - 1);
    expect(read.manifest('a', 'acme/a')).toEqual(valid);
    expect(read.manifest('b', 'acme/b')).toBeUndefined();
  });

  it('a file of the previous format version is ignored, not misread', async () => {
    const { root, records } = await twoSkills(false);
    const file = encodeTo(root, records, factsOf);
    const bytes = readFileSync(file);
    bytes[Buffer.byteLength('skills-serve digest cache\n')] = DIGEST_CACHE_VERSION - 1;
    writeFileSync(file, bytes);
    expect(readDigestCache(file, root)).toEqual({
      ignored: `version ${DIGEST_CACHE_VERSION - 1}, not ${DIGEST_CACHE_VERSION}`,
    });
  });
});
