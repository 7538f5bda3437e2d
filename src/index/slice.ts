/**
 * Cooperative time slicing for the index's synchronous passes (walk, hashing, assembly): requests keep being
 * answered while a large catalog is built (issue "Performance": the event loop is never blocked > 50 ms).
 */

/** Longest stretch of synchronous work before yielding to the event loop (ms). */
export const SLICE_MS = 15;

/**
 * Returns a function to await between units of synchronous work: it yields to the event loop (letting pending I/O
 * callbacks and requests run) once {@link SLICE_MS} have passed since the last yield, and returns at once otherwise.
 */
export function createSlicer(): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
}
