/**
 * Hashing of large files off the walk's critical path: the walk hashes small files itself, synchronously, and hands
 * files over `SYNC_HASH_MAX_BYTES` to a {@link LargeFileHasher}, going on with its listing while they are read
 * (docs/ARCHITECTURE.md, "The walk").
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { hashFile, NotHashableError, type Hashed } from './digest.js';
import type { HashReply, HashRequest } from './hash-worker.js';

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

/** A worker idle this long is ended (its memory returned); the next large file starts a new one (ms). */
export const WORKER_IDLE_MS = 2000;

/**
 * Hashes large files on a worker thread (the second core), started from our own bundled `hash-worker.js` when the
 * first large file comes and ended when idle. The one place that starts a thread: the no-code-execution test allows
 * exactly this file, and the worker only reads and hashes. Falls back to {@link InProcessHasher} when the worker file
 * is missing (running from source) or the worker fails.
 */
export class WorkerHasher implements LargeFileHasher {
  readonly #workerUrl: URL;
  readonly #fallback = new InProcessHasher();
  #worker: Worker | undefined;
  #failed = false;
  #nextId = 0;
  readonly #waiting = new Map<number, { resolve: (hashed: Hashed) => void; reject: (error: Error) => void; path: string }>();
  #idleTimer: NodeJS.Timeout | undefined;

  /** @param workerUrl the bundled worker file (`dist/hash-worker.js`). */
  constructor(workerUrl: URL) {
    this.#workerUrl = workerUrl;
  }

  hash(path: string): Promise<Hashed> {
    const worker = this.#failed ? undefined : this.#ensureWorker();
    if (worker === undefined) return this.#fallback.hash(path);
    clearTimeout(this.#idleTimer);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject, path });
      worker.postMessage({ id, path } satisfies HashRequest);
    });
  }

  /** Ends the worker now (pending hashes are finished on this thread). */
  close(): void {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    this.#failed = true;
    this.#rescue();
  }

  #ensureWorker(): Worker | undefined {
    if (this.#worker !== undefined) return this.#worker;
    if (!existsSync(fileURLToPath(this.#workerUrl))) {
      this.#failed = true;
      return undefined;
    }
    // A small heap: the worker only reads into one buffer and hashes (its young generation need not grow).
    const worker = new Worker(this.#workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 } });
    worker.unref();
    worker.on('message', (reply: HashReply) => this.#settle(reply));
    worker.on('error', () => {
      this.#failed = true;
      this.#worker = undefined;
      this.#rescue();
    });
    this.#worker = worker;
    return worker;
  }

  #settle(reply: HashReply): void {
    const waiting = this.#waiting.get(reply.id);
    if (waiting === undefined) return;
    this.#waiting.delete(reply.id);
    if ('error' in reply) waiting.reject(new NotHashableError(reply.error, reply.reason, reply.code));
    else waiting.resolve({ digest: Buffer.from(reply.digest), size: reply.size, identity: reply.identity, privateKey: reply.privateKey });
    if (this.#waiting.size === 0) {
      this.#idleTimer = setTimeout(() => {
        const worker = this.#worker;
        this.#worker = undefined;
        void worker?.terminate();
      }, WORKER_IDLE_MS);
      this.#idleTimer.unref();
    }
  }

  /** The worker is gone: whatever it was hashing is hashed here instead. */
  #rescue(): void {
    for (const [id, waiting] of this.#waiting) {
      this.#waiting.delete(id);
      this.#fallback.hash(waiting.path).then(waiting.resolve, waiting.reject);
    }
  }
}
