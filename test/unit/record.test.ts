/**
 * The per-file record key (the digest cache of the index, docs/ARCHITECTURE.md "Digest cache"): a file's digest and
 * the identity it had when hashed, in one string. A cached digest may be reused only while size, mtime, ctime, inode
 * and device are all unchanged. And the hashing it is filled from (`digest.ts`), on real files: the raw 32 digest
 * bytes, the size and identity of what was read, the synchronous/chunked boundary and special files.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { promises as fsp, statSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { hashFile, hashFileSync, NotHashableError, SYNC_HASH_MAX_BYTES } from '../../src/index/digest.js';
import {
  digestOf,
  type FileIdentity,
  holdsPrivateKey,
  identityOf,
  isRacyAt,
  KEY_LENGTH,
  makeKey,
  RACY_WINDOW_MS,
  sameDigest,
  sameIdentity,
  wasRacy,
} from '../../src/index/record.js';
import { FileNode } from '../../src/index/types.js';
import { sha256 } from '../helpers/disk.js';
import { tempTrees } from '../helpers/tree.js';

const IDENTITY: FileIdentity = {
  size: 7,
  mtimeMs: 1_700_000_000_123.25,
  ctimeMs: 1_700_000_000_999.5,
  // Inodes past 2^53 are as `Stats` gives them: the nearest float64.
  ino: 2 ** 64 - 2 ** 11,
  dev: 66_306,
};
const raw = (text: string): Buffer => createHash('sha256').update(text).digest();
const node = (key: string, size = IDENTITY.size): FileNode => new FileNode('f.md', size, key, undefined);

describe('record keys', () => {
  it('pack the digest, the identity and the private-key flag, and give them back', () => {
    const key = makeKey(raw('content'), IDENTITY.size, IDENTITY, false);
    expect(key).toHaveLength(KEY_LENGTH);
    expect(KEY_LENGTH).toBe(73);
    expect(digestOf(node(key))).toBe(sha256('content'));
    expect(identityOf(node(key))).toEqual(IDENTITY);
    expect(holdsPrivateKey(node(key))).toBe(false);
    expect(holdsPrivateKey(node(makeKey(raw('content'), IDENTITY.size, IDENTITY, true)))).toBe(true);
  });

  it('reuse a digest only while all five identity fields are unchanged, to the float64 Stats gives', () => {
    const cached = node(makeKey(raw('content'), IDENTITY.size, IDENTITY, false));
    expect(sameIdentity(cached, { ...IDENTITY })).toBe(true);
    expect(sameIdentity(cached, { ...IDENTITY, size: IDENTITY.size + 1 })).toBe(false);
    expect(sameIdentity(cached, { ...IDENTITY, size: IDENTITY.size - 1 })).toBe(false);
    // Times to the last bit of their float64 (2^-12 ms at today's dates); inodes near 2^64.
    for (const field of ['mtimeMs', 'ctimeMs'] as const) {
      for (const delta of [1, -1, 2 ** -12])
        expect(sameIdentity(cached, { ...IDENTITY, [field]: IDENTITY[field] + delta }), `${field} ${delta}`).toBe(
          false,
        );
    }
    expect(sameIdentity(cached, { ...IDENTITY, dev: IDENTITY.dev + 1 })).toBe(false);
    expect(sameIdentity(cached, { ...IDENTITY, ino: IDENTITY.ino - 2 ** 11 })).toBe(false);
  });

  it('flag a file changed within 2 s of being hashed as racy, and only then', () => {
    const at = IDENTITY.ctimeMs;
    expect(isRacyAt(IDENTITY, at)).toBe(true);
    expect(isRacyAt(IDENTITY, at + RACY_WINDOW_MS)).toBe(true);
    expect(isRacyAt(IDENTITY, at + RACY_WINDOW_MS + 1)).toBe(false);
    expect(wasRacy(node(makeKey(raw('content'), IDENTITY.size, IDENTITY, false, true)))).toBe(true);
    expect(wasRacy(node(makeKey(raw('content'), IDENTITY.size, IDENTITY, true, false)))).toBe(false);
    expect(holdsPrivateKey(node(makeKey(raw('content'), IDENTITY.size, IDENTITY, false, true)))).toBe(false);
  });

  it('do not match a file that changed while it was read (bytes read ≠ size at open)', () => {
    const readLess = node(makeKey(raw('conten'), 6, IDENTITY, false), 6);
    expect(sameIdentity(readLess, IDENTITY)).toBe(false);
    expect(identityOf(readLess)).toEqual({ ...IDENTITY, size: 6 });
  });

  it('compare digests regardless of identity', () => {
    const a = node(makeKey(raw('same'), 4, IDENTITY, false));
    const b = node(makeKey(raw('same'), 4, { ...IDENTITY, ino: 3 }, true));
    const c = node(makeKey(raw('diff'), 4, IDENTITY, false));
    expect(sameDigest(a, b)).toBe(true);
    expect(sameDigest(a, c)).toBe(false);
  });

  it('a key made after another does not change the earlier one (no shared buffer leaks into keys)', () => {
    const first = makeKey(raw('one'), 3, IDENTITY, false);
    const copy = `${first}`;
    makeKey(raw('two'), 3, { ...IDENTITY, dev: 1 }, true);
    digestOf(node(makeKey(raw('three'), 5, IDENTITY, false)));
    expect(first).toBe(copy);
    expect(digestOf(node(first))).toBe(sha256('one'));
  });
});

describe('hashing real files', () => {
  const temps = tempTrees();
  afterEach(() => temps.removeAll());

  it('gives the raw 32 digest bytes, the size read and the identity at open; bytes when asked', async () => {
    const root = await temps.tree({
      'a.md': 'Hello.\n',
      'key.pem': generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    const file = path.join(root, 'a.md');
    const stat = statSync(file);
    const hashed = hashFileSync(file);
    if (hashed === 'large') throw new Error('a 7-byte file is not large');
    expect(hashed.digest).toEqual(raw('Hello.\n'));
    expect(hashed.digest).toHaveLength(32);
    expect({
      size: hashed.size,
      identity: hashed.identity,
      privateKey: hashed.privateKey,
      bytes: hashed.bytes,
    }).toEqual({
      size: 7,
      identity: { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, dev: stat.dev },
      privateKey: false,
      bytes: undefined,
    });
    const kept = hashFileSync(file, true);
    expect(kept !== 'large' && kept.bytes?.toString('utf8')).toBe('Hello.\n');
    const pem = hashFileSync(path.join(root, 'key.pem'));
    expect(pem !== 'large' && pem.privateKey).toBe(true);
    const later = await hashFile(file);
    expect({ digest: later.digest, size: later.size, identity: later.identity }).toEqual({
      digest: hashed.digest,
      size: hashed.size,
      identity: hashed.identity,
    });
  });

  it(`reads files up to ${SYNC_HASH_MAX_BYTES} bytes at once and leaves larger ones to the chunked hasher`, async () => {
    const at = Buffer.alloc(SYNC_HASH_MAX_BYTES, 0x61);
    const over = Buffer.alloc(SYNC_HASH_MAX_BYTES + 1, 0x62);
    const root = await temps.tree({ 'at.bin': at, 'over.bin': over });
    const atLimit = hashFileSync(path.join(root, 'at.bin'));
    expect(atLimit !== 'large' && atLimit.digest).toEqual(createHash('sha256').update(at).digest());
    expect(hashFileSync(path.join(root, 'over.bin'))).toBe('large');
    const kept = hashFileSync(path.join(root, 'over.bin'), true);
    expect(kept !== 'large' && { digest: kept.digest, size: kept.size, length: kept.bytes?.length }).toEqual({
      digest: createHash('sha256').update(over).digest(),
      size: over.length,
      length: over.length,
    });
    const chunked = await hashFile(path.join(root, 'over.bin'));
    expect({ digest: chunked.digest, size: chunked.size }).toEqual({
      digest: createHash('sha256').update(over).digest(),
      size: over.length,
    });
  });

  it('refuses special files and missing files with NotHashableError, without blocking on a FIFO', async () => {
    const root = await temps.tree({ pipe: { fifo: true }, dir: { dir: true } });
    for (const [name, reason] of [
      ['pipe', 'special'],
      ['dir', 'special'],
      ['missing', 'io'],
    ] as const) {
      const file = path.join(root, name);
      expect(() => hashFileSync(file), name).toThrow(NotHashableError);
      try {
        hashFileSync(file);
      } catch (error) {
        expect((error as NotHashableError).reason, name).toBe(reason);
      }
      await expect(hashFile(file), name).rejects.toMatchObject({ name: 'NotHashableError', reason });
    }
    expect((await fsp.lstat(path.join(root, 'pipe'))).isFIFO()).toBe(true);
  }, 10_000);
});
