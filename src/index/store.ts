/**
 * The current snapshot, swapped atomically (docs/ARCHITECTURE.md, "Invariants": one immutable snapshot at a time).
 * Requests read `current` once; `skills/list` and friends wait for {@link SnapshotStore.ready} so that no client
 * ever sees a partial catalog.
 */
import { EMPTY_SNAPSHOT } from './snapshot.js';
import type { Snapshot } from './types.js';

/** Called after every swap with the previous and the new snapshot. */
export type SwapListener = (previous: Snapshot, next: Snapshot) => void;

export class SnapshotStore {
  readonly #onListenerError: (error: unknown) => void;
  #current: Snapshot = EMPTY_SNAPSHOT;
  #listeners = new Set<SwapListener>();
  #resolveReady!: (snapshot: Snapshot) => void;
  readonly #ready: Promise<Snapshot> = new Promise((resolve) => {
    this.#resolveReady = resolve;
  });

  /**
   * @param onListenerError told about every error a swap listener throws (the runtime logs it): nothing thrown while
   *   announcing a change vanishes, and the other listeners still run.
   */
  constructor(onListenerError: (error: unknown) => void) {
    this.#onListenerError = onListenerError;
  }

  /** The snapshot being served now (generation 0, empty, before the first build completes). */
  get current(): Snapshot {
    return this.#current;
  }

  /** Resolves with the current snapshot once the first build has been swapped in. */
  async ready(): Promise<Snapshot> {
    await this.#ready;
    return this.#current;
  }

  /**
   * Makes `next` the current snapshot and tells every listener.
   * A listener that throws does not stop the others (its error goes to the constructor's `onListenerError`).
   */
  swap(next: Snapshot): void {
    const previous = this.#current;
    this.#current = next;
    this.#resolveReady(next);
    for (const listener of this.#listeners) {
      try {
        listener(previous, next);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Registers a swap listener; returns a function that removes it. */
  onSwap(listener: SwapListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
