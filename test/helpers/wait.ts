/**
 * Bounded polling, the one synchronization tests use instead of sleeps: a condition is polled until it holds or a
 * bound passes, and a timeout says what was awaited.
 */

/** Default bound of every wait (ms); generous for slow CI machines, never reached when things work. */
export const WAIT_MS = 15_000;

export interface WaitOptions {
  /** Give up after this long (ms). */
  readonly timeoutMs?: number;
  /** Pause between polls (ms). */
  readonly intervalMs?: number;
  /** Explains the last failed poll in the timeout error. */
  readonly describe?: () => string;
}

/**
 * Polls `predicate` until it returns `true`; rejects after `timeoutMs`. A predicate that throws counts as "not yet"
 * (its last error is reported on timeout).
 *
 * @param predicate the condition (sync or async).
 * @param options bounds and a description of what was awaited.
 * @throws Error `waitFor: not reached within <timeoutMs> ms: <description>` once the bound passes.
 */
export async function waitFor(predicate: () => boolean | Promise<boolean>, options: WaitOptions = {}): Promise<void> {
  const { timeoutMs = WAIT_MS, intervalMs = 25 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await predicate()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever was thrown, as String() prints it
      const why = options.describe?.() ?? (lastError === undefined ? 'the condition stayed false' : String(lastError));
      throw new Error(`waitFor: not reached within ${timeoutMs} ms: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
