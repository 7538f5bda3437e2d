/**
 * Reads the output of `git cat-file --batch` as it streams: a header line per object, then exactly `size` bytes,
 * then a newline. Memory stays bounded by one chunk of the pipe, however large the blob.
 */
import type { Readable } from 'node:stream';

/** A pull reader over a byte stream: lines and exact byte counts. */
export class BatchReader {
  readonly #iterator: AsyncIterator<Buffer>;
  #buffer: Buffer = Buffer.alloc(0);

  /** @param stream the stream to read (git's stdout). */
  constructor(stream: Readable) {
    this.#iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** Pulls one more chunk into the buffer. @throws Error at the end of the stream. */
  async #fill(): Promise<void> {
    const next = await this.#iterator.next();
    if (next.done === true) throw new Error('git cat-file output ended early');
    this.#buffer = this.#buffer.length === 0 ? next.value : Buffer.concat([this.#buffer, next.value]);
  }

  /**
   * Reads up to the next `\n` (not included).
   *
   * @throws Error when the stream ends first or the line passes 4 KiB.
   */
  async readLine(): Promise<string> {
    for (;;) {
      const end = this.#buffer.indexOf(0x0a);
      if (end !== -1) {
        const line = this.#buffer.subarray(0, end).toString('utf8');
        this.#buffer = this.#buffer.subarray(end + 1);
        return line;
      }
      if (this.#buffer.length > 4096) throw new Error('git cat-file header line is too long');
      await this.#fill();
    }
  }

  /**
   * Passes exactly `size` bytes to `sink`, chunk by chunk, in order.
   *
   * @param size byte count.
   * @param sink receives each chunk (awaited before the next is read).
   * @throws Error when the stream ends first.
   */
  async readExact(size: number, sink: (chunk: Buffer) => Promise<void>): Promise<void> {
    let left = size;
    while (left > 0) {
      if (this.#buffer.length === 0) await this.#fill();
      const take = Math.min(left, this.#buffer.length);
      const chunk = this.#buffer.subarray(0, take);
      this.#buffer = this.#buffer.subarray(take);
      left -= take;
      await sink(chunk);
    }
  }
}
