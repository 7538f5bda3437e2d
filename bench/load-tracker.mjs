// The bookkeeping of `npm run bench:load` (bench/load.mjs), kept free of I/O so that it can be tested on its own
// (test/unit/load-tracker.test.ts): the history of digests each server published per URI, the verdict on every
// read, percentiles, the leak check over RSS and descriptor samples, and the seeded random numbers of the churn (shared
// with test/e2e/faults-rebuild.test.ts).

/**
 * The digests one server published per URI, as its answers showed them, with when each observation was asked for
 * and answered (ms, any monotonic clock); plus the moments a notification said a URI had changed.
 *
 * A read (sent at `sentAt`, returning bytes with digest D) is judged:
 * - `ok`: D was published for the URI, and not known to be replaced when the read was sent;
 * - `stale`: D was published, then an answer that arrived before the read was sent showed another digest for the
 *   URI (or a `notifications/resources/updated` for it arrived), and D was never seen published again after that;
 * - `unobserved`: no answer ever showed D for the URI, but the tree's writer did write those bytes there (a version
 *   published and replaced between two observations: consistent, just not seen);
 * - `foreign`: bytes the server never published and nobody ever wrote at that path: a torn or misattributed read.
 * `stale` and `foreign` are mismatches. Content is never repeated by the churn, so a replaced digest cannot
 * legitimately come back.
 */
export class PublishHistory {
  /** uri → [{ digest, requestedAt, answeredAt }] (a notification is a digest-less observation). */
  #byUri = new Map();

  /** Records that an answer asked at `requestedAt` and received at `answeredAt` showed `digest` for `uri`. */
  observe(uri, digest, requestedAt, answeredAt) {
    let list = this.#byUri.get(uri);
    if (list === undefined) this.#byUri.set(uri, (list = []));
    list.push({ digest, requestedAt, answeredAt });
  }

  /**
   * Records `notifications/resources/updated` for `uri`, received at `at`: whatever was published before is replaced.
   */
  replaced(uri, at) {
    this.observe(uri, undefined, at, at);
  }

  /** Whether any answer showed `digest` for `uri`. */
  has(uri, digest) {
    return (this.#byUri.get(uri) ?? []).some((item) => item.digest === digest);
  }

  /**
   * @param {string} uri
   * @param {string} digest `sha256:<hex>` of the bytes read.
   * @param {number} sentAt when the read was sent.
   * @param {(uri: string, digest: string) => boolean} written whether the tree's writer ever wrote those bytes there.
   * @returns {'ok' | 'stale' | 'unobserved' | 'foreign'}
   */
  judge(uri, digest, sentAt, written) {
    const seen = this.#byUri.get(uri) ?? [];
    const mine = seen.filter((item) => item.digest === digest);
    if (mine.length === 0) return written(uri, digest) ? 'unobserved' : 'foreign';
    for (const replacement of seen) {
      if (replacement.digest === digest || replacement.answeredAt >= sentAt) continue;
      const publishedBefore = mine.some((item) => item.answeredAt <= replacement.requestedAt);
      const seenAgain = mine.some((item) => item.answeredAt > replacement.requestedAt);
      if (publishedBefore && !seenAgain) return 'stale';
    }
    return 'ok';
  }
}

/** The `p`-quantile (0..1) of `values` (nearest rank), or NaN for none. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * The leak check: the run's samples split in thirds by time; the first third is warm-up; the mean of the last third
 * may exceed the mean of the second third by at most `max(relative × second, absolute)`.
 *
 * @param {{ at: number, value: number }[]} samples in time order.
 * @param {{ relative: number, absolute: number }} tolerance
 * @returns {{ second: number, last: number, growth: number, allowed: number, ok: boolean }} (growth = last − second)
 */
export function leakCheck(samples, tolerance) {
  if (samples.length < 6)
    return { second: Number.NaN, last: Number.NaN, growth: Number.NaN, allowed: Number.NaN, ok: false };
  const start = samples[0].at;
  const span = samples.at(-1).at - start;
  const third = (index) =>
    samples
      .filter((sample) => Math.min(2, Math.floor(((sample.at - start) / span) * 3)) === index)
      .map((sample) => sample.value);
  const second = mean(third(1));
  const last = mean(third(2));
  const allowed = Math.max(tolerance.relative * second, tolerance.absolute);
  return { second, last, growth: last - second, allowed, ok: last - second <= allowed };
}

/**
 * A seeded xorshift32 generator: the same sequence for the same seed, so churn is the same on every run.
 *
 * @param {number} seed any number (0 is taken as 1).
 * @returns {() => number} the next value in [0, 1).
 */
export function seededRandom(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}
