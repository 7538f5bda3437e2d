/**
 * The live index: one serialized queue of rebuilds over an {@link IndexBuilder}, each swapped into the
 * {@link SnapshotStore} atomically. Filesystem events are classified when their rebuild runs, against the builder's
 * state as it is then, so an event is never judged by a state that a running rebuild is about to change.
 */
import type { IndexBuilder } from '../index/build.js';
import type { Region } from '../index/region.js';
import type { ServedFile } from '../index/snapshot.js';
import type { SnapshotStore } from '../index/store.js';
import type { Snapshot } from '../index/types.js';
import { regionsOf, type WatchEvent } from './classify.js';

/** Called after each rebuild with the new snapshot, how long the rebuild took (ms) and how many events it applied. */
export type RebuildListener = (snapshot: Snapshot, elapsedMs: number, events: number) => void;

/** Called when regions are to be rebuilt again after a transient failure, with the reasons and the delay (ms). */
export type RetryListener = (reasons: readonly string[], delayMs: number) => void;

/**
 * First delay before a region that met a transient failure is rebuilt again (ms); doubles up to {@link MAX_RETRY_MS}.
 */
export const FIRST_RETRY_MS = 100;
/** Longest delay between retries (ms). */
export const MAX_RETRY_MS = 5000;

export class LiveIndex {
  readonly #builder: IndexBuilder;
  readonly #store: SnapshotStore;
  readonly #onRebuilt: RebuildListener;
  readonly #onRetry: RetryListener;
  #pending: WatchEvent[] = [];
  #pendingRegions: Region[] = [];
  /** Real paths to hash again whatever their metadata says, applied by the rebuild that takes them. */
  #pendingDistrust: string[] = [];
  /** Regions waiting for the retry timer (each failure adds to them; the timer is not reset while armed). */
  #retryRegions: Region[] = [];
  #retryDelay = FIRST_RETRY_MS;
  #retryTimer: NodeJS.Timeout | undefined;
  #full = false;
  #scheduled: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();

  constructor(
    builder: IndexBuilder,
    store: SnapshotStore,
    onRebuilt: RebuildListener,
    onRetry: RetryListener = () => undefined,
  ) {
    this.#builder = builder;
    this.#store = store;
    this.#onRebuilt = onRebuilt;
    this.#onRetry = onRetry;
  }

  /** Cancels a scheduled retry. */
  close(): void {
    clearTimeout(this.#retryTimer);
  }

  /** Builds every root and swaps the result in. Resolves when it is current. */
  buildAll(): Promise<void> {
    this.#full = true;
    return this.#schedule();
  }

  /**
   * Queues filesystem events; resolves once a snapshot that reflects them is current.
   *
   * @param events events in arrival order (any roots).
   */
  apply(events: readonly WatchEvent[]): Promise<void> {
    this.#pending.push(...events);
    return this.#schedule();
  }

  /**
   * Re-indexes the skill holding `file` after a read found its bytes no longer match the published digest; the file
   * is hashed again whatever its metadata says. Resolves once the new snapshot is current.
   */
  reindexFile(file: ServedFile): Promise<void> {
    // Handed to the builder by the rebuild that takes this event, not now: a rebuild already running would clear it
    // without having walked the file.
    this.#pendingDistrust.push(file.path);
    return this.apply([{ rootIndex: file.top.rootIndex, kind: 'change', rel: file.rel }]);
  }

  #schedule(): Promise<void> {
    if (this.#scheduled !== undefined) return this.#scheduled;
    const run = this.#tail.then(() => this.#run());
    this.#scheduled = run;
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #run(): Promise<void> {
    this.#scheduled = undefined;
    const events = this.#pending;
    const full = this.#full;
    const retried = this.#pendingRegions;
    this.#pending = [];
    this.#pendingRegions = [];
    for (const realPath of this.#pendingDistrust.splice(0)) this.#builder.distrust(realPath);
    this.#full = false;
    const started = performance.now();
    let snapshot: Snapshot;
    if (full) {
      snapshot = await this.#builder.buildAll();
    } else {
      const regions: Region[] = [...regionsOf(events, (rootIndex) => this.#builder.candidates(rootIndex)), ...retried];
      // A change behind a symlink is reported at the link target's own path: rebuild the regions that link to it.
      for (const event of events) regions.push(...this.#builder.regionsLinkedTo(event.rootIndex, event.rel));
      if (regions.length === 0) return;
      snapshot = await this.#builder.rebuild(regions);
    }
    this.#store.swap(snapshot);
    this.#onRebuilt(snapshot, performance.now() - started, events.length);
    this.#scheduleRetries();
  }

  /** Regions abandoned on a transient failure are rebuilt again after a delay that doubles while they keep failing. */
  #scheduleRetries(): void {
    const retries = this.#builder.takeRetries();
    if (retries.length === 0) {
      this.#retryDelay = FIRST_RETRY_MS;
      return;
    }
    const delay = this.#retryDelay;
    this.#retryDelay = Math.min(MAX_RETRY_MS, delay * 2);
    this.#onRetry(
      retries.map((retry) => retry.reason),
      delay,
    );
    this.#retryRegions.push(...retries.map((retry) => retry.region));
    // One timer for every region waiting: a later failure joins it instead of replacing it (and its regions).
    if (this.#retryTimer !== undefined) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#pendingRegions.push(...this.#retryRegions.splice(0));
      this.#schedule().catch(() => undefined);
    }, delay);
    this.#retryTimer.unref();
  }
}
