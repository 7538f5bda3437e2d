/**
 * The watcher: one `fs.watch` per directory the index walk lists (the builder's {@link IndexObserver}), so watching
 * costs no second walk (docs/ARCHITECTURE.md, "Watching"). The walk only records each directory; its watch is set
 * once the snapshot of that walk is served ({@link TreeWatcher.watchListed}), and then the directory is checked for
 * what changed between its listing and its watch, so the first answer does not wait for the watches and no change is
 * missed. It is given only the roots that change in place (folders: a git root's tree changes only with a new commit,
 * which the git source announces). Events go through an {@link EventBatcher}; polling (`polling.ts`) replaces the
 * native watches of a root under `--poll`, and when the OS refuses more of them; each root's own identity is checked
 * by {@link RootChecks}.
 */
import { type FSWatcher, lstatSync, readdirSync, statSync, watch } from 'node:fs';
import path from 'node:path';

import type { IndexObserver } from '../index/build.js';
import { RACY_WINDOW_MS } from '../index/record.js';
import { regionContains } from '../index/region.js';
import { createSlicer } from '../index/slice.js';
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

/**
 * How far before a directory's listing a change time counts as "since the listing" (ms): file system timestamps come
 * from a coarser clock than `Date.now()` (a tick of a few milliseconds; FAT's mtimes 2 s), the racy window of
 * `index/record.ts`.
 */
const CHANGED_SINCE_SLACK_MS = RACY_WINDOW_MS;

/**
 * Longest stretch of watch setting before yielding to the event loop (ms): shorter than the walk's slices, since it
 * runs while hosts page through the first listing.
 */
export const WATCH_SLICE_MS = 1;

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
  /** When a walk listed it while it had no watch (`Date.now()`), until its watch is set; else 0. */
  listedMs: number;
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
  /** Directories listed without a watch, in listing order: {@link TreeWatcher.watchListed} sets their watches. */
  #unwatched: WatchedDir[] = [];
  #watching: Promise<void> | undefined;
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

  /** Starts the root checks (and the poll timer, when polling). Directory watches come from the walk's listings. */
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
    this.#unwatched = [];
    this.#batcher.close();
    this.#rootChecks.close();
    clearTimeout(this.#pollTimer);
    for (const root of this.#roots.values()) {
      for (const dir of root.dirs.values()) dir.watcher?.close();
      root.dirs.clear();
    }
  }

  /**
   * {@link IndexObserver}: the walk is about to list `rel` (at `real`). Polled, it is `stat`ed now; watched natively,
   * a directory without a watch is noted with the time, and {@link TreeWatcher.watchListed} sets its watch later.
   */
  directory(rootIndex: number, rel: string, real: string): void {
    const root = this.#roots.get(rootIndex);
    if (root === undefined || this.#closed) return;
    let dir = root.dirs.get(rel);
    if (dir !== undefined && (dir.real !== real || this.#diedSince(rootIndex, rel, dir.seq))) {
      dir.watcher?.close();
      dir = undefined;
    }
    if (dir === undefined) {
      dir = {
        root,
        rel,
        real,
        watcher: undefined,
        mark: this.#mark,
        seq: ++this.#seq,
        mtimeMs: 0,
        ino: 0,
        listedMs: 0,
      };
      root.dirs.set(rel, dir);
    }
    dir.mark = this.#mark;
    if (root.polling) notePolledDir(dir);
    else if (dir.watcher === undefined && dir.listedMs === 0) {
      dir.listedMs = Date.now();
      this.#unwatched.push(dir);
    }
  }

  /**
   * Sets the watch of every directory listed without one (in listing order, yielding to the event loop every
   * {@link WATCH_SLICE_MS}), and once each is set, checks what changed in it since its listing: the directory itself
   * and each entry not watched on its own are `stat`ed, and a change time from {@link CHANGED_SINCE_SLACK_MS} before
   * the listing on is an event, batched like the watches' own. Called once a snapshot is served, so the first listing
   * does not wait for the watches (docs/ARCHITECTURE.md, "Watching").
   *
   * @returns resolves when no listed directory is left without its watch (a call while a pass runs joins it).
   */
  watchListed(): Promise<void> {
    this.#watching ??= this.#watchListed().finally(() => {
      this.#watching = undefined;
    });
    return this.#watching;
  }

  async #watchListed(): Promise<void> {
    // Answers the swap released (the first listing's pages) are written first.
    await new Promise((resolve) => setImmediate(resolve));
    const slice = createSlicer(WATCH_SLICE_MS);
    while (this.#unwatched.length > 0 && !this.#closed) {
      const listed = this.#unwatched;
      this.#unwatched = [];
      for (const dir of listed) {
        if (this.#closed) return;
        const { root } = dir;
        const since = dir.listedMs - CHANGED_SINCE_SLACK_MS;
        dir.listedMs = 0;
        if (root.polling || root.dirs.get(dir.rel) !== dir || dir.watcher !== undefined) continue;
        dir.watcher = this.#watchDir(dir);
        if (!root.polling) this.#changedSince(dir, since);
        await slice();
      }
    }
  }

  /**
   * Pushes an event for what changed in `dir` from `sinceMs` on (its watch is set: later changes are its own events).
   * The directory's own change time covers names added, removed or renamed in it; each entry's, a file written,
   * replaced or re-linked. Subdirectories the walk listed are checked on their own; ignored names are skipped, as the
   * watches skip them.
   */
  #changedSince(dir: WatchedDir, sinceMs: number): void {
    const { root, rel, real } = dir;
    const push = (kind: 'change' | 'rename', at: string): void => this.#push({ rootIndex: root.index, kind, rel: at });
    // Gone is a change; a directory the walk could not read either (EACCES) is not one: a change of its permissions
    // is a change time, and walking it again would only queue it again.
    let entries;
    try {
      const stat = statSync(real);
      if (!stat.isDirectory() || stat.ctimeMs >= sinceMs) push('rename', rel);
      entries = readdirSync(real, { withFileTypes: true });
    } catch (error) {
      if (isGone(error)) push('rename', rel);
      return;
    }
    const prefix = real.endsWith(path.sep) ? real : real + path.sep;
    for (const entry of entries) {
      const name = entry.name;
      if (isIgnoredEventName(name, SEPARATORS)) continue;
      const at = rel === '' ? name : `${rel}/${name}`;
      const full = prefix + name;
      if (entry.isDirectory() && root.dirs.get(at)?.real === full) continue;
      let changed: boolean;
      try {
        changed = lstatSync(full).ctimeMs >= sinceMs;
      } catch (error) {
        changed = isGone(error);
      }
      if (changed) push(entry.isFile() ? 'change' : 'rename', at);
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
    // Every watched directory is visited (a region's are not kept apart), so the visit allocates nothing: at 10,000
    // skills (40,000 directories) entry pairs and a prefix string per directory were most of an edit's garbage.
    const prefix = `${rel}/`;
    root.dirs.forEach((dir, dirRel) => {
      if (dir.mark >= mark || !(rel === '' || dirRel === rel || dirRel.startsWith(prefix))) return;
      dir.watcher?.close();
      root.dirs.delete(dirRel);
    });
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

/** Whether a file system error says the path is no longer there (ENOENT, ENOTDIR). */
function isGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
