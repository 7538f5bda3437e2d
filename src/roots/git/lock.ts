/**
 * Turns between processes at one file of a shared cache (docs/git-roots.md, "Shared caches"): servers on one machine,
 * or replicas on several machines over a shared volume, that write the same bare repository or `refs.json`.
 *
 * A lock is a file created with `O_CREAT|O_EXCL` (atomic on local file systems and NFSv3+) holding its holder's pid,
 * host, a random token and when it was taken. The holder touches it every {@link HEARTBEAT_MS}. A lock is stale when
 * its holder ran on this host and no longer runs, or when nobody touched it for `staleMs` (a holder on another
 * machine that died, or one whose pid was reused). A stale lock is moved aside (`rename`, atomic) and the moved file
 * compared with what was judged stale: when a waiter moved a lock someone had just taken instead, it is put back, so
 * two waiters cannot both take over one stale lock. Waiters wake on the directory's change events (`fs.watch`) and
 * poll with backoff (25 ms doubling to 1 s) where events do not arrive (NFS).
 */
import { randomBytes } from 'node:crypto';
import { type FSWatcher, promises as fsp, watch } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/** How often a holder touches its lock (ms). */
export const HEARTBEAT_MS = 2_000;

/** Default age (ms since the last touch) past which a lock is stale whoever holds it. */
export const STALE_MS = 30_000;

/** First and longest pause between two looks at a lock held by someone else (ms). */
const FIRST_WAIT_MS = 25;
const LONGEST_WAIT_MS = 1_000;

/** What a lock file holds. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
  /** When it was taken (ms since the epoch). */
  readonly acquiredAt: number;
}

/** How to take a lock. */
export interface LockOptions {
  /** Give up waiting after this long (ms); then {@link LockTimeoutError}. */
  readonly timeoutMs: number;
  /** Stop waiting when this aborts (the signal's reason is thrown). */
  readonly signal?: AbortSignal;
  /** Age past which a lock is stale (ms; default {@link STALE_MS}). */
  readonly staleMs?: number;
  /** Whether a pid of this host runs (default: `process.kill(pid, 0)` succeeds or is refused with `EPERM`). */
  readonly isAlive?: (pid: number) => boolean;
}

/** The lock stayed held by a live holder past `timeoutMs`. */
export class LockTimeoutError extends Error {
  constructor(
    readonly lockFile: string,
    readonly owner: LockOwner | undefined,
  ) {
    super(
      owner === undefined
        ? `${lockFile} stayed locked`
        : `${lockFile} stayed locked by pid ${owner.pid} on ${owner.host} since ${new Date(owner.acquiredAt).toISOString()}`,
    );
    this.name = 'LockTimeoutError';
  }
}

/** This machine's name as lock files record it. */
export const HOST = hostname();

/**
 * Whether a process of this host runs.
 *
 * @param pid a process id.
 */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `task` while holding the lock `lockFile`, waiting for it as long as a live holder keeps it (up to
 * `options.timeoutMs`), and releases it after, whatever `task` did. Taking a free lock costs one `open` and one
 * `unlink`.
 *
 * @param lockFile path of the lock file (its directory must exist).
 * @param task what to do while holding it.
 * @returns what `task` returned.
 * @throws LockTimeoutError naming the holder when the wait passes `timeoutMs`; the signal's reason when it aborts;
 *   the file system's error when the lock cannot be created for another reason than its existence; whatever `task`
 *   threw.
 */
export async function withLock<T>(lockFile: string, task: () => Promise<T>, options: LockOptions): Promise<T> {
  const owner = await acquire(lockFile, options);
  const heartbeat = setInterval(() => {
    const now = new Date();
    void fsp.utimes(lockFile, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    return await task();
  } finally {
    clearInterval(heartbeat);
    await release(lockFile, owner);
  }
}

/** Takes the lock, waiting while a live holder keeps it. */
async function acquire(lockFile: string, options: LockOptions): Promise<LockOwner> {
  const owner: LockOwner = {
    pid: process.pid,
    host: HOST,
    token: randomBytes(8).toString('hex'),
    acquiredAt: Date.now(),
  };
  const text = `${JSON.stringify(owner)}\n`;
  const deadline = Date.now() + options.timeoutMs;
  const staleMs = options.staleMs ?? STALE_MS;
  const isAlive = options.isAlive ?? processIsAlive;
  let waiter: DirectoryWaiter | undefined;
  let pause = FIRST_WAIT_MS;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      try {
        await fsp.writeFile(lockFile, text, { flag: 'wx' });
        return owner;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      // Watch before looking, so a release between the look and the wait still wakes us.
      waiter ??= new DirectoryWaiter(lockFile);
      const held = await readLock(lockFile);
      if (held === undefined) continue;
      if (isStale(held, Date.now(), staleMs, isAlive)) {
        await moveAsideIf(lockFile, held.text);
        continue;
      }
      if (Date.now() >= deadline) throw new LockTimeoutError(lockFile, held.owner);
      await waiter.wait(Math.min(pause, deadline - Date.now()), options.signal);
      pause = Math.min(pause * 2, LONGEST_WAIT_MS);
    }
  } finally {
    waiter?.close();
  }
}

/** A lock file as found: its text, its owner when the text is one, and when it was last touched. */
interface FoundLock {
  readonly text: string;
  readonly owner: LockOwner | undefined;
  readonly touchedAt: number;
}

/** Reads a lock file; `undefined` when it is gone. */
async function readLock(lockFile: string): Promise<FoundLock | undefined> {
  try {
    const [text, stat] = await Promise.all([fsp.readFile(lockFile, 'utf8'), fsp.stat(lockFile)]);
    let owner: LockOwner | undefined;
    try {
      const parsed = JSON.parse(text) as Partial<LockOwner>;
      if (
        typeof parsed.pid === 'number' &&
        typeof parsed.host === 'string' &&
        typeof parsed.token === 'string' &&
        typeof parsed.acquiredAt === 'number'
      )
        owner = parsed as LockOwner;
    } catch {
      // Being written (created empty, then filled), or damaged: only its age can tell.
    }
    return { text, owner, touchedAt: stat.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Whether a found lock is stale: its holder ran on this host and is gone, or it was not touched for `staleMs`.
 *
 * @param found the lock as read.
 * @param now the time (ms since the epoch).
 */
export function isStale(
  found: Pick<FoundLock, 'owner' | 'touchedAt'>,
  now: number,
  staleMs: number,
  isAlive: (pid: number) => boolean,
): boolean {
  if (found.owner !== undefined && found.owner.host === HOST && !isAlive(found.owner.pid)) return true;
  return now - found.touchedAt > staleMs;
}

/**
 * Removes the lock file if it still holds `judged`: moved aside first (atomic), then compared; a lock taken in
 * between by someone else is put back (a hard link, which fails if yet another process took the place meanwhile).
 */
async function moveAsideIf(lockFile: string, judged: string): Promise<void> {
  const aside = `${lockFile}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await fsp.rename(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if ((await fsp.readFile(aside, 'utf8')) !== judged) await fsp.link(aside, lockFile).catch(() => undefined);
  } finally {
    await fsp.rm(aside, { force: true });
  }
}

/** Removes the lock file if it is still ours (a waiter may have judged it stale and taken it over). */
async function release(lockFile: string, owner: LockOwner): Promise<void> {
  const held = await readLock(lockFile).catch(() => undefined);
  if (held?.owner?.token === owner.token) await fsp.rm(lockFile, { force: true });
}

/**
 * Waits for a change to one file of a directory: an `fs.watch` event naming it (or naming nothing), or a timeout.
 * Where the directory cannot be watched (inotify limits, some network file systems), only the timeout remains.
 */
export class DirectoryWaiter {
  readonly #name: string;
  #watcher: FSWatcher | undefined;
  #changed = false;
  #wake: (() => void) | undefined;

  /** @param file the file whose directory is watched. */
  constructor(file: string) {
    this.#name = path.basename(file);
    try {
      this.#watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
        if (name !== null && name !== this.#name) return;
        this.#changed = true;
        this.#wake?.();
      });
      this.#watcher.on('error', () => this.close());
    } catch {
      this.#watcher = undefined;
    }
  }

  /**
   * Resolves at the next change of the file since the last call (at once if one came meanwhile), after `ms`, or
   * when `signal` aborts (the caller checks it).
   */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#changed) {
      this.#changed = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#wake = undefined;
        this.#changed = false;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
  }

  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}

/**
 * Waits until `file` no longer exists: woken by its directory's change events, polling with backoff.
 *
 * @param file the file.
 * @param timeoutMs the longest wait (ms).
 * @param signal stops the wait (the caller checks it).
 * @returns whether it is gone.
 */
export async function waitUntilGone(file: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const exists = (): Promise<boolean> =>
    fsp.stat(file).then(
      () => true,
      () => false,
    );
  const deadline = Date.now() + timeoutMs;
  const waiter = new DirectoryWaiter(file);
  try {
    for (let pause = FIRST_WAIT_MS; await exists(); pause = Math.min(pause * 2, LONGEST_WAIT_MS)) {
      if (Date.now() >= deadline || signal?.aborted === true) return false;
      await waiter.wait(Math.min(pause, deadline - Date.now()), signal);
    }
    return true;
  } finally {
    waiter.close();
  }
}
