/**
 * The watcher: one `fs.watch` per directory, attached by the index walk as it lists each directory (the builder's
 * {@link IndexObserver}), so watching costs no second walk and no change after a listing is missed
 * (docs/ARCHITECTURE.md, "Watching"). Events are batched (debounced) and handed on as root-relative
 * {@link WatchEvent}s.
 *
 * - **Polling** (`--poll`, and the fallback when the OS refuses more watches: ENOSPC, EMFILE): every interval, each
 *   directory the walk listed and each file the index holds is `stat`ed and compared with what was recorded.
 * - **Roots**: every `ROOT_CHECK_MS` (and at once when the root's parent directory reports a change to its name), each
 *   root's real path and identity are compared with those it was indexed under: a root replaced at once, removed,
 *   back, or a root link re-pointed (`ln -s new tmp && mv -T tmp current`) asks for a rescan of that root.
 * - **Queue overflow**: the kernel drops events when its queue fills, and `fs.watch` does not say so; a batch of more
 *   than {@link OVERFLOW_SUSPECT_EVENTS} events asks for a rescan of the roots it touched.
 */
import { type FSWatcher, realpathSync, type Stats, statSync, watch } from 'node:fs';
import path from 'node:path';

import type { IndexObserver } from '../index/build.js';
import { sameIdentity } from '../index/record.js';
import { regionContains } from '../index/region.js';
import { createSlicer } from '../index/slice.js';
import type { FileNode, RootSpec } from '../index/types.js';
import type { Logger } from '../log.js';
import { eventPath, isIgnoredEventName, type NameSeparators, type WatchEvent } from './classify.js';

/** Quiet time after the last event before a batch is handed over (ms). */
export const DEBOUNCE_MS = 40;
/** Longest a batch waits while events keep arriving (ms). */
export const MAX_BATCH_WAIT_MS = 400;
/** Polling interval when the OS refused watches and `--poll` gave none (ms). */
export const FALLBACK_POLL_MS = 1000;
/** How often each root's real path and identity are checked (ms). */
export const ROOT_CHECK_MS = 500;
/** A batch this large may hide dropped events: its roots are rescanned. */
export const OVERFLOW_SUSPECT_EVENTS = 8192;

/** A file the index holds, for polling. */
export interface IndexedFile {
  readonly rel: string;
  readonly real: string;
  readonly node: FileNode;
}

export interface WatcherOptions {
  readonly roots: readonly RootSpec[];
  /** Roots never watched (git trees: they never change in place; a new commit is a new tree). */
  readonly unwatched?: ReadonlySet<number>;
  /** Polling interval in ms; `undefined` uses native file events. */
  readonly pollMs: number | undefined;
  /** Receives each batch, in arrival order. */
  readonly onBatch: (events: WatchEvent[]) => void;
  /** The files the index holds for a root (what polling compares). */
  readonly files: (rootIndex: number) => Iterable<IndexedFile>;
  readonly logger: Logger;
}

/** How this platform's `fs.watch` names are split: at `\` too on Windows only (elsewhere it is part of a name). */
const SEPARATORS: NameSeparators = path.sep === '\\' ? 'win32' : 'posix';

const LIMIT_HINTS: Readonly<Record<string, string>> = {
  ENOSPC:
    'the inotify watch limit (fs.inotify.max_user_watches) was reached; raise it with `sysctl fs.inotify.max_user_watches=524288`',
  EMFILE: 'the open-file or inotify-instance limit was reached; raise `ulimit -n` or fs.inotify.max_user_instances',
};

/** One directory the walk listed. */
interface WatchedDir {
  /** Its root and root-relative path (what its watch's events are reported under). */
  readonly root: RootWatch;
  readonly rel: string;
  real: string;
  /** The native watch (`undefined` when polling). */
  watcher: FSWatcher | undefined;
  /** The region walk that last listed it. */
  mark: number;
  /** When its watch was attached (a sequence number; see `#died`). */
  seq: number;
  /** Polling: modification time and inode when it was listed. */
  mtimeMs: number;
  ino: number;
}

/** Where a directory watch keeps the directory it watches. */
const DIR_OF = Symbol('skills-serve.watchedDir');
type WatchingFsWatcher = FSWatcher & { [DIR_OF]?: WatchedDir };

interface RootWatch {
  readonly index: number;
  readonly spec: RootSpec;
  polling: boolean;
  readonly dirs: Map<string, WatchedDir>;
  /** Real path and identity the root was indexed under (`undefined`: unusable then). */
  expected: string | undefined;
  /** A rescan was asked for and has not been resolved yet. */
  rescanPending: boolean;
  parentWatcher: FSWatcher | undefined;
}

/** `real` + device, inode and birth time of a directory (inode numbers are reused at once), or `undefined`. */
function rootIdentity(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    const stat = statSync(real);
    return stat.isDirectory() ? `${real}\0${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
  } catch {
    return undefined;
  }
}

/** Watches the roots until {@link TreeWatcher.close}; attach it to the builder as its observer. */
export class TreeWatcher implements IndexObserver {
  readonly #options: WatcherOptions;
  readonly #roots: RootWatch[];
  #batch: WatchEvent[] = [];
  #quietTimer: NodeJS.Timeout | undefined;
  #maxTimer: NodeJS.Timeout | undefined;
  #rootTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #polling = false;
  #mark = 0;
  #seq = 0;
  readonly #regionMarks = new Map<string, number>();
  readonly #regionSeqs = new Map<string, number>();
  /**
   * Directories whose own watch reported that they moved or were deleted (root index + `\0` + rel → when): their watch,
   * and those of everything under them, follow the old inode, so the walk attaches fresh ones where they are listed
   * again. Entries are dropped once a walk over them has started after they were recorded.
   */
  readonly #died = new Map<string, number>();
  #closed = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
    this.#roots = options.roots.map((spec, index) => ({
      index,
      spec,
      polling: options.pollMs !== undefined,
      dirs: new Map(),
      expected: undefined,
      rescanPending: false,
      parentWatcher: undefined,
    }));
  }

  /** Starts the root checks (and the poll timer, when polling). Directory watches come from the walk. */
  start(): void {
    this.#rootTimer = setInterval(() => this.#checkRoots(), ROOT_CHECK_MS);
    this.#rootTimer.unref();
    for (const root of this.#roots)
      if (!root.polling && this.#options.unwatched?.has(root.index) !== true) this.#watchParent(root);
    if (this.#roots.some((root) => root.polling)) this.#startPolling();
  }

  /** How roots are watched now (`native`, `polling`, or `mixed` after a fallback). */
  get mode(): 'native' | 'polling' | 'mixed' {
    const polling = this.#roots.filter((root) => root.polling).length;
    return polling === 0 ? 'native' : polling === this.#roots.length ? 'polling' : 'mixed';
  }

  /** Number of directories watched (or polled). */
  get directories(): number {
    return this.#roots.reduce((sum, root) => sum + root.dirs.size, 0);
  }

  /** Stops every watch and timer. Idempotent. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#quietTimer);
    clearTimeout(this.#maxTimer);
    clearInterval(this.#rootTimer);
    clearTimeout(this.#pollTimer);
    for (const root of this.#roots) {
      for (const dir of root.dirs.values()) dir.watcher?.close();
      root.dirs.clear();
      root.parentWatcher?.close();
    }
  }

  /** {@link IndexObserver}: the walk is about to list `rel` (at `real`): watch it first. */
  directory(rootIndex: number, rel: string, real: string): void {
    const root = this.#roots[rootIndex];
    if (root === undefined || this.#closed || this.#options.unwatched?.has(rootIndex) === true) return;
    let dir = root.dirs.get(rel);
    if (dir !== undefined && (dir.real !== real || this.#diedSince(rootIndex, rel, dir.seq))) {
      dir.watcher?.close();
      dir = undefined;
    }
    if (dir === undefined) {
      dir = { root, rel, real, watcher: undefined, mark: this.#mark, seq: ++this.#seq, mtimeMs: 0, ino: 0 };
      root.dirs.set(rel, dir);
    }
    dir.mark = this.#mark;
    if (root.polling) {
      const stat = statOrUndefined(real);
      dir.mtimeMs = stat?.mtimeMs ?? 0;
      dir.ino = stat?.ino ?? 0;
    } else if (dir.watcher === undefined) {
      dir.watcher = this.#watchDir(dir);
    }
  }

  /** Whether `rel` or a directory above it moved or was deleted after sequence number `seq`. */
  #diedSince(rootIndex: number, rel: string, seq: number): boolean {
    if (this.#died.size === 0) return false;
    for (let at = rel; ; at = at.slice(0, Math.max(0, at.lastIndexOf('/')))) {
      if ((this.#died.get(`${rootIndex}\0${at}`) ?? -1) > seq) return true;
      if (at === '') return false;
    }
  }

  /** {@link IndexObserver}: a region walk starts (directories it lists get its mark). */
  regionStarted(rootIndex: number, rel: string): void {
    this.#mark++;
    this.#regionMarks.set(`${rootIndex}:${rel}`, this.#mark);
    this.#regionSeqs.set(`${rootIndex}:${rel}`, this.#seq);
  }

  /** {@link IndexObserver}: a region walk ended: directories under it that it did not list are let go. */
  regionFinished(rootIndex: number, rel: string): void {
    const root = this.#roots[rootIndex];
    const key = `${rootIndex}:${rel}`;
    const mark = this.#regionMarks.get(key) ?? Number.POSITIVE_INFINITY;
    const startSeq = this.#regionSeqs.get(key) ?? -1;
    this.#regionMarks.delete(key);
    this.#regionSeqs.delete(key);
    if (root === undefined) return;
    for (const [diedKey, seq] of this.#died) {
      const [diedRoot, diedRel] = diedKey.split('\0') as [string, string];
      if (Number(diedRoot) === rootIndex && seq <= startSeq && regionContains(rel, diedRel)) this.#died.delete(diedKey);
    }
    for (const [dirRel, dir] of root.dirs) {
      if (dir.mark >= mark || !regionContains(rel, dirRel)) continue;
      dir.watcher?.close();
      root.dirs.delete(dirRel);
    }
  }

  /** {@link IndexObserver}: the builder resolved a root (again). */
  rootResolved(rootIndex: number, real: string | undefined): void {
    const root = this.#roots[rootIndex];
    if (root === undefined) return;
    root.expected = real === undefined ? undefined : rootIdentity(root.spec.dir);
    root.rescanPending = false;
  }

  /**
   * The listeners every directory watch shares (one pair per watcher, not per directory: at 40,000 directories a
   * closure pair each cost megabytes). Each `FSWatcher` carries its {@link WatchedDir} under {@link DIR_OF}.
   */
  readonly #onChange = ((self: TreeWatcher) =>
    function onChange(this: FSWatcher, kind: string, name: string | Buffer | null): void {
      const dir = (this as WatchingFsWatcher)[DIR_OF];
      if (dir !== undefined) self.#dirChanged(dir, kind, name === null ? null : String(name));
    })(this);

  readonly #onError = ((self: TreeWatcher) =>
    function onError(this: FSWatcher): void {
      const dir = (this as WatchingFsWatcher)[DIR_OF];
      this.close();
      if (dir === undefined) return;
      // A watch that fails later (its directory went away, for instance): the parent's watch reports the removal.
      const current = dir.root.dirs.get(dir.rel);
      if (current?.watcher === this) current.watcher = undefined;
      self.#push({ rootIndex: dir.root.index, kind: 'rename', rel: dir.rel });
    })(this);

  #dirChanged(dir: WatchedDir, kind: string, name: string | null): void {
    if (isIgnoredEventName(name, SEPARATORS)) return;
    const { root, rel } = dir;
    if (kind === 'rename' && name === path.basename(dir.real)) {
      // The directory itself moved or was deleted (or a child has its name): its watch, and the watches below it,
      // may follow the old inode; the walk attaches fresh ones, and the region around it is rebuilt.
      this.#died.set(`${root.index}\0${rel}`, ++this.#seq);
      this.#push({ rootIndex: root.index, kind: 'rename', rel });
    }
    this.#push({
      rootIndex: root.index,
      kind: kind === 'change' ? 'change' : 'rename',
      rel: eventPath(rel, name, SEPARATORS),
    });
  }

  #watchDir(dir: WatchedDir): FSWatcher | undefined {
    try {
      const watcher = watch(dir.real, { persistent: false }) as WatchingFsWatcher;
      watcher[DIR_OF] = dir;
      watcher.on('change', this.#onChange);
      watcher.on('error', this.#onError);
      return watcher;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== undefined && LIMIT_HINTS[code] !== undefined) this.#fallBackToPolling(dir.root, code);
      return undefined;
    }
  }

  /** The OS refused another watch: poll this root from now on, starting with a rescan (so nothing is missed). */
  #fallBackToPolling(root: RootWatch, code: string): void {
    if (root.polling) return;
    root.polling = true;
    for (const dir of root.dirs.values()) {
      dir.watcher?.close();
      dir.watcher = undefined;
    }
    root.parentWatcher?.close();
    root.parentWatcher = undefined;
    const pollMs = this.#options.pollMs ?? FALLBACK_POLL_MS;
    this.#options.logger.warn(
      { event: 'watch-fallback', root: root.spec.dir, code, pollMs, hint: LIMIT_HINTS[code] },
      `the OS refused more file watches (${code}): ${LIMIT_HINTS[code] ?? code}. Polling this root every ${pollMs} ms instead; changes are still followed.`,
    );
    this.#push({ rootIndex: root.index, kind: 'rescan', rel: '' });
    this.#startPolling();
  }

  /** Watches a root's parent directory for the root's own name (a root link re-pointed, a root replaced). */
  #watchParent(root: RootWatch): void {
    const parent = path.dirname(root.spec.dir);
    const name = path.basename(root.spec.dir);
    if (parent === root.spec.dir) return;
    try {
      root.parentWatcher = watch(parent, { persistent: false }, (_kind, changed) => {
        if (changed === null || changed === name) this.#checkRoot(root);
      });
      root.parentWatcher.on('error', () => {
        root.parentWatcher?.close();
        root.parentWatcher = undefined;
      });
    } catch {
      // the periodic root check still runs
    }
  }

  #checkRoots(): void {
    for (const root of this.#roots) if (this.#options.unwatched?.has(root.index) !== true) this.#checkRoot(root);
  }

  #checkRoot(root: RootWatch): void {
    if (this.#closed || root.rescanPending || rootIdentity(root.spec.dir) === root.expected) return;
    root.rescanPending = true;
    const now = rootIdentity(root.spec.dir);
    const { logger } = this.#options;
    if (now === undefined)
      logger.warn(
        { event: 'root-removed', root: root.spec.dir },
        'root was removed; its skills are withdrawn until it comes back',
      );
    else if (root.expected === undefined)
      logger.info({ event: 'root-back', root: root.spec.dir }, 'root is back; rescanning it');
    else
      logger.info(
        { event: 'root-replaced', root: root.spec.dir },
        'root was replaced (or a root link re-pointed); rescanning it',
      );
    this.#push({ rootIndex: root.index, kind: 'rescan', rel: '' });
  }

  #startPolling(): void {
    if (this.#pollTimer !== undefined || this.#closed) return;
    const interval = this.#options.pollMs ?? FALLBACK_POLL_MS;
    const tick = (): void => {
      this.#pollTimer = setTimeout(() => {
        void this.#poll().finally(() => {
          if (!this.#closed) tick();
        });
      }, interval);
      this.#pollTimer.unref();
    };
    tick();
  }

  /** One polling pass over every polled root: directories whose listing may have changed, files whose identity did. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    const slice = createSlicer();
    try {
      for (const root of this.#roots) {
        // A git root's tree only changes with a new commit, which the git source announces: nothing to poll.
        if (!root.polling || this.#closed || this.#options.unwatched?.has(root.index) === true) continue;
        for (const [rel, dir] of root.dirs) {
          const stat = statOrUndefined(dir.real);
          if (stat === undefined || stat.mtimeMs !== dir.mtimeMs || stat.ino !== dir.ino) {
            dir.mtimeMs = stat?.mtimeMs ?? 0;
            dir.ino = stat?.ino ?? 0;
            this.#push({ rootIndex: root.index, kind: 'rename', rel });
          }
          await slice();
        }
        for (const file of this.#options.files(root.index)) {
          const stat = statOrUndefined(file.real);
          if (stat === undefined || !stat.isFile() || !sameIdentity(file.node, stat)) {
            this.#push({ rootIndex: root.index, kind: 'change', rel: file.rel });
          }
          await slice();
        }
      }
    } finally {
      this.#polling = false;
    }
  }

  #push(event: WatchEvent): void {
    if (this.#closed) return;
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
    if (batch.length === 0 || this.#closed) return;
    if (batch.length >= OVERFLOW_SUSPECT_EVENTS) {
      const roots = new Set(batch.map((event) => event.rootIndex));
      this.#options.logger.info(
        { event: 'watch-overflow', events: batch.length },
        'a burst of changes may have overflowed the event queue; rescanning',
      );
      for (const rootIndex of roots) batch.push({ rootIndex, kind: 'rescan', rel: '' });
    }
    this.#options.onBatch(batch);
  }
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
