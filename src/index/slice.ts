/**
 * Cooperative time slicing for the index's synchronous passes (walk, hashing, assembly): requests keep being
 * answered while a large catalog is built (issue "Performance": the event loop is never blocked > 50 ms).
 */

/** Longest stretch of synchronous work before yielding to the event loop (ms). */
export const SLICE_MS = 15;

/**
 * Returns a function to await between units of synchronous work: it yields to the event loop (letting pending I/O
 * callbacks and requests run) once `sliceMs` have passed since the last yield, and returns at once otherwise.
 *
 * @param sliceMs the longest stretch between yields (ms); {@link SLICE_MS} unless given.
 */
export function createSlicer(sliceMs = SLICE_MS): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
}
