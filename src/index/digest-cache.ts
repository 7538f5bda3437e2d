/**
 * The persistent digest cache (docs/ARCHITECTURE.md, "Digest cache"): what a start may trust from the last one. One
 * file per root real path in `<cache dir>/digests/`, holding each file's digest and the identity it was hashed at
 * (size, mtime and ctime in milliseconds as `Stats` gives them, inode, device). A later start trusts an entry only
 * when the file's identity now is the same in all five fields, and the entry was not racy when hashed (`record.ts`
 * `RACY_WINDOW_MS`): then it only `stat`s the file. Reads still verify every byte they send (`server/read.ts`), so
 * an entry that lied cannot reach a host as verified content.
 *
 * The file is versioned and compact: a magic line, a version byte, a JSON header (root, write time, device table,
 * counts), then one record per directory (its root-relative path and the length of its file records) followed by one
 * per file (name, digest, flags, content marks, size, mtime, ctime when it differs from mtime, inode, device index;
 * integers as LEB128), a `SKILL.md`'s followed by what that version of it gives its skill (`manifest.ts`: trusted
 * only with its digest, and only for the skill path it was read under), then the digest of everything before
 * (`digest-algorithm.ts`, which also names the file). Anything else (missing, truncated, garbage, another version or
 * another root) is ignored with the reason. It is written whole to a temporary file beside it and renamed into place,
 * so a reader sees an old file or a new one, and of several servers writing at once the last one wins with a valid
 * file.
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

import { createDigest, DIGEST_BYTES, digestBytes } from './digest-algorithm.js';
import { CONTENT_MARKS, EXECUTE_BIT, hasExecuteBit } from './executables.js';
import type { HiddenCharacters } from './hygiene.js';
import type { ManifestEntry, ManifestFacts } from './manifest.js';
import { MANIFEST_NAME } from './policy.js';
import {
  CTIME_AT,
  DEV_AT,
  executableMarks,
  holdsPrivateKey,
  INO_AT,
  makeKey,
  MTIME_AT,
  SIZE_AT,
  wasRacy,
} from './record.js';
import type { RuleProblem } from './rules.js';
import type { FileNode } from './types.js';

/**
 * The format version; a file of any other version is ignored (and rewritten). 2: the private-key flag needs a whole
 * PEM block (a lone marker line set it in 1). 3: a content-marks byte after the flags (`executables.ts`: shebang,
 * native magic), so a trusted file is flagged as executable without being read. 4: a directory's records may hold its
 * `SKILL.md`'s facts. 5: times in milliseconds as float64, inodes and devices as `Stats` numbers (`record.ts`), where
 * 4 had nanoseconds and 64-bit integers.
 */
export const DIGEST_CACHE_VERSION = 5;

const MAGIC = Buffer.from('skills-serve digest cache\n', 'latin1');
const DIR_RECORD = 1;
const FILE_RECORD = 2;
/** The facts of the directory's `SKILL.md` (`manifest.ts`), after its file record. */
const MANIFEST_RECORD = 3;
const FLAG_PRIVATE_KEY = 1;
const FLAG_CTIME_IS_MTIME = 2;
/** The checksum closing a file is the digest algorithm's, like its entries and its name. */
const CHECKSUM_BYTES = DIGEST_BYTES;

/**
 * The largest cache file read (bytes): about 3.5 million files at 64 bytes and a path each. A larger one is ignored
 * rather than read, so a file put in the cache's place cannot make a start read without end.
 */
export const MAX_CACHE_BYTES = 256 * 1024 * 1024;

/** Most cache files kept in the directory; the least recently written go first. */
export const MAX_CACHE_FILES = 64;
/** A cache file not written for this long is removed when another is written (ms): its root is gone or unused. */
export const STALE_CACHE_MS = 30 * 24 * 3600 * 1000;

/** The directory of the digest cache files under a cache directory. */
export function digestCacheDir(cacheDir: string): string {
  return path.join(cacheDir, 'digests');
}

/** The cache file of the root whose real path is `rootReal`. */
export function digestCacheFile(cacheDir: string, rootReal: string): string {
  return path.join(digestCacheDir(cacheDir), `${digestBytes(rootReal).toString('hex', 0, 16)}.bin`);
}

/** What one start found in a root's cache file. */
export interface StoredDigests {
  /**
   * The record key for the file `name` in the root-relative directory `dirRel` when the stored entry can be trusted
   * for the file's identity now (`stat`).
   *
   * @returns the record key (`record.ts`), or `undefined`: hash the file.
   */
  lookup(dirRel: string, name: string, stat: Stats): string | undefined;
  /**
   * The facts stored beside the digest of the `SKILL.md` in the root-relative directory `dirRel`, when they were read
   * under the skill path `skillPath`: they hold for the version of the file that digest is of, so they are used only
   * when {@link StoredDigests.lookup} trusts it.
   */
  manifest(dirRel: string, skillPath: string): ManifestFacts | undefined;
  /**
   * Every stored entry, in file order: its root-relative directory (`''` for the root, `/`-separated) and file name
   * (for `check --verify-cache`, which asks {@link StoredDigests.lookup} about each).
   */
  names(): Generator<{ readonly dirRel: string; readonly name: string }>;
  /** Entries trusted so far. */
  readonly trusted: number;
  /** Entries in the file. */
  readonly entries: number;
  /**
   * Whether the file already holds what a write would: every entry was trusted, and every lookup and every request
   * for facts found what it asked for (no file was hashed or `SKILL.md` parsed because of the cache).
   */
  readonly current: boolean;
}

/**
 * Reads a root's cache file.
 *
 * @param file its path ({@link digestCacheFile}).
 * @param rootReal the root's real path: a file written for another root is ignored.
 * @returns the stored digests, or why the file was ignored (`missing`, `truncated`, …), for one debug line.
 */
export function readDigestCache(file: string, rootReal: string): StoredDigests | { readonly ignored: string } {
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    // Neither followed through a link nor waiting for a writer: only a regular file the server wrote is read.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { ignored: 'not a regular file' };
    if (stats.size > MAX_CACHE_BYTES) return { ignored: `larger than ${MAX_CACHE_BYTES} bytes` };
    // The magic first: a large file that is not a cache costs no more than its first bytes.
    const head = Buffer.alloc(MAGIC.length);
    if (readSync(fd, head, 0, head.length, 0) < head.length || !head.equals(MAGIC))
      return { ignored: 'not a digest cache file' };
    bytes = readFileSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ignored: code === 'ENOENT' ? 'missing' : code === 'ELOOP' ? 'not a regular file' : 'unreadable' };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (bytes.length < MAGIC.length + 1 + 4 + CHECKSUM_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC))
    return { ignored: 'not a digest cache file' };
  const version = bytes[MAGIC.length];
  if (version !== DIGEST_CACHE_VERSION) return { ignored: `version ${String(version)}, not ${DIGEST_CACHE_VERSION}` };
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  if (!digestBytes(body).equals(bytes.subarray(bytes.length - CHECKSUM_BYTES)))
    return { ignored: 'truncated or corrupted (checksum mismatch)' };
  let header: { root?: unknown; devs?: unknown; files?: unknown };
  const headerLength = body.readUInt32LE(MAGIC.length + 1);
  const headerStart = MAGIC.length + 5;
  try {
    header = JSON.parse(body.toString('utf8', headerStart, headerStart + headerLength)) as typeof header;
  } catch {
    return { ignored: 'unreadable header' };
  }
  if (header.root !== rootReal) return { ignored: 'written for another root' };
  if (
    !Array.isArray(header.devs) ||
    !header.devs.every((dev) => typeof dev === 'number') ||
    typeof header.files !== 'number'
  )
    return { ignored: 'unreadable header' };
  const devs = header.devs;
  // Where each directory's file records start: decoded only when the walk reaches the directory.
  const dirs = new Map<string, number>();
  const reader = new Reader(body, headerStart + headerLength);
  try {
    while (!reader.done) {
      if (reader.byte() !== DIR_RECORD) return { ignored: 'corrupted (a record out of place)' };
      const rel = reader.text();
      const length = reader.number();
      dirs.set(rel, reader.at);
      reader.at += length;
    }
  } catch {
    return { ignored: 'corrupted (a record runs past the end)' };
  }
  if (reader.at !== body.length) return { ignored: 'corrupted (a record runs past the end)' };
  return new StoredRoot(body, dirs, devs, header.files);
}

class StoredRoot implements StoredDigests {
  readonly #body: Buffer;
  /** Where each directory's records start in the body. */
  readonly #dirs: Map<string, number>;
  readonly #devs: readonly number[];
  readonly #reader: Reader;
  /** The directory looked up last, and where the record after the last one found in it starts. */
  #open: { rel: string; start: number; next: number } | undefined;
  #missed = false;
  trusted = 0;
  readonly entries: number;

  constructor(body: Buffer, dirs: Map<string, number>, devs: readonly number[], entries: number) {
    this.#body = body;
    this.#dirs = dirs;
    this.#devs = devs;
    this.#reader = new Reader(body, 0);
    this.entries = entries;
  }

  get current(): boolean {
    return !this.#missed && this.trusted === this.entries;
  }

  // Compared in place: no record is decoded into objects, so a warm start's lookups leave next to no garbage.
  lookup(dirRel: string, name: string, stat: Stats): string | undefined {
    const key = this.#lookup(dirRel, name, stat);
    if (key === undefined) this.#missed = true;
    return key;
  }

  #lookup(dirRel: string, name: string, stat: Stats): string | undefined {
    const digestAt = this.#find(dirRel, name);
    if (digestAt === undefined) return undefined;
    const reader = this.#reader;
    reader.at = digestAt + DIGEST_BYTES;
    const flags = reader.byte();
    const contentMarks = reader.byte() & CONTENT_MARKS;
    if (reader.number() !== stat.size || reader.float64() !== stat.mtimeMs) return undefined;
    if ((flags & FLAG_CTIME_IS_MTIME) === 0 ? reader.float64() !== stat.ctimeMs : stat.ctimeMs !== stat.mtimeMs)
      return undefined;
    if (reader.number() !== stat.ino || this.#devs[reader.number()] !== stat.dev) return undefined;
    this.trusted++;
    const digest = this.#body.subarray(digestAt, digestAt + DIGEST_BYTES);
    const marks = contentMarks | (hasExecuteBit(stat.mode) ? EXECUTE_BIT : 0);
    return makeKey(digest, Number(stat.size), stat, (flags & FLAG_PRIVATE_KEY) !== 0, false, marks);
  }

  manifest(dirRel: string, skillPath: string): ManifestFacts | undefined {
    const facts = this.#manifest(dirRel, skillPath);
    if (facts === undefined) this.#missed = true;
    return facts;
  }

  #manifest(dirRel: string, skillPath: string): ManifestFacts | undefined {
    const digestAt = this.#find(dirRel, MANIFEST_NAME);
    if (digestAt === undefined) return undefined;
    const reader = this.#reader;
    reader.at = digestAt;
    reader.skipFileRest();
    if (reader.done || this.#body[reader.at] !== MANIFEST_RECORD) return undefined;
    try {
      const facts = reader.manifest();
      return facts.skillPath === skillPath ? facts : undefined;
    } catch {
      return undefined; // cut short (past the checksum: a bug): the file is read instead
    }
  }

  *names(): Generator<{ readonly dirRel: string; readonly name: string }> {
    const reader = new Reader(this.#body, 0);
    for (const [dirRel, start] of this.#dirs) {
      reader.at = start;
      for (let kind = reader.peek(); kind === FILE_RECORD || kind === MANIFEST_RECORD; kind = reader.peek()) {
        if (kind === MANIFEST_RECORD) {
          reader.skipManifest();
          continue;
        }
        reader.byte();
        const name = reader.text();
        reader.skipFileRest();
        yield { dirRel, name };
      }
    }
  }

  /**
   * The file record `name` of the directory `dirRel`: searched from the record after the last one found in it (a
   * walk asks in the order the file was written: each directory's names sorted), then from the directory's start.
   *
   * @returns where its digest starts in the body, or `undefined` when it is not stored.
   */
  #find(dirRel: string, name: string): number | undefined {
    if (this.#open?.rel !== dirRel) {
      const start = this.#dirs.get(dirRel);
      if (start === undefined) return undefined;
      this.#open = { rel: dirRel, start, next: start };
    }
    const open = this.#open;
    const length = NAME.write(name, 0, 'utf8');
    if (length === NAME.length) return undefined; // longer than any file name: not stored
    const found =
      this.#scan(open.next, length) ?? (open.next === open.start ? undefined : this.#scan(open.start, length));
    if (found !== undefined) {
      const reader = this.#reader;
      reader.at = found;
      reader.skipFileRest();
      open.next = reader.at;
    }
    return found;
  }

  /** Scans the records from `at` to the directory's end for the name in `NAME` (`length` bytes). */
  #scan(at: number, length: number): number | undefined {
    const reader = this.#reader;
    const body = this.#body;
    reader.at = at;
    try {
      for (let kind = reader.peek(); kind === FILE_RECORD || kind === MANIFEST_RECORD; kind = reader.peek()) {
        if (kind === MANIFEST_RECORD) {
          reader.skipManifest();
          continue;
        }
        reader.byte();
        const nameLength = reader.number();
        const nameAt = reader.at;
        reader.at += nameLength;
        if (nameLength === length && body.compare(NAME, 0, length, nameAt, nameAt + length) === 0) return reader.at;
        reader.skipFileRest();
      }
    } catch {
      // A record cut short (past the checksum, a bug, not a disk fault): the file is hashed.
    }
    return undefined;
  }
}

/** The UTF-8 bytes of the name being looked up (file names are at most 255 bytes on the file systems served). */
const NAME = Buffer.alloc(4096);

/** Sequential reading of the cache body. */
class Reader {
  readonly #bytes: Buffer;
  at: number;

  constructor(bytes: Buffer, at: number) {
    this.#bytes = bytes;
    this.at = at;
  }

  get done(): boolean {
    return this.at >= this.#bytes.length;
  }

  /** The next byte, not consumed (`undefined` at the end). */
  peek(): number | undefined {
    return this.#bytes[this.at];
  }

  byte(): number {
    if (this.at >= this.#bytes.length) throw new RangeError('truncated');
    return this.#bytes[this.at++] as number;
  }

  /** A LEB128 integer below 2^53. */
  number(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.byte();
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
  }

  /** The next 8 bytes as a little-endian float64. */
  float64(): number {
    if (this.at + 8 > this.#bytes.length) throw new RangeError('truncated');
    const value = this.#bytes.readDoubleLE(this.at);
    this.at += 8;
    return value;
  }

  text(): string {
    const length = this.number();
    if (this.at + length > this.#bytes.length) throw new RangeError('truncated');
    const text = this.#bytes.toString('utf8', this.at, this.at + length);
    this.at += length;
    return text;
  }

  /** Skips a file record's fields after its name (from its digest on). */
  skipFileRest(): void {
    this.at += DIGEST_BYTES;
    const flags = this.byte();
    this.byte(); // content marks
    this.number();
    this.at += (flags & FLAG_CTIME_IS_MTIME) === 0 ? 16 : 8;
    while ((this.byte() & 0x80) !== 0);
    this.number();
  }

  /** Skips a {@link MANIFEST_RECORD}. */
  skipManifest(): void {
    this.byte();
    const length = this.number();
    this.at += length;
  }

  /** A {@link MANIFEST_RECORD} (see {@link Writer.manifest}). */
  manifest(): ManifestFacts {
    this.byte();
    this.number(); // its length
    const skillPath = this.text();
    const flags = this.byte();
    let hidden: HiddenCharacters | undefined;
    if ((flags & MANIFEST_HIDDEN) !== 0) {
      const count = this.number();
      const kinds = Array.from({ length: this.number() }, () => this.text());
      hidden = { count, kinds, line: this.number(), column: this.number() };
    }
    if ((flags & MANIFEST_VALID) === 0) {
      const problems = Array.from({ length: this.number() }, (): RuleProblem => {
        const [rule, message, hint] = [this.text(), this.text(), this.text()];
        const [line, column] = [this.number(), this.number()];
        return {
          rule,
          message,
          hint,
          ...(line === 0 ? {} : { line: line - 1 }),
          ...(column === 0 ? {} : { column: column - 1 }),
        };
      });
      return { skillPath, hidden, read: { problems } };
    }
    const entry: ManifestEntry = {
      frontmatterJson: this.text(),
      name: this.text(),
      description: this.text(),
      headings: this.text(),
      modelInvocable: (flags & MANIFEST_MODEL_INVOCABLE) !== 0,
      userInvocable: (flags & MANIFEST_USER_INVOCABLE) !== 0,
    };
    return { skillPath, hidden, read: entry };
  }
}

/** Bytes of a directory record's length: LEB128 up to 2^28, more than {@link MAX_CACHE_BYTES}. */
const LENGTH_BYTES = 4;

/** Flags of a {@link MANIFEST_RECORD}. */
const MANIFEST_VALID = 1;
const MANIFEST_HIDDEN = 2;
const MANIFEST_MODEL_INVOCABLE = 4;
const MANIFEST_USER_INVOCABLE = 8;

/** Growing output of {@link encodeDigestCache}. */
class Writer {
  #bytes: Buffer;
  length = 0;

  /** @param capacity bytes to start with (grown by doubling, each growth a copy). */
  constructor(capacity = 64 * 1024) {
    this.#bytes = Buffer.allocUnsafe(capacity);
  }

  #room(extra: number): void {
    if (this.length + extra <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.length + extra));
    this.#bytes.copy(grown, 0, 0, this.length);
    this.#bytes = grown;
  }

  byte(value: number): void {
    this.#room(1);
    this.#bytes[this.length++] = value;
  }

  /**
   * A LEB128 integer: below 2^53, or any integer a float64 holds (an inode past 2^53 as `Stats` gives it: dividing by
   * 128 is exact, and so is {@link Reader.number}'s sum).
   */
  number(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.byte((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.byte(rest);
  }

  raw(bytes: Buffer): void {
    this.#room(bytes.length);
    bytes.copy(this.#bytes, this.length);
    this.length += bytes.length;
  }

  /** A UTF-8 text after its byte length, written in place (no intermediate buffer). */
  text(value: string): void {
    if (value.length < 128) {
      // ASCII (almost every name) is copied here, cheaper than a call into the encoder for a few bytes.
      this.#room(1 + value.length);
      const bytes = this.#bytes;
      const start = this.length + 1;
      let index = 0;
      for (; index < value.length; index++) {
        const code = value.charCodeAt(index);
        if (code >= 0x80) break;
        bytes[start + index] = code;
      }
      if (index === value.length) {
        bytes[this.length] = index;
        this.length = start + index;
        return;
      }
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.number(length);
    this.#room(length);
    this.length += this.#bytes.write(value, this.length, 'utf8');
  }

  /** `length` bytes of a record key (latin1: one byte per character) from its character `from`. */
  keyBytes(key: string, from: number, length: number): void {
    this.#room(length);
    const bytes = this.#bytes;
    for (let index = 0; index < length; index++) bytes[this.length + index] = key.charCodeAt(from + index);
    this.length += length;
  }

  /**
   * Room for a length not known yet: {@link LENGTH_BYTES} bytes, filled by {@link Writer.closeLength}.
   *
   * @returns where it is.
   */
  openLength(): number {
    this.#room(LENGTH_BYTES);
    const at = this.length;
    this.length += LENGTH_BYTES;
    return at;
  }

  /**
   * Fills the length opened at `at` with the bytes written since, as LEB128 padded to {@link LENGTH_BYTES} bytes
   * (continuation bits on zero-valued groups: what {@link Reader.number} reads as the same number).
   */
  closeLength(at: number): void {
    let rest = this.length - at - LENGTH_BYTES;
    if (rest >= 2 ** (7 * LENGTH_BYTES)) throw new RangeError('a directory record too long for the cache file');
    for (let index = 0; index < LENGTH_BYTES; index++) {
      this.#bytes[at + index] = (rest & 0x7f) | (index < LENGTH_BYTES - 1 ? 0x80 : 0);
      rest = Math.floor(rest / 0x80);
    }
  }

  /**
   * A {@link MANIFEST_RECORD}: its length (so a lookup skips it), then the skill path, a flags byte, the hidden
   * characters (count, kinds, line, column) when flagged, then the entry's texts (frontmatter JSON, name,
   * description, headings) or the problems (rule, message, hint, line and column each + 1, 0 for none).
   */
  manifest(facts: ManifestFacts): void {
    this.byte(MANIFEST_RECORD);
    const lengthAt = this.openLength();
    this.facts(facts);
    this.closeLength(lengthAt);
  }

  /** The fields of {@link Writer.manifest}, after its kind and length. */
  facts(facts: ManifestFacts): void {
    const { skillPath, hidden, read } = facts;
    this.text(skillPath);
    const valid = !('problems' in read);
    this.byte(
      (valid ? MANIFEST_VALID : 0) |
        (hidden === undefined ? 0 : MANIFEST_HIDDEN) |
        (valid && read.modelInvocable ? MANIFEST_MODEL_INVOCABLE : 0) |
        (valid && read.userInvocable ? MANIFEST_USER_INVOCABLE : 0),
    );
    if (hidden !== undefined) {
      this.number(hidden.count);
      this.number(hidden.kinds.length);
      for (const kind of hidden.kinds) this.text(kind);
      this.number(hidden.line);
      this.number(hidden.column);
    }
    if (!valid) {
      this.number(read.problems.length);
      for (const problem of read.problems) {
        this.text(problem.rule);
        this.text(problem.message);
        this.text(problem.hint);
        this.number(problem.line === undefined ? 0 : problem.line + 1);
        this.number(problem.column === undefined ? 0 : problem.column + 1);
      }
      return;
    }
    this.text(read.frontmatterJson);
    this.text(read.name);
    this.text(read.description);
    this.text(read.headings);
  }

  done(): Buffer {
    return this.#bytes.subarray(0, this.length);
  }

  /** Empties it, keeping its memory. */
  reset(): void {
    this.length = 0;
  }
}

/** One indexed file as the builder holds it. */
export interface IndexedFileRecord {
  /** Root-relative, `/`-separated. */
  readonly rel: string;
  readonly node: FileNode;
}

/**
 * Encodes a root's cache file from the files the index holds for it; racy entries are left out (the next start hashes
 * those files again). Each `SKILL.md` entry is followed by its facts, when there are some.
 *
 * Written in one pass into one growing buffer, each field's bytes copied from the record key (`record.ts`) without
 * decoding it. At 10,000 skills (100,000 files) a write held the server's loop for 400-600 ms while each identity was
 * decoded into bigints, and 280-450 ms since (it runs once per write, mostly before V8 optimizes it; 65 ms once it
 * has): so `DigestCacheKeeper` writes as rarely as it can.
 *
 * @param rootReal the root's real path.
 * @param files every file of the root, each directory's files together (as `IndexBuilder.files` yields them).
 * @param manifest the facts of the `SKILL.md` in a root-relative directory, for the version of it `files` holds.
 * @param sizeHint the bytes the last write of this root took: room for as many is taken at once (a fresh buffer grown
 *   by doubling costs a copy and page faults at each step).
 * @returns the file's bytes in order (`parts`, written one after another), the same joined (`bytes`, made when asked),
 *   and how many entries they hold.
 */
export function encodeDigestCache(
  rootReal: string,
  files: Iterable<IndexedFileRecord>,
  manifest: (dirRel: string) => ManifestFacts | undefined = () => undefined,
  sizeHint = 0,
): EncodedDigestCache {
  const out = new Writer(Math.max(64 * 1024, Math.ceil(sizeHint * 1.05)));
  /** Each device met, as the 8 key bytes (latin1) of its number, with its index in the header's table. */
  const devs = new Map<string, number>();
  let lastDev = '';
  let lastDevIndex = 0;
  let entries = 0;
  let currentDir: string | undefined;
  let lengthAt = -1;
  for (const { rel, node } of files) {
    if (wasRacy(node)) continue;
    const key = node.key;
    const slash = rel.lastIndexOf('/');
    const dir = slash === -1 ? '' : rel.slice(0, slash);
    if (dir !== currentDir) {
      if (lengthAt !== -1) out.closeLength(lengthAt);
      out.byte(DIR_RECORD);
      out.text(dir);
      lengthAt = out.openLength();
      currentDir = dir;
    }
    let devIndex = lastDevIndex;
    if (!sameKeyBytes(key, DEV_AT, lastDev)) {
      lastDev = key.slice(DEV_AT, DEV_AT + 8);
      devIndex = devs.get(lastDev) ?? devs.size;
      devs.set(lastDev, devIndex);
      lastDevIndex = devIndex;
    }
    const name = slash === -1 ? rel : rel.slice(slash + 1);
    out.byte(FILE_RECORD);
    out.text(name);
    out.keyBytes(key, 0, DIGEST_BYTES);
    const sameTimes = sameKeyRange(key, MTIME_AT, CTIME_AT, 8);
    out.byte((holdsPrivateKey(node) ? FLAG_PRIVATE_KEY : 0) | (sameTimes ? FLAG_CTIME_IS_MTIME : 0));
    out.byte(executableMarks(node) & CONTENT_MARKS);
    out.number(keyFloat64(key, SIZE_AT));
    out.keyBytes(key, MTIME_AT, 8); // a little-endian float64, in the key and in the file
    if (!sameTimes) out.keyBytes(key, CTIME_AT, 8);
    out.number(keyFloat64(key, INO_AT));
    out.number(devIndex);
    entries++;
    const facts = name === MANIFEST_NAME ? manifest(dir) : undefined;
    if (facts !== undefined) out.manifest(facts);
  }
  if (lengthAt !== -1) out.closeLength(lengthAt);
  const devNumbers = [...devs.keys()].map((bytes) => Buffer.from(bytes, 'latin1').readDoubleLE(0));
  const header = Buffer.from(JSON.stringify({ root: rootReal, devs: devNumbers, files: entries }), 'utf8');
  const head = Buffer.allocUnsafe(MAGIC.length + 5);
  MAGIC.copy(head);
  head[MAGIC.length] = DIGEST_CACHE_VERSION;
  head.writeUInt32LE(header.length, MAGIC.length + 1);
  const records = out.done();
  const parts = [head, header, records];
  const checksum = createDigest();
  for (const part of parts) checksum.update(part);
  parts.push(checksum.digest());
  return {
    parts,
    length: parts.reduce((sum, part) => sum + part.length, 0),
    entries,
    get bytes() {
      return Buffer.concat(parts);
    },
  };
}

/** What {@link encodeDigestCache} makes. */
export interface EncodedDigestCache {
  /** The file's bytes, in order. */
  readonly parts: readonly Buffer[];
  /** Their total length (bytes). */
  readonly length: number;
  /** Entries written. */
  readonly entries: number;
  /** The parts joined (a copy, made at each read). */
  readonly bytes: Buffer;
}

/** Whether the 8 key characters from `at` are `bytes` (8 latin1 characters). */
function sameKeyBytes(key: string, at: number, bytes: string): boolean {
  if (bytes.length !== 8) return false;
  for (let index = 0; index < 8; index++) if (key.charCodeAt(at + index) !== bytes.charCodeAt(index)) return false;
  return true;
}

/** Whether the `length` key characters from `a` equal those from `b`. */
function sameKeyRange(key: string, a: number, b: number, length: number): boolean {
  for (let index = 0; index < length; index++)
    if (key.charCodeAt(a + index) !== key.charCodeAt(b + index)) return false;
  return true;
}

const FLOAT = new DataView(new ArrayBuffer(8));
/** The little-endian float64 at `at` of a key. */
function keyFloat64(key: string, at: number): number {
  for (let index = 0; index < 8; index++) FLOAT.setUint8(index, key.charCodeAt(at + index));
  return FLOAT.getFloat64(0, true);
}

/**
 * Writes a root's cache file atomically (a temporary file beside it, then a rename), then removes cache files of
 * roots not written for {@link STALE_CACHE_MS} and the oldest beyond {@link MAX_CACHE_FILES}.
 *
 * @throws the file system's error when the directory cannot be made or written (a read-only or full cache directory:
 *   the caller logs it at debug level and serves on).
 */
export function writeDigestCache(file: string, bytes: Buffer | readonly Buffer[]): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const fd = openSync(temp, 'w');
    try {
      for (const part of Buffer.isBuffer(bytes) ? [bytes] : bytes)
        for (let at = 0; at < part.length;) at += writeSync(fd, part, at);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  pruneDigestCache(dir, file);
}

function pruneDigestCache(dir: string, keep: string): void {
  const now = Date.now();
  const files: { file: string; mtimeMs: number }[] = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (file === keep) continue;
    try {
      const { mtimeMs } = statSync(file);
      // A temporary file a crashed writer left behind, or a cache file of a root long unused.
      if ((name.endsWith('.tmp') && now - mtimeMs > 60_000) || now - mtimeMs > STALE_CACHE_MS) rmSync(file);
      else if (name.endsWith('.bin')) files.push({ file, mtimeMs });
    } catch {
      // gone meanwhile (another server pruned it)
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { file } of files.slice(MAX_CACHE_FILES - 1)) rmSync(file, { force: true });
}

/** What {@link DigestCacheKeeper} reads and writes through. */
export interface DigestCacheHooks {
  /** The cache directory (`--cache-dir`). */
  readonly cacheDir: string;
  /** The roots' real paths and the files the index holds for each (`IndexBuilder.realOf`, `IndexBuilder.files`). */
  readonly roots: () => Iterable<{
    readonly real: string;
    readonly files: Iterable<IndexedFileRecord>;
    /** The facts of each skill directory's `SKILL.md` (`IndexBuilder.roots`). */
    readonly manifest: (dirRel: string) => ManifestFacts | undefined;
  }>;
  /** Told why a cache file was not used or not written (a debug line: the cache is never worth a failure). */
  readonly note: (event: 'digest-cache-ignored' | 'digest-cache-unwritable', fields: Record<string, unknown>) => void;
  /** Told what was written, and how long encoding and writing took the server's loop (`ms`). */
  readonly wrote: (fields: {
    /** Roots whose file was written. */
    readonly roots: number;
    /** Roots whose file was current: touched, not written. */
    readonly current: number;
    readonly entries: number;
    readonly bytes: number;
    readonly ms: number;
  }) => void;
}

/** How long after the first build the cache is written (ms): off the path of the first answers. */
export const FIRST_WRITE_DELAY_MS = 1000;
/** How long after the last of a burst of rebuilds the cache is written (ms): a burst of edits is one write. */
export const REWRITE_DELAY_MS = 5000;
/** The longest a due write waits for rebuilds to pause (ms): files that never stop changing are still written. */
export const MAX_WRITE_WAIT_MS = 60_000;

/**
 * Loads the roots' cache files for the first walks, and writes them again, batched: after the first build, after
 * rebuilds, and when the server stops. A root whose file the first build found current (`StoredDigests.current`) is
 * not written again until a rebuild: its file's mtime is set to now instead, so it is not pruned as unused.
 */
export class DigestCacheKeeper {
  readonly #hooks: DigestCacheHooks;
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;
  /** When the write now due was first asked for (`performance.now()`). */
  #dueSince: number | undefined;
  #loaded: { readonly real: string; readonly stored: StoredDigests }[] = [];
  /** Roots (real paths) whose file holds what a write would: until a rebuild, only touched. */
  readonly #current = new Set<string>();
  #built = false;
  /** The bytes of each root's last write (by real path): the room the next one takes at once. */
  readonly #lastLength = new Map<string, number>();

  constructor(hooks: DigestCacheHooks) {
    this.#hooks = hooks;
  }

  /** The stored digests of a root about to be walked for the first time (`IndexOptions.storedDigests`). */
  readonly load = (real: string): StoredDigests | undefined => {
    const file = digestCacheFile(this.#hooks.cacheDir, real);
    const read = readDigestCache(file, real);
    if ('ignored' in read) {
      this.#hooks.note('digest-cache-ignored', { file, root: real, reason: read.ignored });
      return undefined;
    }
    this.#loaded.push({ real, stored: read });
    return read;
  };

  /** How many stored entries the walks since the last call found and trusted (and lets the stored digests go). */
  takeCounts(): { readonly stored: number; readonly trusted: number } {
    const counts = {
      stored: this.#loaded.reduce((sum, loaded) => sum + loaded.stored.entries, 0),
      trusted: this.#loaded.reduce((sum, loaded) => sum + loaded.stored.trusted, 0),
    };
    this.#loaded = [];
    return counts;
  }

  /**
   * A build finished: write the cache `delayMs` after the last of a burst of such calls, and at most
   * {@link MAX_WRITE_WAIT_MS} after the first. Call it before {@link DigestCacheKeeper.takeCounts}: after the first
   * build it notes which roots' files are current.
   *
   * @param delayMs {@link FIRST_WRITE_DELAY_MS} after the first build, {@link REWRITE_DELAY_MS} after a rebuild.
   */
  schedule(delayMs: number): void {
    if (this.#built) this.#current.clear();
    else for (const { real, stored } of this.#loaded) if (stored.current) this.#current.add(real);
    this.#built = true;
    this.#dirty = true;
    const now = performance.now();
    this.#dueSince ??= now;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.flush(),
      Math.max(0, Math.min(delayMs, this.#dueSince + MAX_WRITE_WAIT_MS - now)),
    );
    this.#timer.unref();
  }

  /** Writes what is due now (when the server stops). Never throws. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dueSince = undefined;
    if (!this.#dirty) return;
    this.#dirty = false;
    const started = performance.now();
    let roots = 0;
    let current = 0;
    let entries = 0;
    let bytes = 0;
    for (const root of this.#hooks.roots()) {
      const file = digestCacheFile(this.#hooks.cacheDir, root.real);
      if (this.#current.delete(root.real)) {
        try {
          const now = new Date();
          utimesSync(file, now, now);
          current++;
          continue;
        } catch {
          // Gone or unwritable since it was read: written whole below, as any other.
        }
      }
      try {
        const encoded = encodeDigestCache(root.real, root.files, root.manifest, this.#lastLength.get(root.real));
        this.#lastLength.set(root.real, encoded.length);
        writeDigestCache(file, encoded.parts);
        roots++;
        entries += encoded.entries;
        bytes += encoded.length;
      } catch (error) {
        this.#hooks.note('digest-cache-unwritable', {
          file,
          code: (error as NodeJS.ErrnoException).code ?? String(error),
        });
      }
    }
    if (roots > 0 || current > 0)
      this.#hooks.wrote({ roots, current, entries, bytes, ms: Math.round(performance.now() - started) });
  }

  /** Stops the pending write (it is not made). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
