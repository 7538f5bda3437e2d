/**
 * Watches every root with chokidar and hands batches of root-relative events to a callback
 * (live updates; DESIGN §3 `watcher.ts`). Same ignore rules as the index; symlinks are not followed by the
 * watcher (a link's own changes are seen, changes behind a link to elsewhere in the roots are seen at their real
 * path). Falls back to polling when the OS refuses watches, and re-attaches to a root that was removed and
 * comes back.
 */
import { watch, type FSWatcher } from 'chokidar';
import { promises as fsp, type Stats } from 'node:fs';
import path from 'node:path';
import { IGNORE_FILE, isIgnoredName } from '../index/policy.js';
import type { RootSpec } from '../index/types.js';
import type { Logger } from '../log.js';
import type { WatchEvent } from './classify.js';

/** Quiet time after the last event before a batch is handed over (ms). */
export const DEBOUNCE_MS = 40;
/** Longest a batch waits while events keep arriving (ms). */
export const MAX_BATCH_WAIT_MS = 400;
/** Polling interval when polling is forced by an OS limit and `--poll` gave none (ms). */
export const FALLBACK_POLL_MS = 1000;
/**
 * chokidar drops a file's `change` event that follows the previous one within 50 ms (its throttle), so the last
 * write of a quick series (an editor saving twice, a slow write's final chunk) can go unreported. Every added or
 * changed file is therefore looked at once more this long after its batch; an unchanged file costs one `stat`.
 */
export const RECHECK_MS = 120;
/** How often each root's identity (device, inode) is compared with the watched directory's (ms). */
export const ROOT_IDENTITY_CHECK_MS = 500;
/** How often a removed root is checked for coming back (ms). */
export const ROOT_RETURN_CHECK_MS = 250;

export interface WatcherOptions {
  readonly roots: readonly RootSpec[];
  /** Polling interval in ms; `undefined` uses native file events. */
  readonly pollMs: number | undefined;
  /** Receives each debounced batch, in arrival order. */
  readonly onBatch: (events: WatchEvent[]) => void;
  readonly logger: Logger;
}

const LIMIT_HINTS: Readonly<Record<string, string>> = {
  ENOSPC: 'the inotify watch limit (fs.inotify.max_user_watches) was reached; raise it with `sysctl fs.inotify.max_user_watches=524288`',
  EMFILE: 'the open-file or inotify-instance limit was reached; raise `ulimit -n` or fs.inotify.max_user_instances',
};

interface RootWatch {
  readonly index: number;
  readonly spec: RootSpec;
  watcher: FSWatcher | undefined;
  polling: boolean;
  returnTimer: NodeJS.Timeout | undefined;
  /** Device and inode of the root directory the watcher is attached to (`undefined` while detached). */
  identity: string | undefined;
  /** A re-attach is under way: identity checks wait for it. */
  busy: boolean;
}

/** `dev:ino:birthtime` of a directory (inode numbers are reused at once), or `undefined` when it is missing or not a directory. */
async function identityOf(dir: string): Promise<string | undefined> {
  try {
    const stat = await fsp.stat(dir);
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Watches roots until {@link RootsWatcher.close}.
 */
export class RootsWatcher {
  readonly #options: WatcherOptions;
  readonly #roots: RootWatch[];
  #batch: WatchEvent[] = [];
  /** Files to look at again after {@link RECHECK_MS}, keyed by root and path. */
  #recheck = new Map<string, WatchEvent>();
  #recheckTimer: NodeJS.Timeout | undefined;
  #quietTimer: NodeJS.Timeout | undefined;
  #maxTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #identityTimer: NodeJS.Timeout | undefined;

  constructor(options: WatcherOptions) {
    this.#options = options;
    this.#roots = options.roots.map((spec, index) => ({
      index,
      spec,
      watcher: undefined,
      polling: options.pollMs !== undefined,
      returnTimer: undefined,
      identity: undefined,
      busy: false,
    }));
  }

  /** Starts watching every root; resolves when each watcher has finished its initial scan. */
  async start(): Promise<void> {
    await Promise.all(this.#roots.map((root) => this.#attach(root)));
    this.#identityTimer = setInterval(() => this.#checkIdentities(), ROOT_IDENTITY_CHECK_MS);
    this.#identityTimer.unref();
    this.#options.logger.info(
      { roots: this.#roots.length, mode: this.#roots.some((root) => root.polling) ? 'polling' : 'native' },
      'watching roots for changes',
    );
  }

  /** Stops every watcher and timer. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#quietTimer);
    clearTimeout(this.#maxTimer);
    clearTimeout(this.#recheckTimer);
    clearInterval(this.#identityTimer);
    await Promise.all(this.#roots.map((root) => this.#detach(root)));
  }

  async #attach(root: RootWatch): Promise<void> {
    const interval = this.#options.pollMs ?? FALLBACK_POLL_MS;
    const watcher = watch(root.spec.dir, {
      ignoreInitial: true,
      followSymlinks: false,
      ignorePermissionErrors: true,
      usePolling: root.polling,
      interval,
      binaryInterval: interval,
      ignored: (candidate: string, stats?: Stats) => {
        if (candidate === root.spec.dir) return false;
        const name = path.basename(candidate);
        if (name !== IGNORE_FILE && isIgnoredName(name)) return true;
        // With native events, only directories are watched: a directory's watch reports changes to the files in
        // it (see the 'raw' listener), and one watch per file cost ~10 KB each (1.1 GB at 100,000 files).
        return directoriesOnly && stats !== undefined && !stats.isDirectory();
      },
    });
    const directoriesOnly = !root.polling;
    root.watcher = watcher;
    root.identity = await identityOf(root.spec.dir);
    watcher.on('all', (kind, changed) => this.#onEvent(root, kind, changed));
    if (directoriesOnly) {
      watcher.on('raw', (_event, name, details) => {
        const watchedPath = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
        if (typeof name !== 'string' || name === '' || typeof watchedPath !== 'string') return;
        // Events of a directory's own watch name an entry in it; a deleted directory's watch may name itself.
        const changed = path.isAbsolute(name) ? name : path.join(watchedPath, name);
        if (!isIgnoredName(path.basename(changed)) || path.basename(changed) === IGNORE_FILE) this.#onEvent(root, 'change', changed);
      });
    }
    watcher.on('error', (error) => this.#onError(root, error as NodeJS.ErrnoException));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  /**
   * A root replaced faster than the watcher notices (`rm -rf root && cp -r new root`, `mv new root`) leaves the
   * watcher on the old directory, without any event for the root itself: compare the root's device and inode with
   * those seen when attaching, and re-attach and rescan when they differ.
   */
  #checkIdentities(): void {
    for (const root of this.#roots) {
      if (this.#closed || root.busy || root.watcher === undefined || root.returnTimer !== undefined) continue;
      void identityOf(root.spec.dir).then((identity) => {
        if (this.#closed || root.busy || root.watcher === undefined || identity === root.identity) return;
        if (identity === undefined) {
          this.#push({ rootIndex: root.index, kind: 'unlinkDir', rel: '' });
          this.#rootRemoved(root);
          return;
        }
        root.busy = true;
        this.#options.logger.warn({ root: root.spec.dir }, 'root was replaced by another directory; re-attaching and rescanning it');
        void this.#detach(root)
          .then(() => this.#attach(root))
          .then(() => this.#push({ rootIndex: root.index, kind: 'addDir', rel: '' }))
          .finally(() => {
            root.busy = false;
          });
      });
    }
  }

  async #detach(root: RootWatch): Promise<void> {
    clearInterval(root.returnTimer);
    root.returnTimer = undefined;
    const watcher = root.watcher;
    root.watcher = undefined;
    await watcher?.close().catch(() => undefined);
  }

  #onEvent(root: RootWatch, kind: string, changed: string): void {
    if (this.#closed || (kind !== 'add' && kind !== 'change' && kind !== 'unlink' && kind !== 'addDir' && kind !== 'unlinkDir')) return;
    const relative = path.relative(root.spec.dir, changed);
    if (relative.startsWith('..') || path.isAbsolute(relative)) return;
    const rel = relative.split(path.sep).join('/');
    const event: WatchEvent = { rootIndex: root.index, kind, rel };
    this.#push(event);
    if (kind === 'add' || kind === 'change') this.#recheck.set(`${root.index}:${rel}`, { ...event, kind: 'change' });
    if (kind === 'unlinkDir' && rel === '') this.#rootRemoved(root);
  }

  #onError(root: RootWatch, error: NodeJS.ErrnoException): void {
    const hint = error.code === undefined ? undefined : LIMIT_HINTS[error.code];
    if (hint === undefined || root.polling) {
      this.#options.logger.warn({ root: root.spec.dir, err: error }, 'file watcher error');
      return;
    }
    root.polling = true;
    this.#options.logger.warn(
      { root: root.spec.dir, code: error.code, pollMs: this.#options.pollMs ?? FALLBACK_POLL_MS },
      `the OS refused more file watches (${error.code}): ${hint}. Falling back to polling for this root; changes are still followed.`,
    );
    void this.#detach(root)
      .then(() => this.#attach(root))
      .then(() => this.#push({ rootIndex: root.index, kind: 'addDir', rel: '' }));
  }

  /** The root directory itself disappeared: withdraw its skills and wait for it to come back. */
  #rootRemoved(root: RootWatch): void {
    if (root.returnTimer !== undefined) return;
    this.#options.logger.warn({ root: root.spec.dir }, 'root was removed; its skills are withdrawn until it comes back');
    void root.watcher?.close().catch(() => undefined);
    root.watcher = undefined;
    root.identity = undefined;
    root.returnTimer = setInterval(() => {
      fsp.stat(root.spec.dir).then(
        async (stat) => {
          if (!stat.isDirectory() || this.#closed || root.returnTimer === undefined) return;
          clearInterval(root.returnTimer);
          root.returnTimer = undefined;
          await this.#attach(root);
          this.#options.logger.info({ root: root.spec.dir }, 'root is back; rescanning it');
          this.#push({ rootIndex: root.index, kind: 'addDir', rel: '' });
        },
        () => undefined,
      );
    }, ROOT_RETURN_CHECK_MS);
  }

  #push(event: WatchEvent): void {
    this.#batch.push(event);
    clearTimeout(this.#quietTimer);
    this.#quietTimer = setTimeout(() => this.#flush(), DEBOUNCE_MS);
    this.#maxTimer ??= setTimeout(() => this.#flush(), MAX_BATCH_WAIT_MS);
  }

  #flush(): void {
    clearTimeout(this.#quietTimer);
    clearTimeout(this.#maxTimer);
    this.#quietTimer = undefined;
    this.#maxTimer = undefined;
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length > 0 && !this.#closed) this.#options.onBatch(batch);
    if (this.#recheck.size > 0) {
      clearTimeout(this.#recheckTimer);
      this.#recheckTimer = setTimeout(() => {
        const again = [...this.#recheck.values()];
        this.#recheck.clear();
        for (const event of again) this.#push(event);
      }, RECHECK_MS);
    }
  }
}
