/**
 * Root checks (docs/ARCHITECTURE.md, "Watching": roots): every {@link ROOT_CHECK_MS}, and at once when a root's parent
 * directory reports a change to the root's name, each root's real path and identity are compared with those it was
 * indexed under. A root replaced at once, removed, back, or a root link re-pointed (`ln -s new tmp && mv -T tmp
 * current`) asks for a rescan of that root.
 */
import { type FSWatcher, realpathSync, statSync, watch } from 'node:fs';
import path from 'node:path';

import type { RootSpec } from '../index/types.js';
import type { Logger } from '../log.js';

/** How often each root's real path and identity are checked (ms). */
export const ROOT_CHECK_MS = 500;

/** `real` + device, inode and birth time of a directory (inode numbers are reused at once), or `undefined`. */
export function rootIdentity(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    const stat = statSync(real);
    return stat.isDirectory() ? `${real}\0${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
  } catch {
    return undefined;
  }
}

interface CheckedRoot {
  readonly index: number;
  readonly spec: RootSpec;
  /** Real path and identity the root was indexed under (`undefined`: unusable then). */
  expected: string | undefined;
  /** A rescan was asked for and has not been resolved yet. */
  rescanPending: boolean;
  parentWatcher: FSWatcher | undefined;
}

/** Checks the watched roots until {@link RootChecks.close}. */
export class RootChecks {
  readonly #roots = new Map<number, CheckedRoot>();
  readonly #rescan: (rootIndex: number) => void;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /**
   * @param roots the watched roots with their root indexes.
   * @param rescan asks for a rescan of one root (its identity changed).
   */
  constructor(
    roots: readonly { index: number; spec: RootSpec }[],
    rescan: (rootIndex: number) => void,
    logger: Logger,
  ) {
    for (const { index, spec } of roots)
      this.#roots.set(index, { index, spec, expected: undefined, rescanPending: false, parentWatcher: undefined });
    this.#rescan = rescan;
    this.#logger = logger;
  }

  /**
   * Starts the periodic checks.
   *
   * @param watchParents also watch each root's parent directory for the root's name (native mode only).
   */
  start(watchParents: (rootIndex: number) => boolean): void {
    this.#timer = setInterval(() => {
      for (const root of this.#roots.values()) this.#check(root);
    }, ROOT_CHECK_MS);
    this.#timer.unref();
    for (const root of this.#roots.values()) if (watchParents(root.index)) this.#watchParent(root);
  }

  /** The builder resolved root `rootIndex` (again): its identity now is what later checks compare with. */
  resolved(rootIndex: number, real: string | undefined): void {
    const root = this.#roots.get(rootIndex);
    if (root === undefined) return;
    root.expected = real === undefined ? undefined : rootIdentity(root.spec.dir);
    root.rescanPending = false;
  }

  /** Stops watching the parent of root `rootIndex` (it is polled from now on). */
  stopWatchingParent(rootIndex: number): void {
    const root = this.#roots.get(rootIndex);
    root?.parentWatcher?.close();
    if (root !== undefined) root.parentWatcher = undefined;
  }

  /** Stops every check. Idempotent. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const root of this.#roots.values()) root.parentWatcher?.close();
  }

  #watchParent(root: CheckedRoot): void {
    const parent = path.dirname(root.spec.dir);
    const name = path.basename(root.spec.dir);
    if (parent === root.spec.dir) return;
    try {
      root.parentWatcher = watch(parent, { persistent: false }, (_kind, changed) => {
        if (changed === null || changed === name) this.#check(root);
      });
      root.parentWatcher.on('error', () => {
        root.parentWatcher?.close();
        root.parentWatcher = undefined;
      });
    } catch {
      // the periodic check still runs
    }
  }

  #check(root: CheckedRoot): void {
    if (this.#closed || root.rescanPending) return;
    const now = rootIdentity(root.spec.dir);
    if (now === root.expected) return;
    root.rescanPending = true;
    if (now === undefined)
      this.#logger.warn(
        { event: 'root-removed', root: root.spec.dir },
        'root was removed; its skills are withdrawn until it comes back',
      );
    else if (root.expected === undefined)
      this.#logger.info({ event: 'root-back', root: root.spec.dir }, 'root is back; rescanning it');
    else
      this.#logger.info(
        { event: 'root-replaced', root: root.spec.dir },
        'root was replaced (or a root link re-pointed); rescanning it',
      );
    this.#rescan(root.index);
  }
}
