/**
 * The watcher: one `fs.watch` per directory, attached by the index walk as it lists each directory (the builder's
 * {@link IndexObserver}), so watching costs no second walk and no change after a listing is missed
 * (docs/ARCHITECTURE.md, "Watching"). It is given only the roots that change in place (folders: a git root's tree
 * changes only with a new commit, which the git source announces). Events go through an {@link EventBatcher};
 * polling (`polling.ts`) replaces the native watches of a root under `--poll`, and when the OS refuses more of them;
 * each root's own identity is checked by {@link RootChecks}.
 */
import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';

import type { IndexObserver } from '../index/build.js';
import { regionContains } from '../index/region.js';
import type { RootSpec } from '../index/types.js';
import type { Logger } from '../log.js';
import { EventBatcher } from './batch.js';
import { eventPath, isIgnoredEventName, type NameSeparators, type WatchEvent } from './classify.js';
import { FALLBACK_POLL_MS, type IndexedFile, notePolledDir, type PolledDir, pollRoot } from './polling.js';
import { RootChecks } from './roots.js';

export interface WatcherOptions {
  /** The roots to watch, each with its index among the configured roots. */
  readonly roots: readonly { readonly index: number; readonly spec: RootSpec }[];
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
interface WatchedDir extends PolledDir {
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
}

/** Where a directory watch keeps the directory it watches. */
const DIR_OF = Symbol('skills-serve.watchedDir');
type WatchingFsWatcher = FSWatcher & { [DIR_OF]?: WatchedDir };

interface RootWatch {
  readonly index: number;
  polling: boolean;
  readonly dirs: Map<string, WatchedDir>;
}

/** Watches the roots until {@link TreeWatcher.close}; attach it to the builder as its observer. */
export class TreeWatcher implements IndexObserver {
  readonly #options: WatcherOptions;
  readonly #roots = new Map<number, RootWatch>();
  readonly #batcher: EventBatcher;
  readonly #rootChecks: RootChecks;
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
    for (const { index } of options.roots)
      this.#roots.set(index, { index, polling: options.pollMs !== undefined, dirs: new Map() });
    this.#batcher = new EventBatcher(options.onBatch, options.logger);
    this.#rootChecks = new RootChecks(
      options.roots,
      (rootIndex) => this.#push({ rootIndex, kind: 'rescan', rel: '' }),
      options.logger,
    );
  }

  /** Starts the root checks (and the poll timer, when polling). Directory watches come from the walk. */
  start(): void {
    this.#rootChecks.start((rootIndex) => this.#roots.get(rootIndex)?.polling === false);
    if (this.#rootsPolled() > 0) this.#startPolling();
  }

  /** How roots are watched now (`native`, `polling`, or `mixed` after a fallback). */
  get mode(): 'native' | 'polling' | 'mixed' {
    const polling = this.#rootsPolled();
    return polling === 0 ? 'native' : polling === this.#roots.size ? 'polling' : 'mixed';
  }

  /** Number of directories watched (or polled). */
  get directories(): number {
    let count = 0;
    for (const root of this.#roots.values()) count += root.dirs.size;
    return count;
  }

  /** Stops every watch and timer. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#batcher.close();
    this.#rootChecks.close();
    clearTimeout(this.#pollTimer);
    for (const root of this.#roots.values()) {
      for (const dir of root.dirs.values()) dir.watcher?.close();
      root.dirs.clear();
    }
  }

  /** {@link IndexObserver}: the walk is about to list `rel` (at `real`): watch it first. */
  directory(rootIndex: number, rel: string, real: string): void {
    const root = this.#roots.get(rootIndex);
    if (root === undefined || this.#closed) return;
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
    if (root.polling) notePolledDir(dir);
    else if (dir.watcher === undefined) dir.watcher = this.#watchDir(dir);
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
    const root = this.#roots.get(rootIndex);
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
    this.#rootChecks.resolved(rootIndex, real);
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
    this.#rootChecks.stopWatchingParent(root.index);
    const pollMs = this.#options.pollMs ?? FALLBACK_POLL_MS;
    const spec = this.#options.roots.find((candidate) => candidate.index === root.index)?.spec;
    this.#options.logger.warn(
      { event: 'watch-fallback', root: spec?.dir, code, pollMs, hint: LIMIT_HINTS[code] },
      `the OS refused more file watches (${code}): ${LIMIT_HINTS[code] ?? code}. Polling this root every ${pollMs} ms instead; changes are still followed.`,
    );
    this.#push({ rootIndex: root.index, kind: 'rescan', rel: '' });
    this.#startPolling();
  }

  #rootsPolled(): number {
    let polling = 0;
    for (const root of this.#roots.values()) if (root.polling) polling++;
    return polling;
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

  /** One polling pass over every polled root. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      for (const root of this.#roots.values()) {
        if (!root.polling || this.#closed) continue;
        await pollRoot(root.index, root.dirs, this.#options.files(root.index), (event) => this.#push(event));
      }
    } finally {
      this.#polling = false;
    }
  }

  #push(event: WatchEvent): void {
    if (!this.#closed) this.#batcher.push(event);
  }
}
