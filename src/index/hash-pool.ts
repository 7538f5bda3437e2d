/**
 * Hashing of large files off the walk's critical path: the walk hashes small files itself, synchronously, and hands
 * files over `SYNC_HASH_MAX_BYTES` to {@link hashLargeFile}, going on with its listing while they are read on the
 * thread pool (docs/ARCHITECTURE.md, "The walk"; why there is no hashing thread: "Memory").
 */
import { type Hashed, hashFile } from './digest.js';

/** How many large files are read at once. */
export const HASH_CONCURRENCY = 4;

let running = 0;
const waiting: (() => void)[] = [];

/**
 * Hashes one large file on this thread, asynchronously (reads on the thread pool, hashing in between), at most
 * {@link HASH_CONCURRENCY} files at once across the process.
 *
 * @param path absolute real path of a regular file.
 * @returns its digest, size and identity.
 * @throws NotHashableError like `hashFile`.
 */
export async function hashLargeFile(path: string): Promise<Hashed> {
  if (running >= HASH_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await hashFile(path);
  } finally {
    running--;
    waiting.shift()?.();
  }
}
