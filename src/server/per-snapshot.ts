/**
 * What is worked out from a snapshot once and reused while it is served: list pages, views, prompt names,
 * instructions. Kept beside the snapshot (a `WeakMap`), so it goes when the snapshot does.
 */
import type { Snapshot } from '../index/types.js';

/** Values derived from a snapshot, one per snapshot and key (a view, a page, … ; `undefined` for just one). */
export class PerSnapshot<V, K = undefined> {
  readonly #values = new WeakMap<Snapshot, Map<K, V>>();

  /**
   * The value for `snapshot` and `key`: computed by `compute` the first time, then the same value.
   *
   * @throws whatever `compute` throws (nothing is kept then).
   */
  get(snapshot: Snapshot, key: K, compute: () => V): V {
    let byKey = this.#values.get(snapshot);
    if (byKey === undefined) this.#values.set(snapshot, (byKey = new Map<K, V>()));
    if (byKey.has(key)) return byKey.get(key) as V;
    const value = compute();
    byKey.set(key, value);
    return value;
  }
}
