/**
 * Batching of watch events (docs/ARCHITECTURE.md, "Watching": debounce and overflow): events are collected until
 * {@link DEBOUNCE_MS} of quiet, or at most {@link MAX_BATCH_WAIT_MS}, then handed on in arrival order. The kernel
 * drops events when its queue fills and `fs.watch` does not say so, so a batch of {@link OVERFLOW_SUSPECT_EVENTS}
 * events or more also asks for a rescan of every root it touched.
 */
import type { Logger } from '../log.js';
import type { WatchEvent } from './classify.js';

/** Quiet time after the last event before a batch is handed over (ms). */
export const DEBOUNCE_MS = 40;
/** Longest a batch waits while events keep arriving (ms). */
export const MAX_BATCH_WAIT_MS = 400;
/** A batch this large may hide dropped events: its roots are rescanned. */
export const OVERFLOW_SUSPECT_EVENTS = 8192;

/** Collects events into debounced batches. */
export class EventBatcher {
  readonly #onBatch: (events: WatchEvent[]) => void;
  readonly #logger: Logger;
  #batch: WatchEvent[] = [];
  #quietTimer: NodeJS.Timeout | undefined;
  #maxTimer: NodeJS.Timeout | undefined;
  #closed = false;

  /**
   * @param onBatch receives each batch, in arrival order.
   * @param logger told when a batch looks like an overflow (`watch-overflow`, info).
   */
  constructor(onBatch: (events: WatchEvent[]) => void, logger: Logger) {
    this.#onBatch = onBatch;
    this.#logger = logger;
  }

  /** Adds one event to the batch being collected. Ignored once closed. */
  push(event: WatchEvent): void {
    if (this.#closed) return;
    this.#batch.push(event);
    clearTimeout(this.#quietTimer);
    this.#quietTimer = setTimeout(() => this.#flush(), DEBOUNCE_MS);
    this.#maxTimer ??= setTimeout(() => this.#flush(), MAX_BATCH_WAIT_MS);
  }

  /** Drops what was collected and stops the timers. Idempotent. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#quietTimer);
    clearTimeout(this.#maxTimer);
    this.#batch = [];
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
      this.#logger.info(
        { event: 'watch-overflow', events: batch.length },
        'a burst of changes may have overflowed the event queue; rescanning',
      );
      for (const rootIndex of roots) batch.push({ rootIndex, kind: 'rescan', rel: '' });
    }
    this.#onBatch(batch);
  }
}
