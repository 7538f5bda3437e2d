/**
 * Hashing of large files off the walk's critical path: the walk hashes small files itself, synchronously, and hands
 * files over `SYNC_HASH_MAX_BYTES` to a {@link LargeFileHasher}, going on with its listing while they are read on the
 * thread pool (docs/ARCHITECTURE.md, "The walk"; why there is no hashing thread: "Memory").
 */
import { type Hashed, hashFile } from './digest.js';

/** Hashes one large file. */
export interface LargeFileHasher {
  /**
   * @param path absolute real path of a regular file.
   * @returns its digest, size and identity.
   * @throws NotHashableError like `hashFile`.
   */
  hash(path: string): Promise<Hashed>;
}

/** How many large files the in-process hasher reads at once. */
export const HASH_CONCURRENCY = 4;

/**
 * Hashes large files on this thread, asynchronously (reads on the thread pool, hashing in between), at most
 * {@link HASH_CONCURRENCY} at once.
 */
export class InProcessHasher implements LargeFileHasher {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  async hash(path: string): Promise<Hashed> {
    if (this.#running >= HASH_CONCURRENCY) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      return await hashFile(path);
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }
}
