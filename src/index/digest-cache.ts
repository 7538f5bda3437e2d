/**
 * Digests remembered by file identity, so rebuilds re-hash only what changed (issue: live updates; DESIGN §4).
 * A cached digest is reused only while the file's device, inode, size, mtime and ctime are all unchanged.
 */
import { statSync, type Stats } from 'node:fs';
import type { PublishedSkill } from './assemble.js';
import { hashFile, hashFileSync, type FileDigest } from './digest.js';

type Identity = Omit<FileDigest, 'bytes'>;

export class DigestCache {
  readonly #entries = new Map<string, Identity>();

  /**
   * The digest of the file at `realPath`: from the cache when its identity is unchanged, otherwise hashed
   * synchronously when it is small (see {@link hashFileSync}). `SKILL.md` files (`keepBytes`) are always read,
   * since their bytes are parsed.
   *
   * @param realPath absolute real path.
   * @param keepBytes return the bytes too.
   * @returns the digest, or `'large'` when the file must be hashed with {@link DigestCache.digest} (asynchronously).
   * @throws NotHashableError like {@link hashFileSync}.
   */
  digestSync(realPath: string, keepBytes: boolean): FileDigest | 'large' {
    const cached = this.#unchanged(realPath, keepBytes);
    if (cached !== undefined) return cached;
    const fresh = hashFileSync(realPath, keepBytes);
    if (fresh !== 'large') this.#remember(realPath, fresh);
    return fresh;
  }

  /**
   * Like {@link DigestCache.digestSync}, for files of any size, asynchronously (large files are read in chunks).
   *
   * @throws NotHashableError like {@link hashFile}.
   */
  async digest(realPath: string, keepBytes: boolean): Promise<FileDigest> {
    const cached = this.#unchanged(realPath, keepBytes);
    if (cached !== undefined) return cached;
    const fresh = await hashFile(realPath, keepBytes);
    this.#remember(realPath, fresh);
    return fresh;
  }

  #unchanged(realPath: string, keepBytes: boolean): Identity | undefined {
    const cached = keepBytes ? undefined : this.#entries.get(realPath);
    if (cached === undefined) return undefined;
    let stat: Stats | undefined;
    try {
      stat = statSync(realPath);
    } catch {
      return undefined;
    }
    const same =
      stat.isFile() &&
      stat.size === cached.size &&
      stat.mtimeMs === cached.mtimeMs &&
      stat.ctimeMs === cached.ctimeMs &&
      stat.ino === cached.ino &&
      stat.dev === cached.dev;
    return same ? cached : undefined;
  }

  #remember(realPath: string, digest: FileDigest): void {
    const { bytes: _bytes, ...identity } = digest;
    this.#entries.set(realPath, identity);
  }

  /** Forgets one file, so its next digest is computed from its bytes whatever its metadata says. */
  forget(realPath: string): void {
    this.#entries.delete(realPath);
  }

  /** Drops entries no published file uses any more, once the cache has grown to twice what is published. */
  prune(published: readonly PublishedSkill[]): void {
    const publishedFiles = published.reduce((sum, skill) => sum + skill.files.length, 0);
    if (this.#entries.size <= 2 * publishedFiles + 1024) return;
    const inUse = new Set<string>();
    for (const skill of published) for (const file of skill.files) inUse.add(file.path);
    for (const key of this.#entries.keys()) if (!inUse.has(key)) this.#entries.delete(key);
  }
}
